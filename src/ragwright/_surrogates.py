"""Lone surrogates: code points U+D800–U+DFFF that Python strings can hold (from a JSON
``"\\ud800"`` escape, or ``surrogateescape`` decoding) but UTF-8 cannot encode, so SQLite, the
embedders and every output would fail on them. They are refused where text comes in."""

from __future__ import annotations

import re

from ragwright.errors import ConfigError

_SURROGATE = re.compile("[\ud800-\udfff]")


def first_surrogate(text: str) -> int | None:
    """Where the first lone surrogate in ``text`` is, if any."""
    match = _SURROGATE.search(text)
    return match.start() if match else None


def refuse_surrogates(text: str, what: str) -> str:
    """``text``, or a `ConfigError` naming ``what`` when it holds a lone surrogate."""
    at = first_surrogate(text)
    if at is not None:
        raise ConfigError(
            f"{what} holds a lone surrogate (U+{ord(text[at]):04X} at position {at}), which is "
            "not text: send valid Unicode (UTF-8)"
        )
    return text
