"""The ontology that constrains LLM extraction: the entity types and relation types a model may
name. Its fingerprint is part of the extractor's id, so facts found under another ontology are
never mixed with these."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ragwright.errors import ConfigError

DEFAULT_ENTITY_TYPES = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "EVENT",
    "WORK",
    "PRODUCT",
    "CONCEPT",
    "OTHER",
)
DEFAULT_RELATION_TYPES = (
    "PART_OF",
    "LOCATED_IN",
    "MEMBER_OF",
    "WORKS_FOR",
    "CREATED_BY",
    "FOUNDED_BY",
    "RELATED_TO",
)
_TYPE_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,39}$")


@dataclass(frozen=True, slots=True)
class Ontology:
    """Entity and relation type names: upper case, letters, digits and underscores (a name
    given in another case is taken in upper case)."""

    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES
    relation_types: tuple[str, ...] = DEFAULT_RELATION_TYPES

    def __post_init__(self) -> None:
        for kind in ("entity_types", "relation_types"):
            names = tuple(str(name).strip().upper() for name in getattr(self, kind))
            bad = [name for name in names if not _TYPE_NAME.match(name)]
            if not names or bad or len(set(names)) != len(names):
                raise ConfigError(
                    f"ontology {kind} must be distinct names of letters, digits and "
                    f"underscores (at most 40, starting with a letter); got {list(names)}"
                )
            object.__setattr__(self, kind, names)

    @property
    def fingerprint(self) -> str:
        """12 hex digits of the sha256 of the types, in order."""
        canonical = json.dumps([self.entity_types, self.relation_types])
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def entity_type(self, name: object) -> str | None:
        """The ontology's entity type ``name`` names (in any case), if any."""
        return _member(name, self.entity_types)

    def relation_type(self, name: object) -> str | None:
        return _member(name, self.relation_types)


def _member(name: object, names: tuple[str, ...]) -> str | None:
    if not isinstance(name, str):
        return None
    wanted = name.strip().upper().replace(" ", "_").replace("-", "_")
    return wanted if wanted in names else None
