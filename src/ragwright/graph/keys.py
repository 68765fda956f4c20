"""Entity resolution, stage 1: the normalized key that makes two mentions the same entity.

Conservative on purpose: it only removes differences that never change what is named
(Unicode form, case, whitespace, a possessive, surrounding punctuation, a leading article).
Near-duplicates beyond that ("IBM" / "I.B.M.", "Obama" / "Barack Obama") are stage 2's soft
synonym links, which can be undone; a key merge cannot.
"""

from __future__ import annotations

import re
import unicodedata

_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_SPACES = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^the\s+")


def entity_key(surface: str) -> str:
    """The normalized key of an entity's surface form; ``""`` when nothing names anything."""
    text = unicodedata.normalize("NFKC", surface).casefold()
    text = _SPACES.sub(" ", text).strip()
    text = _EDGE_PUNCTUATION.sub("", text)
    text = _POSSESSIVE.sub("", text)
    text = _EDGE_PUNCTUATION.sub("", text)
    # Punctuation the article hid ('the "Titanic"') goes too.
    stripped = _EDGE_PUNCTUATION.sub("", _LEADING_ARTICLE.sub("", text))
    return stripped or text
