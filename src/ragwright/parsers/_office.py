"""The ``office`` extra the Office and RTF parsers need, checked when a parser is built."""

from __future__ import annotations

import importlib

from ragwright.errors import MissingDependencyError

INSTALL = "pip install 'ragwright[office]'"


def require_office(module: str, what: str) -> None:
    """Import ``module`` (its library is used later, in ``parse``), so a missing ``office``
    extra is reported when the parser is built: `MissingDependencyError` naming ``what``."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(what, INSTALL) from error
