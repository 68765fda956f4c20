"""`ragwright check` of an index's derived files (`cache_kinds.CACHE_SUFFIXES` beside the
database): each block of each one against its hash, as a store does before its first use.

A derived file is rebuilt from the database whenever it cannot be used, so only a file that
claims to be this index's and is not what it claims (damaged data, a damaged header, a short
file, bytes that are not a derived file) is a failed finding; `ragwright repair` deletes it
and builds it again. A missing file, one of an older format or one built for another index
(a copied directory) is sound: the store builds its own when it next needs it.
"""

from __future__ import annotations

from pathlib import Path

from ragwright.models import Finding
from ragwright.stores.sqlite import derived
from ragwright.stores.sqlite.cache_kinds import (
    ANN_SUFFIX,
    CACHE_SUFFIXES,
    CANDIDATES_SUFFIX,
    KEYWORDS_SUFFIX,
    VECTORS_SUFFIX,
)

#: What each file holds, as a finding says it.
HOLDS = {
    KEYWORDS_SUFFIX: "the BM25 postings",
    VECTORS_SUFFIX: "the vector matrix",
    ANN_SUFFIX: "the HNSW graph",
    CANDIDATES_SUFFIX: "hybrid search's candidate rows",
}
#: The finding names start with this, then the file's name (``derived:index.sqlite3.bm25``).
PREFIX = "derived:"


def derived_findings(database: Path, key: str | None) -> list[Finding]:
    """A finding per derived file of the index at ``database`` whose derived-cache key is
    ``key`` (None: unknown, so no file is taken for another index's)."""
    return [_finding(database.with_name(database.name + s), s, key) for s in CACHE_SUFFIXES]


def damaged_suffixes(findings: list[Finding] | tuple[Finding, ...]) -> list[str]:
    """The suffixes of the derived files these findings found damaged."""
    return [
        "." + f.name.rsplit(".", 1)[1] for f in findings if f.name.startswith(PREFIX) and not f.ok
    ]


def _finding(path: Path, suffix: str, key: str | None) -> Finding:
    name, holds = PREFIX + path.name, HOLDS.get(suffix, "a derived cache")
    try:
        mapped = derived.open_arrays(path)
    except FileNotFoundError:
        return Finding(name, True, f"absent ({holds}: built from the database when needed)")
    except derived.Unreadable as error:
        sound = str(error).startswith("an older format")
        return Finding(name, sound, f"{holds}: {error}", repairable=not sound)
    meta = mapped.meta
    if meta.get("kind") != suffix or (key is not None and meta.get("key") != key):
        detail = "built for another index or kind: ignored, built again when needed"
        return Finding(name, True, f"{holds}: {detail}")
    damage = mapped.damage()
    if damage is not None:
        return Finding(name, False, f"{holds}: {damage}", repairable=True)
    return Finding(name, True, f"{holds}: every block matches its hash")
