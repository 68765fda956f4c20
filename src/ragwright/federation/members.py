"""Members of a federation: which index, under which name.

A member is named on the command line as ``PATH``, ``URL`` or ``NAME=PATH`` (``NAME=URL``), and
in ``ragwright.toml`` the same way or as a table with its collection and embedder. The name is
what every hit and citation of a federated search carries, so it must be unique; by default it
is the directory's name (the folder holding it, for a default ``.ragwright`` directory) or the
database's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ragwright.errors import ConfigError
from ragwright.models import DEFAULT_COLLECTION, check_collection_name
from ragwright.stores import display_location, is_url

#: A member's name: short, and safe in URLs, JSON and a terminal.
MEMBER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: What a ``[federation] members`` table may say of one member.
MEMBER_KEYS = ("name", "index", "collection", "embedder")


@dataclass(frozen=True)
class MemberSpec:
    """One member: its name, location (a directory or a store URL), collection and embedder
    (None: the one the index was built with)."""

    name: str
    location: str
    collection: str = DEFAULT_COLLECTION
    embedder: str | None = None

    def __post_init__(self) -> None:
        if not MEMBER_NAME.match(self.name):
            raise ConfigError(
                f"federation member name {self.name!r}: use letters, digits, '.', '-' and '_' "
                "(at most 64), e.g. --index team=./team-index"
            )
        if not self.location.strip():
            raise ConfigError(f"federation member {self.name!r} names no index")
        check_collection_name(self.collection)

    @property
    def shown(self) -> str:
        """The location as it may be shown (a URL's password masked)."""
        return display_location(self.location)

    @classmethod
    def parse(cls, text: str, *, collection: str = DEFAULT_COLLECTION) -> MemberSpec:
        """``PATH``, ``URL``, ``NAME=PATH`` or ``NAME=URL``. A URL's own ``=`` (in its query)
        never reads as a name: only a leading ``NAME=`` that is a valid name does."""
        name, _, rest = text.partition("=")
        if rest and not is_url(text) and MEMBER_NAME.match(name):
            return cls(name, rest, collection)
        return cls(default_name(text), text, collection)

    @classmethod
    def from_value(cls, value: object, where: str) -> MemberSpec:
        """A member as ``[federation] members`` lists it: a string (see `parse`) or a table
        with ``index`` and, optionally, ``name``, ``collection`` and ``embedder``."""
        try:
            if isinstance(value, str):
                return cls.parse(value)
            if isinstance(value, Mapping):
                return cls._from_table(value, where)
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None
        raise ConfigError(f"{where}: a member is a string or a table, not {value!r}")

    @classmethod
    def _from_table(cls, table: Mapping[str, Any], where: str) -> MemberSpec:
        unknown = sorted(set(table) - set(MEMBER_KEYS))
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r}; known: {', '.join(MEMBER_KEYS)}")
        for key in MEMBER_KEYS:
            if key in table and not isinstance(table[key], str):
                raise ConfigError(f"{key} must be a string, not {table[key]!r}")
        if "index" not in table:
            raise ConfigError("a member table needs index = PATH or URL")
        location = table["index"]
        return cls(
            table.get("name") or default_name(location),
            location,
            table.get("collection", DEFAULT_COLLECTION),
            table.get("embedder"),
        )


def default_name(location: str) -> str:
    """A member's name when none is given: the database of a URL, else the directory's name
    (the name of the folder holding a ``.ragwright`` directory)."""
    if is_url(location):
        database = urlsplit(location).path.strip("/")
        name = database or urlsplit(location).hostname or "index"
    else:
        path = Path(location).resolve()
        name = path.name if not path.name.startswith(".") else path.parent.name
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", name).lstrip("._-")[:64]
    return cleaned or "index"


def unique_members(members: Iterable[MemberSpec]) -> tuple[MemberSpec, ...]:
    """The members, refused when two share a name (hits could not say where they came from)
    or when there are fewer than one."""
    listed = tuple(members)
    if not listed:
        raise ConfigError("a federation needs at least one member index")
    seen: dict[str, MemberSpec] = {}
    for member in listed:
        if member.name in seen:
            raise ConfigError(
                f"two federation members are named {member.name!r} ({seen[member.name].shown} "
                f"and {member.shown}): name them, e.g. --index team={seen[member.name].shown}"
            )
        seen[member.name] = member
    return listed
