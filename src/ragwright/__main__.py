"""`python -m ragwright` is the `ragwright` command."""

from ragwright.cli import main

main()
