"""Document-level permissions: who a caller is, and who may read a document.

A *principal* is an opaque string naming a reader (``user:ana``, ``group:hr``; the prefix is a
convention, not parsed). A document carries the principals allowed to read it
(`Document.principals`): those its sync source gave, and those of the ``[[permissions]]`` rules
of ``ragwright.toml`` whose pattern matches its source path::

    [[permissions]]
    path = "hr/**"               # fnmatch over the source path; "*" also crosses "/"
    principals = ["group:hr"]

A document with no principals is everyone's. A `Caller` with principals reads the documents
listing one of them and everyone's; the unrestricted caller (`EVERYONE`, a local user who did
not say ``--as``) reads everything. The check is the `Readable` filter node, which each store
compiles into the query itself (see the stores' ``permissions`` modules), beside the user's
filter.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.filters import And, Filter, Readable

__all__ = ["EVERYONE", "Caller", "PermissionRule", "PermissionRules", "check_principal"]

#: The longest principal accepted (a key or a config value, not a document).
MAX_PRINCIPAL_CHARS = 256


def check_principal(value: object, where: str = "principal") -> str:
    """``value`` as a principal: a non-empty string without control characters."""
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_PRINCIPAL_CHARS
        or any(ord(c) < 32 for c in value)
    ):
        raise ConfigError(
            f"{where} must be a non-empty string of at most {MAX_PRINCIPAL_CHARS} printable "
            f"characters (such as 'group:hr'), got {value!r}"
        )
    return value.strip()


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking. ``principals`` None: unrestricted (reads every document); a tuple
    (even empty): reads everyone's documents and those listing one of them."""

    principals: tuple[str, ...] | None = None

    @classmethod
    def of(cls, *principals: str) -> Caller:
        """A restricted caller acting as ``principals`` (none: everyone's documents only)."""
        return cls(tuple(sorted({check_principal(p) for p in principals})))

    @property
    def restricted(self) -> bool:
        return self.principals is not None

    def may_read(self, principals: Sequence[str]) -> bool:
        """Whether this caller may read a document listing ``principals`` (none: everyone's),
        as `Readable` decides it in a store's query."""
        if self.principals is None or not principals:
            return True
        return not set(principals).isdisjoint(self.principals)

    def readable(self) -> Readable | None:
        """The filter node that keeps what this caller may read (None: everything)."""
        return None if self.principals is None else Readable(self.principals)

    def scope(self, where: Filter | None) -> Filter | None:
        """``where`` narrowed to what this caller may read, in one filter the store applies."""
        readable = self.readable()
        if readable is None:
            return where
        return readable if where is None else And((where, readable))


#: The unrestricted caller: a local user, or a server key bound to no principal.
EVERYONE = Caller()


@dataclass(frozen=True, slots=True)
class PermissionRule:
    path: str
    principals: tuple[str, ...]

    def matches(self, source: str) -> bool:
        return fnmatch.fnmatchcase(source, self.path)


@dataclass(frozen=True, slots=True)
class PermissionRules:
    """The ``[[permissions]]`` rules: a document's principals are its source's and those of
    every rule its source path matches."""

    rules: tuple[PermissionRule, ...] = ()

    def principals_for(self, source: str, given: Iterable[str] = ()) -> tuple[str, ...]:
        """``given`` (a sync source's, blank ones dropped) and every matching rule's."""
        found = {principal.strip() for principal in given if principal.strip()}
        for rule in self.rules:
            if rule.matches(source):
                found.update(rule.principals)
        return tuple(sorted(found))

    @classmethod
    def from_config(cls, config: Config) -> PermissionRules:
        raw = config.data.get("permissions", [])
        where = f"{config.where} [[permissions]]"
        if not isinstance(raw, list):
            raise ConfigError(f"{where} must be an array of tables ([[permissions]])")
        return cls(tuple(_rule(entry, f"{where} #{n}") for n, entry in enumerate(raw, start=1)))


def _rule(entry: object, where: str) -> PermissionRule:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with path and principals")
    unknown = sorted(set(entry) - {"path", "principals"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(unknown)}; known: path, principals")
    path = entry.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f'{where}: path must be a pattern such as "hr/**"')
    principals = entry.get("principals")
    if not isinstance(principals, list) or not principals:
        raise ConfigError(f'{where}: principals must be a non-empty list such as ["group:hr"]')
    checked: Sequence[str] = [check_principal(p, f"{where} principals") for p in principals]
    return PermissionRule(path.strip(), tuple(sorted(set(checked))))
