"""`ragwright check` for one SQLite index file: what is wrong with it, found without trusting
it. The file is opened read-only (only the FTS5 check needs a write transaction, which it
rolls back), each examination is reported rather than raised, and what one finds decides
whether the next can run: a file that is not a database gets no schema check.

What is examined, in order: the file (SQLite's header, its size against the page count the
header records: a truncated file), SQLite's ``integrity_check`` (or ``quick_check``), the
schema (version, tables), every settings row whose value has a shape (`setting_repair`),
FTS5's own ``integrity-check`` (rank 1: every indexed row against
the text the view computes), keyword-index rows against chunks, orphaned chunks, every
chunk's offsets (``document.content[char_start:char_end] == text``), the vectors (the
recorded space, byte length = dim × 4, finite), graph facts a stopped re-chunk owes
(`graph_check`), and the derived files beside the database
(`derived_check`: every block against its hash). The keyword index and the derived files are
built from the stored text and vectors, so they are `repairable` (see `repair`), as are the
settings rows `repair` can restore or reset.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragwright.errors import BrokenSetting, StoreError
from ragwright.models import Finding
from ragwright.ports import GRAPH_OWED
from ragwright.stores.graph_check import graph_finding
from ragwright.stores.rows import space_from_json
from ragwright.stores.sqlite import schema
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.derived_check import derived_findings
from ragwright.stores.sqlite.opening import EMPTY_FILE, schema_version
from ragwright.stores.sqlite.setting_repair import sqlite_setting_findings

SQLITE_HEADER = b"SQLite format 3\x00"
#: Problems listed per finding; the count says how many there were in all.
_SHOWN = 5
_VECTOR_BATCH = 4096


def check_file(path: Path, *, quick: bool = False) -> tuple[list[Finding], dict[str, int]]:
    """The findings on the index file at ``path`` and the counts taken on the way."""
    findings: list[Finding] = []
    counts: dict[str, int] = {}
    file = _file_finding(path)
    findings.append(file)
    if not file.ok:
        return findings, counts
    counts["file_bytes"] = path.stat().st_size
    try:
        db = Database(path, read_only=True)
    except StoreError as error:
        findings.append(Finding("sqlite_integrity", False, str(error)))
        return findings, counts
    try:
        _examine(db, path, quick, findings, counts)
        key = _derived_cache_key(db)
    finally:
        db.close()
    findings.extend(derived_findings(path, key))
    return findings, counts


def _derived_cache_key(db: Database) -> str | None:
    """The key the index's derived files carry (None: none recorded, or unreadable)."""
    try:
        rows = db.query("SELECT value FROM meta WHERE key = 'derived_cache_key'")
    except (sqlite3.Error, StoreError):
        return None
    return str(rows[0][0]) if rows else None


def _examine(
    db: Database, path: Path, quick: bool, findings: list[Finding], counts: dict[str, int]
) -> None:
    try:
        integrity = _integrity(db, quick)
    except sqlite3.Error as error:  # pages too damaged for the check itself to walk
        integrity = Finding("sqlite_integrity", False, f"the file's pages are damaged: {error}")
    findings.append(integrity)
    schema_finding, version = _schema(db)
    findings.append(schema_finding)
    if integrity.ok:
        try:
            findings.extend(sqlite_setting_findings(db))
        except (sqlite3.Error, StoreError) as error:
            findings.append(Finding("settings", False, f"could not be examined: {error}"))
    if not integrity.ok or version is None:
        return  # the tables cannot be trusted to answer
    counts["schema_version"] = version
    findings.append(_guarded("fts_integrity", lambda: _fts_integrity(path, version)))
    steps: list[tuple[str, Callable[[], Finding]]] = [
        ("fts_rows", lambda: _fts_rows(db, counts)),
        ("orphans", lambda: _orphans(db, counts)),
        ("offsets", lambda: _offsets(db, counts)),
        ("vectors", lambda: _vectors(db, counts)),
        ("graph", lambda: _graph(db)),
    ]
    findings.extend(_guarded(name, step) for name, step in steps)


def _guarded(name: str, step: Callable[[], Finding]) -> Finding:
    """A step's finding; a step that SQLite cannot even run is a finding of its own."""
    try:
        return step()
    except (sqlite3.Error, StoreError) as error:
        return Finding(name, False, f"could not be examined: {error}")


def _file_finding(path: Path) -> Finding:
    if not path.is_file():
        return Finding("file", False, f"no index file at {path}")
    size = path.stat().st_size
    if size == 0:
        return Finding("file", False, EMPTY_FILE)
    with path.open("rb") as raw:
        header = raw.read(100)
    if not header.startswith(SQLITE_HEADER):
        return Finding("file", False, "not an SQLite database: its first bytes are not SQLite's")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The header's page count is valid only when its "version valid for" matches the counter.
    if header[92:96] == header[24:28] and pages * page_size > size:
        return Finding(
            "file",
            False,
            f"truncated: the header records {pages} pages of {page_size} bytes "
            f"({pages * page_size:,} bytes), the file has {size:,}",
        )
    return Finding("file", True, f"an SQLite database of {size:,} bytes")


def _integrity(db: Database, quick: bool) -> Finding:
    pragma = "quick_check" if quick else "integrity_check"
    rows = [str(r[0]) for r in db.connection.execute(f"PRAGMA {pragma}").fetchall()]
    if rows == ["ok"]:
        return Finding("sqlite_integrity", True, f"{pragma}: ok")
    shown = "; ".join(rows[:_SHOWN])
    return Finding("sqlite_integrity", False, f"{pragma}: {len(rows)} problems: {shown}")


def _schema(db: Database) -> tuple[Finding, int | None]:
    try:
        version = schema_version(db, db.names())
    except StoreError as error:
        return Finding("schema", False, str(error)), None
    if version < schema.SCHEMA_VERSION:
        detail = (
            f"version {version}, an older layout (read as it is; the next write or "
            f"`ragwright repair` upgrades it to {schema.SCHEMA_VERSION})"
        )
        return Finding("schema", True, detail), version
    return Finding("schema", True, f"version {version}"), version


def _fts_integrity(path: Path, version: int) -> Finding:
    """FTS5's ``integrity-check`` with rank 1, which compares the index with its content.
    It is an INSERT, so it runs on a connection of its own in a transaction rolled back."""
    db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        db.execute("BEGIN")
        try:
            db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")
    except sqlite3.Error as error:
        why = f" (schema version {version} read content without table headers)"
        return Finding(
            "fts_integrity",
            False,
            f"the keyword index does not match the chunks: {error}"
            + (why if version < schema.SCHEMA_VERSION else ""),
            repairable=True,
        )
    finally:
        db.close()
    return Finding("fts_integrity", True, "integrity-check (rank 1): ok")


def _count(db: Database, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(db.query(sql, params)[0][0])


def _fts_rows(db: Database, counts: dict[str, int]) -> Finding:
    counts["documents"] = _count(db, "SELECT count(*) FROM documents")
    counts["chunks"] = _count(db, "SELECT count(*) FROM chunks")
    counts["fts_rows"] = _count(db, "SELECT count(*) FROM chunks_fts_docsize")
    counts["orphan_fts_rows"] = stray = _count(
        db, "SELECT count(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT rowid FROM chunks)"
    )
    counts["unindexed_chunks"] = missing = _count(
        db, "SELECT count(*) FROM chunks WHERE rowid NOT IN (SELECT id FROM chunks_fts_docsize)"
    )
    if stray or missing:
        detail = f"{stray} keyword-index rows without a chunk, {missing} chunks not indexed"
        return Finding("fts_rows", False, detail, repairable=True)
    return Finding("fts_rows", True, f"{counts['fts_rows']} rows, one per chunk")


def _orphans(db: Database, counts: dict[str, int]) -> Finding:
    counts["orphan_chunks"] = orphans = _count(
        db, "SELECT count(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)"
    )
    if orphans:
        return Finding("orphans", False, f"{orphans} chunks belong to no stored document")
    return Finding("orphans", True, "every chunk belongs to a stored document")


def _offsets(db: Database, counts: dict[str, int]) -> Finding:
    # SQLite's substr and length count characters, as Python's slicing does.
    rows = db.query(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.char_start < 0 OR c.char_end < c.char_start OR c.char_end > length(d.content) "
        "OR substr(d.content, c.char_start + 1, c.char_end - c.char_start) IS NOT c.text "
        "ORDER BY c.id"
    )
    counts["bad_offsets"] = len(rows)
    if rows:
        shown = ", ".join(str(r[0]) for r in rows[:_SHOWN])
        detail = f"{len(rows)} chunks are not the span of their document they claim: {shown}"
        return Finding("offsets", False, detail)
    return Finding("offsets", True, "every chunk is the exact span of its document")


def _vectors(db: Database, counts: dict[str, int]) -> Finding:
    rows = db.query("SELECT value FROM meta WHERE key = 'embedding_space'")
    try:
        space = space_from_json(str(rows[0][0])) if rows else None
    except BrokenSetting:  # a finding of its own (`setting_findings`), repaired first
        return Finding("vectors", False, "not examined: the embedding space is broken", True)
    chunks = counts.get("chunks") or _count(db, "SELECT count(*) FROM chunks")
    if space is None:
        if chunks:
            return Finding("vectors", False, f"{chunks} chunks, but no embedding space recorded")
        return Finding("vectors", True, "no chunks, no embedding space yet")
    width = space.dimension * 4
    counts["bad_vectors"] = bad = _count(
        db, "SELECT count(*) FROM chunks WHERE length(vector) <> ?", (width,)
    ) + _not_finite(db, space.dimension)
    if bad:
        detail = f"{bad} vectors are not {space.dimension} finite float32s ({space.describe()})"
        return Finding("vectors", False, detail)
    return Finding("vectors", True, f"{chunks} vectors of {space.dimension} finite values")


def _graph(db: Database) -> Finding:
    owed = db.query("SELECT value FROM meta WHERE key = ?", (GRAPH_OWED,))
    if not owed or owed[0][0] != "1":
        return graph_finding(None, 0, 0)
    missing = _count(
        db,
        "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM graph_extractions e WHERE e.chunk_rowid = c.rowid)",
    )
    return graph_finding("1", missing, _count(db, "SELECT count(*) FROM chunks"))


def _not_finite(db: Database, dim: int) -> int:
    """How many vectors of the right length hold a NaN or an infinity (read in batches)."""
    found = 0
    with db.lock:
        cursor = db.connection.execute(
            "SELECT vector FROM chunks WHERE length(vector) = ? ORDER BY rowid", (dim * 4,)
        )
        while batch := cursor.fetchmany(_VECTOR_BATCH):
            matrix = np.frombuffer(b"".join(r[0] for r in batch), dtype="<f4").reshape(-1, dim)
            found += int((~np.isfinite(matrix).all(axis=1)).sum())
    return found
