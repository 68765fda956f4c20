"""A damaged index says so with a typed error naming `ragwright check` (`IndexDamaged`; a newer
schema `IndexTooNew`), never a raw SQLite traceback, on every command and surface, and a read
writes nothing into it; text that is not valid Unicode is a `ConfigError` at the store, never a
`UnicodeEncodeError`."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from mcp import Client

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.errors import ConfigError, IndexDamaged, IndexTooNew, StoreError
from ragwright.mcp_server import build_server
from ragwright.models import Document, document_id_for
from ragwright.pipeline.search.retrieval import SearchMode
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from server_helpers import build_index, serve

PAGE = 4096


def overwrite_page(database: Path, table: str) -> None:
    with closing(sqlite3.connect(database)) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    assert page_size == PAGE
    with database.open("r+b") as raw:
        raw.seek((root[0] - 1) * PAGE)
        raw.write(bytes(range(256)) * (PAGE // 256))


@pytest.mark.parametrize(
    "mode",
    [m for m in SearchMode if m not in (SearchMode.GRAPH, SearchMode.GLOBAL, SearchMode.SPARSE)],
)  # no graph, no communities, no sparse term weights
def test_an_overwritten_page_of_the_chunks_table_is_a_store_error(
    tmp_path: Path, mode: SearchMode
) -> None:
    build_index(tmp_path).close()
    database = next((tmp_path / "index").rglob("*.sqlite3"))
    overwrite_page(database, "chunks")
    with pytest.raises(StoreError, match="malformed"), Index(tmp_path / "index") as index:
        index.search("install", mode=mode)


def test_a_lone_surrogate_in_a_lookup_or_a_write_is_a_config_error(tmp_path: Path) -> None:
    with build_index(tmp_path) as index, pytest.raises(ConfigError, match="lone surrogate"):
        index.document("docs/\udcff.md")
    source = "docs/bad.md"
    document = Document(id=document_id_for(source), source=source, content="a \ud800 b")
    with SQLiteStore(tmp_path / "store") as store:
        store.bind_space(HashingEmbedder().space)
        with pytest.raises(ConfigError, match="lone surrogate"):
            store.upsert(document, [], np.zeros((0, 256), dtype=np.float32))
        assert store.get_document(document.id) is None


# -- every kind of damage, on every command and surface ---------------------------------------


def zero_bytes(database: Path) -> None:
    database.write_bytes(b"")


def garbage(database: Path) -> None:
    database.write_bytes(bytes(range(256)) * 64)


def truncated(database: Path) -> None:
    database.write_bytes(database.read_bytes()[: database.stat().st_size // 2])


def chunks_page(database: Path) -> None:
    overwrite_page(database, "chunks")


def newer_schema(database: Path) -> None:
    with closing(sqlite3.connect(database)) as db, db:  # closed: the WAL checkpointed
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")


DAMAGE = {
    "zero_bytes": (zero_bytes, IndexDamaged, "empty \\(0 bytes\\)"),
    "garbage": (garbage, IndexDamaged, "not a database"),
    "truncated": (truncated, IndexDamaged, "malformed"),
    "chunks_page": (chunks_page, IndexDamaged, "malformed"),
    "newer_schema": (newer_schema, IndexTooNew, "created by a newer ragwright"),
}


def damaged_index(tmp_path: Path, kind: str) -> Path:
    """A healthy two-document index, closed (checkpointed), then damaged as ``kind`` says."""
    build_index(tmp_path).close()
    database = tmp_path / "index" / "index.sqlite3"
    DAMAGE[kind][0](database)
    return database


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_each_damage_is_a_typed_error_and_a_read_writes_nothing(tmp_path: Path, kind: str) -> None:
    database = damaged_index(tmp_path, kind)
    before = database.read_bytes()
    _, error, message = DAMAGE[kind]
    for read_only in (True, False):
        with pytest.raises(error, match=message):
            search_in(tmp_path / "index", read_only)
    assert database.read_bytes() == before
    # What ingest and serve open (a writer that may create an index) takes none for a new one.
    with pytest.raises(error, match=message), Index(tmp_path / "index") as index:
        index.search("install", mode=SearchMode.HYBRID)


def search_in(location: Path, read_only: bool) -> None:
    with Index(location, create=False, read_only=read_only) as index:
        index.search("install", mode=SearchMode.HYBRID)


READ_COMMANDS = [
    ["search", "install"],
    ["search", "install", "--mode", "bm25"],
    ["ask", "how do I install it?"],
    ["docs", "list"],
    ["docs", "show", "docs/guide.md"],
    ["stats"],
]


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_every_read_command_says_so_in_one_line_naming_check(tmp_path: Path, kind: str) -> None:
    database = damaged_index(tmp_path, kind)
    before = database.read_bytes()
    for command in READ_COMMANDS:
        result = runner.invoke(app, [*command, "--index", str(tmp_path / "index")])
        if kind == "chunks_page" and command[0] in ("docs", "stats") and result.exit_code == 0:
            continue  # what they read (documents, the chunks' key index) is intact
        assert result.exit_code == 2, (command, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        message = result.stderr.strip()
        assert message.startswith("error: the index at "), (command, message)
        assert "Traceback" not in result.output
        expected = "newer ragwright" if kind == "newer_schema" else "`ragwright check`"
        assert expected in message, (command, message)
    assert database.read_bytes() == before  # read-only: not even a schema written


OPENS_NOTHING = [kind for kind in DAMAGE if kind != "chunks_page"]  # that one opens, see below


@pytest.mark.parametrize("kind", OPENS_NOTHING)
def test_serve_mcp_and_ingest_refuse_to_start_naming_check(tmp_path: Path, kind: str) -> None:
    """The servers and the writer open the index first: a damaged one stops them with the same
    one line (a 0-byte file is no new index for them to fill)."""
    damaged_index(tmp_path, kind)
    expected = "newer ragwright" if kind == "newer_schema" else "`ragwright check`"
    for command in (["serve", "--port", "0"], ["mcp"], ["ingest", str(tmp_path / "docs")]):
        result = runner.invoke(app, [*command, "--index", str(tmp_path / "index")])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.startswith("error: the index at "), (command, result.stderr)
        assert expected in result.stderr and "Traceback" not in result.output


def test_the_http_api_answers_503_problem_json_naming_check(tmp_path: Path) -> None:
    damaged_index(tmp_path, "chunks_page")
    with Index(tmp_path / "index", create=False) as index, serve(index) as url:
        for path, field in (("/v1/search", "query"), ("/v1/ask", "question")):
            request = urllib.request.Request(
                url + path,
                data=json.dumps({field: "install"}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with pytest.raises(urllib.error.HTTPError) as answer:
                urllib.request.urlopen(request, timeout=30)
            body = json.loads(answer.value.read())
            assert answer.value.code == 503, body
            assert body["error"]["code"] == "index_damaged"
            assert "`ragwright check`" in body["error"]["message"]


def test_an_mcp_tool_call_is_a_tool_error_naming_check(tmp_path: Path) -> None:
    damaged_index(tmp_path, "chunks_page")

    async def main() -> Any:
        with Index(tmp_path / "index", create=False, read_only=True) as index:
            async with Client(build_server(index)) as client:
                return await client.call_tool("search", {"query": "install"})

    result = anyio.run(main)
    assert result.is_error
    assert "`ragwright check`" in result.content[0].text
