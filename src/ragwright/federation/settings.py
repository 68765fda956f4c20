"""The ``[federation]`` table of ragwright.toml: the indexes `serve` and `mcp` search as one.

    [federation]
    members = [
        "team=/srv/team/.ragwright",                 # NAME=PATH, a PATH or a URL
        { name = "personal", index = "postgresql://me@db/notes", collection = "default" },
    ]
    timeout = 5.0     # seconds a member has to answer; a late one is left out (with a warning)
    strict = false    # true: a failed or late member fails the whole search instead

Without ``members`` (or without the table) there is no federation. A wrong value is a
`ConfigError` naming the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.federation.members import MemberSpec, unique_members

#: Seconds a member has to answer by default: ample for a local or LAN store, short enough
#: that one stuck server does not hold every request.
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 3600.0
KEYS = ("members", "timeout", "strict")


@dataclass(frozen=True)
class FederationSettings:
    """Which members, how long each may take, and whether a failing one fails the search."""

    members: tuple[MemberSpec, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    strict: bool = False

    def __post_init__(self) -> None:
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise ConfigError(f"timeout must be a number of seconds, not {timeout!r}")
        if not math.isfinite(timeout) or not 0 < timeout <= MAX_TIMEOUT:
            raise ConfigError(f"timeout must be above 0 and at most {MAX_TIMEOUT:g} seconds")
        object.__setattr__(self, "timeout", float(timeout))
        if not isinstance(self.strict, bool):
            raise ConfigError(f"strict must be true or false, not {self.strict!r}")
        if self.members:
            object.__setattr__(self, "members", unique_members(self.members))

    @property
    def configured(self) -> bool:
        """Whether the table names members (a federation to serve)."""
        return bool(self.members)

    @classmethod
    def from_config(cls, config: Config) -> FederationSettings:
        table = config.section("federation")
        where = f"{config.where} [federation]"
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown setting {unknown[0]!r}; known: {', '.join(KEYS)}")
        values: dict[str, Any] = {}
        if "members" in table:
            values["members"] = _members(table["members"], where)
        for key in ("timeout", "strict"):
            if key in table:
                values[key] = table[key]
        try:
            return cls(**values)
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None


def _members(value: object, where: str) -> tuple[MemberSpec, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ConfigError(f"{where}: members must be a list of indexes, not {value!r}")
    return tuple(
        MemberSpec.from_value(item, f"{where} members[{number}]")
        for number, item in enumerate(value)
    )
