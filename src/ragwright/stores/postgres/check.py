"""`ragwright check` for one PostgreSQL collection: the schema version, every settings row whose
value has a shape (`setting_rows`), counts and orphans, the BM25 postings and statistics
against the chunks, every chunk's offsets, the vectors against the recorded space, and
graph facts a stopped re-chunk owes (`graph_check`).
PostgreSQL checks its own storage (checksums, ``amcheck``), and pgvector refuses NaN and
infinity on input, so neither is repeated here; there is no `IndexRepair` for PostgreSQL (the
postings are written with the chunks, in one transaction; a broken settings row is corrected
or deleted in its settings table, or `ragwright repair` restores, resets or drops it)."""

from __future__ import annotations

from typing import Any

from psycopg import Connection

from ragwright.errors import BrokenSetting
from ragwright.models import Finding
from ragwright.ports import GRAPH_OWED
from ragwright.stores.graph_check import graph_finding
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.repairable import REPAIRS
from ragwright.stores.postgres.schema import SCHEMA_VERSION
from ragwright.stores.rows import space_from_json
from ragwright.stores.setting_rows import RULES, setting_findings

_SHOWN = 5
_SETTINGS = "SELECT key, value FROM {s}.settings ORDER BY key"


def check_schema(db: SchemaDatabase) -> tuple[list[Finding], dict[str, int]]:
    """The findings on the collection in ``db``'s schema, read in one transaction."""
    return db.run(lambda conn: _examine(db, conn), "checking the collection")


def _examine(db: SchemaDatabase, conn: Connection[Any]) -> tuple[list[Finding], dict[str, int]]:
    conn.execute("SET TRANSACTION READ ONLY")
    findings: list[Finding] = []
    counts: dict[str, int] = {}
    rows = [(str(k), str(v)) for k, v in conn.execute(db.sql(_SETTINGS)).fetchall()]
    settings = dict(rows)
    version = settings.get("schema_version")
    if version != str(SCHEMA_VERSION):
        findings.append(Finding("schema", False, f"version {version}, not {SCHEMA_VERSION}"))
        findings.extend(setting_findings(rows, RULES, REPAIRS))
        return findings, counts
    findings.append(Finding("schema", True, f"version {version}"))
    findings.extend(setting_findings(rows, RULES, REPAIRS))

    def count(statement: str) -> int:
        return int(conn.execute(db.sql(statement)).fetchone()[0])  # type: ignore[index]

    counts["documents"] = count("SELECT count(*) FROM {s}.documents")
    counts["chunks"] = chunks = count("SELECT count(*) FROM {s}.chunks")
    counts["orphan_postings"] = stray = count(
        "SELECT count(*) FROM {s}.postings p WHERE NOT EXISTS "
        "(SELECT 1 FROM {s}.chunks c WHERE c.id = p.chunk_id)"
    )
    counts["unindexed_chunks"] = missing = count(
        "SELECT count(*) FROM {s}.chunks c WHERE c.tokens > 0 AND NOT EXISTS "
        "(SELECT 1 FROM {s}.postings p WHERE p.chunk_id = c.id)"
    )
    counted = count("SELECT coalesce(sum(chunks), 0) FROM {s}.bm25_stats")
    if stray or missing or counted != chunks:
        detail = (
            f"{stray} postings without a chunk, {missing} chunks without postings, "
            f"BM25 statistics count {counted} chunks of {chunks}"
        )
        findings.append(Finding("postings", False, detail))
    else:
        findings.append(Finding("postings", True, f"{chunks} chunks, their postings and counts"))
    counts["orphan_chunks"] = orphans = count(
        "SELECT count(*) FROM {s}.chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM {s}.documents d WHERE d.id = c.document_id)"
    )
    if orphans:
        findings.append(Finding("orphans", False, f"{orphans} chunks belong to no document"))
    else:
        findings.append(Finding("orphans", True, "every chunk belongs to a stored document"))
    bad = conn.execute(
        db.sql(
            "SELECT c.id FROM {s}.chunks c JOIN {s}.documents d ON d.id = c.document_id "
            "WHERE c.char_start < 0 OR c.char_end < c.char_start "
            "OR c.char_end > length(d.content) "
            "OR substr(d.content, c.char_start + 1, c.char_end - c.char_start) "
            "IS DISTINCT FROM c.text "
            "ORDER BY c.id"
        )
    ).fetchall()
    counts["bad_offsets"] = len(bad)
    if bad:
        shown = ", ".join(str(r[0]) for r in bad[:_SHOWN])
        detail = f"{len(bad)} chunks are not the span of their document they claim: {shown}"
        findings.append(Finding("offsets", False, detail))
    else:
        findings.append(Finding("offsets", True, "every chunk is the exact span of its document"))
    findings.append(_vectors(db, conn, settings.get("embedding_space"), chunks, counts))
    owed = settings.get(GRAPH_OWED)
    missing = (
        count("SELECT count(*) FROM {s}.chunks c WHERE NOT EXISTS "
              "(SELECT 1 FROM {s}.graph_extractions e WHERE e.chunk_id = c.id)")
        if owed == "1" else 0
    )  # fmt: skip
    findings.append(graph_finding(owed, missing, chunks))
    return findings, counts


def _vectors(
    db: SchemaDatabase,
    conn: Connection[Any],
    recorded: str | None,
    chunks: int,
    counts: dict[str, int],
) -> Finding:
    try:
        space = space_from_json(recorded)
    except BrokenSetting:  # a finding of its own (`setting_findings`)
        # Examined again once repair has restored the space (`setting_repair`).
        return Finding(
            "vectors", False, "not examined: the embedding space is broken", repairable=True
        )
    if space is None:
        if chunks:
            return Finding("vectors", False, f"{chunks} chunks, but no embedding space recorded")
        return Finding("vectors", True, "no chunks, no embedding space yet")
    row = conn.execute(
        db.sql(
            "SELECT count(*) FILTER (WHERE embedding IS NULL OR vector_dims(embedding) <> %s) "
            "FROM {s}.chunks"
        ),
        (space.dimension,),
    ).fetchone()
    counts["bad_vectors"] = bad = int(row[0]) if row else 0
    if bad:
        return Finding("vectors", False, f"{bad} vectors missing or not of {space.dimension}")
    return Finding("vectors", True, f"{chunks} vectors of {space.dimension} values")
