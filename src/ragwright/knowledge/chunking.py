"""`ChunkingConfig`: a chunker by registry name with its options, as a collection records it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragwright.chunkers import DEFAULT_CHUNKER


@dataclass(frozen=True)
class ChunkingConfig:
    """A chunker by registry name with its options, e.g. ``ChunkingConfig("recursive",
    {"size": 1000, "overlap": 100})``."""

    name: str = DEFAULT_CHUNKER
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return json.dumps({"name": self.name, "options": self.options}, sort_keys=True)

    @classmethod
    def from_spec(cls, spec: str) -> ChunkingConfig:
        raw = json.loads(spec)
        return cls(raw["name"], dict(raw.get("options", {})))  # no options: the defaults
