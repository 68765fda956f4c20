"""`python -m ragwright` is the `ragwright` command."""

from ragwright.cli import main

try:
    main()
finally:
    # CPython remembers a KeyboardInterrupt that ended any string `exec` (dataclasses build their
    # methods that way on import) even when the command caught it, and under `-m` then kills
    # itself with SIGINT at exit instead of exiting with the command's code (130 after a
    # reported Ctrl-C). The next string `exec` forgets it; an uncaught interrupt still counts,
    # as runpy records it again on the way out.
    exec("")
