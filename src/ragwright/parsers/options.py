"""Options that change how files are read (today: which JSON fields are text and metadata).

A parser class that takes options offers ``from_options(options)``; the registry builds it that
way when options are given, and the parser reports their ``spec`` (the options, as text) as its
``parse_settings``, which go into every file's ingest fingerprint, so changing the options
re-parses exactly the files they affect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ragwright.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ParserOptions:
    """``text_fields``: JSON fields (dotted paths, e.g. ``body`` or ``post.text``) whose values
    are a record's text; ``meta_fields``: fields copied into each record's metadata. Empty:
    records are rendered whole as ``path: value`` lines."""

    text_fields: tuple[str, ...] = ()
    meta_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in (*self.text_fields, *self.meta_fields):
            if not isinstance(name, str) or not name.strip() or ".." in name:
                raise ConfigError(f"a JSON field must be a name or dotted path, not {name!r}")

    @property
    def spec(self) -> str:
        return json.dumps(
            {"text_fields": list(self.text_fields), "meta_fields": list(self.meta_fields)},
            sort_keys=True,
        )

    @classmethod
    def from_spec(cls, spec: str) -> ParserOptions:
        raw = json.loads(spec)
        return cls(tuple(raw["text_fields"]), tuple(raw["meta_fields"]))
