"""`ragwright check` and `ragwright repair`: sound on a healthy index of every format (tables
included), the damage named on each corruption case, the keyword index rebuilt, and what
cannot be rebuilt refused before anything is written."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli_helpers import runner
from office_files import (
    SALES_HEADER,
    build_csv,
    build_docx,
    build_pptx,
    build_rtf,
    build_xlsx,
    sales_rows,
)
from pdf_files import build_table_pdf
from ragwright import ChunkingConfig, Index
from ragwright.cli import app
from ragwright.parsers import ParserRegistry
from ragwright.testing import HashingEmbedder
from test_damaged_index import DAMAGE, damaged_index
from test_schema_versions import as_schema_1, header_matches, table_index

FORMATS: dict[str, Callable[[Path], object]] = {
    "sales.pdf": lambda p: build_table_pdf(p, SALES_HEADER, sales_rows(45)),
    "manual.docx": lambda p: build_docx(p, sections=3, paragraphs=3, table_rows=8),
    "deck.pptx": lambda p: build_pptx(p, slides=3, table_rows=4),
    "sales.xlsx": lambda p: build_xlsx(p, rows=30, sheets=("North", "South")),
    "sales.csv": lambda p: build_csv(p, rows=30),
    "menu.rtf": lambda p: build_rtf(p, paragraphs=4, table_rows=6),
    "towns.tsv": lambda p: p.write_text(
        "Town\tPopulation\n" + "".join(f"Town{i}\t{1000 + i}\n" for i in range(60))
    ),
    "report.html": lambda p: p.write_text(
        "<h1>Report</h1><p>Quarterly figures.</p><table><tr><th>Region</th><th>Sales</th></tr>"
        + "".join(f"<tr><td>Region {i}</td><td>{100 + i}</td></tr>" for i in range(60))
        + "</table>"
    ),
    "prices.md": lambda p: p.write_text(
        "# Prices\n\n| Item | Price |\n|---|---|\n"
        + "".join(f"| Item {i} | {i}.50 |\n" for i in range(60))
    ),
    "notes.txt": lambda p: p.write_text("Plain notes about the install.\n\n" * 40),
    "record.json": lambda p: p.write_text(json.dumps({"title": "Record", "body": "text " * 200})),
    "events.jsonl": lambda p: p.write_text(
        "".join(json.dumps({"event": f"e{i}", "detail": "text " * 20}) + "\n" for i in range(20))
    ),
}


def check(index: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = runner.invoke(app, ["check", "--index", str(index), "--json", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def failed(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in report["findings"] if not f["ok"]}


def sql(database: Path, *statements: str) -> None:
    with closing(sqlite3.connect(database)) as db, db:
        for statement in statements:
            db.execute(statement)


def test_a_healthy_index_of_every_format_with_tables_is_sound(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, build in FORMATS.items():
        build(corpus / name)
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as kb:
        report = kb.ingest([corpus], chunking=ChunkingConfig("recursive", {"size": 300}))
        assert report.ok and len(report.added) == len(FORMATS), report.failed
    database = tmp_path / "index" / "index.sqlite3"
    with closing(sqlite3.connect(database)) as db:
        continuing = db.execute(
            "SELECT count(*) FROM chunks WHERE header_id IS NOT NULL"  # stored apart
        ).fetchone()[0]
    assert continuing > 10  # the FTS5 check covers chunks indexed with a header
    for quick in ((), ("--quick",)):
        code, [found] = check(tmp_path / "index", *quick)
        assert code == 0 and failed(found) == {}, found
    names = [f["name"] for f in found["findings"]]
    assert names == ["file", "sqlite_integrity", "schema", "settings", "fts_integrity", "fts_rows",
                     "orphans", "offsets", "vectors", "graph", "derived:index.sqlite3.bm25",
                     "derived:index.sqlite3.vectors", "derived:index.sqlite3.ann",
                     "derived:index.sqlite3.candidates"]  # fmt: skip
    assert found["counts"]["documents"] == len(FORMATS)
    assert found["counts"]["chunks"] == found["counts"]["fts_rows"] > 0


def test_the_formats_checked_are_every_format_parsed() -> None:
    registry = ParserRegistry.from_entry_points()
    parsed = {type(registry.parser_for(f"f{e}")).__name__ for e in registry.extensions}
    checked = {type(registry.parser_for(name)).__name__ for name in FORMATS}
    assert checked == parsed


EXPECTED = {
    "zero_bytes": ("file", "empty (0 bytes)"),
    "garbage": ("file", "not an SQLite database"),
    "truncated": ("file", "truncated"),
    "chunks_page": ("sqlite_integrity", "damaged"),
    "newer_schema": ("schema", "newer ragwright"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_check_names_each_damage_and_repair_refuses_it(tmp_path: Path, kind: str) -> None:
    database = damaged_index(tmp_path, kind)
    before = database.read_bytes()
    code, [report] = check(tmp_path / "index")
    name, words = EXPECTED[kind]
    assert code == 1 and words in failed(report)[name]["detail"]
    assert not report["repairable"]
    result = runner.invoke(app, ["repair", "--index", str(tmp_path / "index")])
    assert result.exit_code == 1
    assert "cannot fix" in result.stderr and "ragwright migrate" in result.stderr
    assert database.read_bytes() == before  # neither command wrote anything


def test_a_damaged_keyword_index_is_rebuilt_by_repair(tmp_path: Path) -> None:
    database = table_index(tmp_path)
    matches = header_matches(database)
    sql(database, "DELETE FROM chunks_fts_docsize WHERE id = (SELECT min(rowid) FROM chunks)")
    code, [report] = check(tmp_path / "index")
    assert code == 1 and report["repairable"]
    assert {"fts_integrity", "fts_rows"} <= set(failed(report))
    assert report["counts"]["unindexed_chunks"] == 1
    result = runner.invoke(app, ["repair", "--index", str(tmp_path / "index"), "--json"])
    assert result.exit_code == 0, result.output
    [done] = json.loads(result.stdout)
    assert done["actions"] == ["rebuilt the keyword index (FTS5) from the stored chunk text"]
    assert done["after"]["ok"]
    assert check(tmp_path / "index")[0] == 0
    assert header_matches(database) == matches


def test_repair_upgrades_a_schema_1_table_index(tmp_path: Path) -> None:
    database = table_index(tmp_path)
    matches = header_matches(database)
    as_schema_1(database)
    code, [report] = check(tmp_path / "index")
    assert code == 1 and report["repairable"] and set(failed(report)) == {"fts_integrity"}
    result = runner.invoke(app, ["repair", "--index", str(tmp_path / "index")])
    assert result.exit_code == 0, result.output
    assert "upgraded the schema from version 1 to 2" in result.stdout
    assert check(tmp_path / "index")[0] == 0
    assert header_matches(database) == matches


def nan_vector(database: Path) -> None:
    with closing(sqlite3.connect(database)) as db:
        width = len(db.execute("SELECT vector FROM chunks LIMIT 1").fetchone()[0])
    nan = np.full(width // 4, np.nan, dtype="<f4").tobytes().hex()
    sql(database, f"UPDATE chunks SET vector = x'{nan}' WHERE rowid = 2")


ROW_DAMAGE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "offsets": (
        lambda db: sql(db, "UPDATE chunks SET char_end = char_end + 1 WHERE rowid = 1"),
        "offsets",
        "1 chunks are not the span",
    ),
    "short_vector": (
        lambda db: sql(db, "UPDATE chunks SET vector = zeroblob(8) WHERE rowid = 1"),
        "vectors",
        "1 vectors are not",
    ),
    "nan_vector": (nan_vector, "vectors", "1 vectors are not"),
    "orphans": (
        lambda db: sql(
            db, "PRAGMA foreign_keys = OFF", "DELETE FROM documents WHERE source LIKE '%notes.txt'"
        ),
        "orphans",
        "1 chunks belong to no stored document",
    ),
}


@pytest.mark.parametrize("kind", list(ROW_DAMAGE))
def test_check_finds_bad_rows_and_repair_refuses_them(tmp_path: Path, kind: str) -> None:
    from server_helpers import build_index

    build_index(tmp_path).close()
    damage, name, words = ROW_DAMAGE[kind]
    damage(tmp_path / "index" / "index.sqlite3")
    code, [report] = check(tmp_path / "index")
    assert code == 1 and words in failed(report)[name]["detail"], report
    result = runner.invoke(app, ["repair", "--index", str(tmp_path / "index")])
    assert result.exit_code == 1 and "re-ingest" in result.stderr.lower()


def test_check_examines_every_collection_or_the_one_named(tmp_path: Path) -> None:
    from server_helpers import build_index

    build_index(tmp_path).close()
    with Index(tmp_path / "index", collection="papers", embedder=HashingEmbedder()) as kb:
        kb.ingest([tmp_path / "docs"])
    paper = tmp_path / "index" / "collections" / "papers" / "index.sqlite3"
    sql(paper, "UPDATE chunks SET char_start = char_start + 1 WHERE rowid = 1")
    code, reports = check(tmp_path / "index")
    assert code == 1 and [(r["collection"], r["ok"]) for r in reports] == [
        ("default", True),
        ("papers", False),
    ]
    assert check(tmp_path / "index", "--collection", "default") == (0, reports[:1])
    result = runner.invoke(app, ["check", "--index", str(tmp_path / "index")])
    assert "papers in" in result.stdout and "FAIL offsets" in result.stdout


def swap_two_pieces(path: Path, size: int) -> None:
    """The file's last two pieces of ``size`` bytes swapped (the same words, in another order)."""
    data = bytearray(path.read_bytes())
    first, second = len(data) - 2 * size, len(data) - size
    data[first:second], data[second:] = data[second:], data[first:second]
    path.write_bytes(bytes(data))


def test_check_names_a_damaged_derived_file_and_repair_rebuilds_it(tmp_path: Path) -> None:
    from server_helpers import build_index

    with build_index(tmp_path) as index:  # the derived files, built by the first searches
        for mode in ("bm25", "vector", "hybrid"):
            index.search("install", mode=mode)
        expected = [(h.chunk.id, h.score) for h in index.search("install", mode="hybrid")]
    vectors = tmp_path / "index" / "index.sqlite3.vectors"
    swap_two_pieces(vectors, 1024)  # two vectors of the matrix
    (tmp_path / "index" / "index.sqlite3.bm25").unlink()  # absent: sound, built when needed
    code, [report] = check(tmp_path / "index")
    assert code == 1 and report["repairable"]
    assert set(failed(report)) == {"derived:index.sqlite3.vectors"}
    assert "hash differs" in failed(report)["derived:index.sqlite3.vectors"]["detail"]
    result = runner.invoke(app, ["repair", "--index", str(tmp_path / "index"), "--json"])
    assert result.exit_code == 0, result.output
    [done] = json.loads(result.stdout)
    assert done["actions"] == [
        "deleted the damaged derived file index.sqlite3.vectors; rebuilt it from the database"
    ]
    assert check(tmp_path / "index")[0] == 0
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        assert [(h.chunk.id, h.score) for h in index.search("install", mode="hybrid")] == expected
