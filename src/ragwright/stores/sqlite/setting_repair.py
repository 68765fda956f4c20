"""The settings rows of a SQLite index (``meta``): `ragwright check` names each broken one, and
`ragwright repair` restores or resets it, in one transaction, before the store is opened (a
broken row may stop the store from opening at all).

What each repair does: the embedding space is made again from the recorded embedder (and
must agree with the stored vectors' width and with the vector file's record of it); the
chunking, parser options and ``ann`` choice go back to their defaults (the next ingest records
its own); a counter (the write generation, the change log's boundary) or the derived files'
key gets a new value that no process or file has seen, so caches are built again rather than
trusted; a staged or previous chunking or space whose record is broken is dropped (a reindex
builds it again); the FTS5 tokenizer is read back from the table that uses it. A broken schema
version is not repaired: the schema check says what to do.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ragwright.errors import RepairRefused
from ragwright.models import EmbeddingSpace, Finding
from ragwright.stores.rows import space_json
from ragwright.stores.setting_rows import RULES, Rule, one_of, setting_findings
from ragwright.stores.sqlite import derived
from ragwright.stores.sqlite.ann_choice import ANN_MODES, ANN_SETTING
from ragwright.stores.sqlite.cache_kinds import VECTORS_SUFFIX
from ragwright.stores.sqlite.change_log import PRUNED_SETTING
from ragwright.stores.sqlite.database import Database

#: The embedding space an embedder spec gives (`repair` is handed one by its caller).
SpaceOf = Callable[[str], EmbeddingSpace]


def _whole(raw: str) -> object:
    if not raw.isdigit():
        raise ValueError(f"{raw[:40]!r} is not a whole number")
    return int(raw)


#: Every rule a SQLite index's rows follow: the shared ones and this store's own.
SQLITE_RULES: dict[str, Rule] = {
    **RULES,
    "generation": _whole,
    PRUNED_SETTING: _whole,
    ANN_SETTING: one_of(ANN_MODES),
}


def sqlite_setting_findings(db: Database) -> list[Finding]:
    """The findings on the rows of ``meta`` (`setting_rows.setting_findings`)."""
    rows = [(str(k), str(v)) for k, v in db.query("SELECT key, value FROM meta")]
    return setting_findings(rows, SQLITE_RULES, {key: fix[1] for key, fix in _FIXES.items()})


def repair_settings(path: Path, keys: list[str], space_of: SpaceOf | None) -> list[str]:
    """Restore or reset the rows ``keys`` of the index at ``path`` in one transaction (nothing
    is written when one cannot be: `RepairRefused`); what was done, a line each."""
    if not keys:
        return []
    db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            actions = [_FIXES[key][0](db, key, path, space_of) for key in keys]
            if "generation" not in keys:  # every process reads its settings again
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                           "WHERE key = 'generation'")  # fmt: skip
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    finally:
        db.close()
    return actions


def _set(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _reset(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    db.execute("DELETE FROM meta WHERE key = ?", (key,))
    return f"reset the broken setting {key!r} to its default (the next ingest records its own)"


def _renewed(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    value = secrets.token_hex(16) if key == "derived_cache_key" else str(time.time_ns())
    _set(db, key, value)
    return f"gave the broken setting {key!r} a new value (caches are built again)"


def _pruned(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    """The change log holds every change from its oldest one on: it was pruned through the
    one before (a cache from before that is built again rather than replayed)."""
    (oldest,) = db.execute("SELECT min(seq) FROM chunk_changes").fetchone()
    _set(db, key, str(max(0, int(oldest or 1) - 1)))
    return f"restored the broken setting {key!r} from the change log"


def _dropped_slot(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    kind, slot = key.split("_", 1)
    tables = ("space_vectors",) if kind == "space" else ("chunk_slots", "chunk_slot_documents")
    for table in tables:
        db.execute(f"DELETE FROM {table} WHERE slot = ?", (slot,))
    db.execute("DELETE FROM meta WHERE key = ?", (key,))
    again = "`ragwright reindex` builds it again" if slot == "staged" else "no rollback to it"
    return f"dropped the {slot} {kind} ({key!r} was broken; {again})"


def _tokenizer(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    row = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
    found = re.search(r"tokenize\s*=\s*'([^']*)'", str(row[0]) if row else "")
    if found is None:
        raise RepairRefused(str(path), [f"{key}: the keyword index names no tokenizer"])
    _set(db, key, found.group(1))
    return f"restored the broken setting {key!r} from the keyword index ({found.group(1)})"


def _space(db: sqlite3.Connection, key: str, path: Path, space_of: SpaceOf | None) -> str:
    """The space the recorded embedder gives, once it fits the stored vectors and the vector
    file's record (when there is one)."""
    row = db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None or space_of is None:
        why = "no embedder is recorded" if row is None else "no embedder to ask"
        raise RepairRefused(str(path), [f"{key}: {why}, so the space cannot be restored"])
    try:
        space = space_of(str(row[0]))
    except Exception as error:  # any embedder's failure: say it, write nothing
        raise RepairRefused(
            str(path), [f"{key}: the embedder {row[0]!r} failed: {error}"]
        ) from None
    width = db.execute("SELECT length(vector) FROM chunks LIMIT 1").fetchone()
    recorded = derived.read_header(path.with_name(path.name + VECTORS_SUFFIX)) or {}
    if (width is not None and width[0] != 4 * space.dimension) or not _agrees(recorded, space):
        raise RepairRefused(
            str(path), [f"{key}: the embedder {row[0]!r} gives {space.describe()}, not the space "
                        "the stored vectors were made in"],
        )  # fmt: skip
    _set(db, key, space_json(space))
    return f"restored the broken setting {key!r} from the embedder {row[0]} ({space.describe()})"


def _agrees(recorded: Mapping[str, object], space: EmbeddingSpace) -> bool:
    """Whether a vector file's header (none: {}) records ``space`` (`cache_kinds.vector_kind`)."""
    if not recorded:
        return True
    return (recorded.get("model"), recorded.get("dimension"), recorded.get("space")) == (
        space.model,
        space.dimension,
        space.fingerprint,
    )


_Fix = Callable[[sqlite3.Connection, str, Path, "SpaceOf | None"], str]
#: What `repair` does with each row, and how a finding says so.
_FIXES: dict[str, tuple[_Fix, str]] = {
    "embedding_space": (_space, "repair restores it from the recorded embedder"),
    "chunking": (_reset, "repair resets it to the default chunking"),
    "parser_options": (_reset, "repair resets it to the default options"),
    ANN_SETTING: (_reset, "repair resets it to auto"),
    "generation": (_renewed, "repair gives it a new value"),
    "derived_cache_key": (_renewed, "repair gives it a new value"),
    PRUNED_SETTING: (_pruned, "repair restores it from the change log"),
    "fts_tokenizer": (_tokenizer, "repair reads it back from the keyword index"),
    "space_staged": (_dropped_slot, "repair drops the staged space"),
    "space_previous": (_dropped_slot, "repair drops the previous space"),
    "chunking_staged": (_dropped_slot, "repair drops the staged chunking"),
    "chunking_previous": (_dropped_slot, "repair drops the previous chunking"),
}
