"""The PostgreSQL store: the store contract, plus what only PostgreSQL has (HNSW against
exact search, BM25 against the SQLite store, collections, LLM records, lost connections and a
server killed during an ingest)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import psycopg
import pytest

from pg_server import create_database, start_server
from ragwright.errors import (
    ConfigError,
    EmbeddingSpaceMismatch,
    MissingDependencyError,
    StoreError,
    UnsupportedFilter,
)
from ragwright.filters import parse_filter
from ragwright.index import Index
from ragwright.models import (
    BM25Parameters,
    CacheStats,
    Chunk,
    EmbeddingSpace,
    Hit,
    LedgerRow,
    Usage,
)
from ragwright.ports import Completion, DocumentWrite, TokenLogprob
from ragwright.stores import open_backend
from ragwright.stores.postgres import PostgresBackend, connect
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.backend_contract import BackendContract
from ragwright.testing.store_contract import (
    SPACE,
    StoreContract,
    load_corpus,
    make_document,
    vectors_for,
)


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def open_store(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)


class TestPostgresBackend(BackendContract):
    @pytest.fixture
    def open_backend(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(PostgresBackend, pg_url)


# -- HNSW against exact search ---------------------------------------------------------------

DIM = 32


def _vector_corpus(count: int, seed: int = 3) -> tuple[list[DocumentWrite], np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batch = []
    for i in range(count):
        document, chunks = make_document(
            f"v{i:05d}.md", [f"vector number {i}"], {"bucket": i % 100}
        )
        batch.append(DocumentWrite(document, chunks, vectors[i : i + 1]))
    return batch, vectors


def test_hnsw_agrees_with_exact_search_and_selective_filters_are_exact(pg_url: str) -> None:
    space = EmbeddingSpace("random", DIM, True, "cosine", "random-fingerprint")
    indexed = connect(pg_url, exact_limit=100)  # HNSW beyond 100 candidates
    exact = connect(pg_url, exact_limit=10**9)  # the same collection, always exact
    indexed.bind_space(space)
    batch, _ = _vector_corpus(3000)
    for start in range(0, len(batch), 500):
        indexed.write(batch[start : start + 500])
    rng = np.random.default_rng(11)
    queries = rng.standard_normal((20, DIM)).astype(np.float32)
    recalls = []
    for query in queries:
        approximate = indexed.vector_search(query, 10)
        truth = exact.vector_search(query, 10)
        assert len(approximate) == 10
        scores = [h.score for h in approximate]
        assert scores == sorted(scores, reverse=True)
        recalls.append(len({h.chunk.id for h in approximate} & {h.chunk.id for h in truth}) / 10)
        # 1% selective (30 chunks): ranked exactly, all k rows
        selective = parse_filter("bucket = 7")
        found = indexed.vector_search(query, 10, selective)
        expected = exact.vector_search(query, 10, selective)
        assert [h.chunk.id for h in found] == [h.chunk.id for h in expected]
        assert len(found) == 10 and all(h.chunk.metadata["bucket"] == 7 for h in found)
        # 10% (300 chunks, over exact_limit): HNSW with an iterative scan still fills k
        broad = parse_filter("bucket < 10")
        assert len(indexed.vector_search(query, 10, broad)) == 10
    assert np.mean(recalls) >= 0.95, recalls
    indexed.close()
    exact.close()


# -- BM25 against the SQLite store -----------------------------------------------------------

WORDS = (
    "cell cells protein proteins increase increasing running runner café résumé gene genes "
    "expression mouse mice tumour tumor growth factor signal signalling zebrafish covid_19 "
    "the of and risk patients trial dose"
).split()


def _same_ranking(got: list[Hit], want: list[Hit]) -> None:
    """Equal scores, and equal chunks up to the order among equal scores (ties are ordered by
    chunk id here, by row id in SQLite); a tie cut by the k-th place may keep other chunks."""
    assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-9)
    if not want:
        return
    last = want[-1].score
    above = [h for h in want if h.score > last * (1 + 1e-9)]
    assert {h.chunk.id for h in got[: len(above)]} == {h.chunk.id for h in above}


def test_bm25_equals_the_sqlite_stores(pg_url: str, tmp_path: Path) -> None:
    rng = random.Random(7)
    postgres = connect(pg_url)
    sqlite = SQLiteStore(tmp_path / "index", keyword_cache=False)  # FTS5's own bm25()
    writes = []
    for i in range(300):
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 40))) for _ in range(2)]
        document, chunks = make_document(f"doc{i}.md", texts)
        writes.append(DocumentWrite(document, chunks, vectors_for("x", len(chunks))))
    # a chunk continuing a table is indexed with the table's header
    document, (chunk,) = make_document("table.md", ["| 3 | apples |"])
    chunk = dataclasses.replace(chunk, metadata={"table_header": "| quantity | fruit |"})
    writes.append(DocumentWrite(document, [chunk], vectors_for("x", 1)))
    for store in (postgres, sqlite):
        store.bind_space(SPACE)
        store.write(writes)
        store.delete(writes[0].document.id)
    for length in [rng.randint(1, 6) for _ in range(60)] + [10] * 10 + [30] * 10:
        query = " ".join(rng.choices(WORDS, k=length))  # long queries repeat terms, too
        _same_ranking(postgres.keyword_search(query, 10), sqlite.keyword_search(query, 10))
    where = parse_filter('source in ("doc1.md", "doc2.md", "doc3.md", "doc50.md")')
    _same_ranking(
        postgres.keyword_search("cells genes", 10, where),
        sqlite.keyword_search("cells genes", 10, where),
    )
    assert [h.source for h in postgres.keyword_search("quantity fruit", 5)] == ["table.md"]
    for bm25 in (BM25Parameters(0.6, 0.3), BM25Parameters(2.0, 1.0)):  # not FTS5's own pair
        for length in (1, 3, 6):
            query = " ".join(rng.choices(WORDS, k=length))
            _same_ranking(
                postgres.keyword_search(query, 10, bm25=bm25),
                sqlite.keyword_search(query, 10, bm25=bm25),
            )
    postgres.close()
    sqlite.close()


# -- collections -----------------------------------------------------------------------------


def test_collections_are_separate_with_their_own_spaces(pg_url: str) -> None:
    with PostgresBackend(pg_url) as backend:
        assert backend.collections() == []
        backend.create_collection("papers")
        with pytest.raises(ConfigError, match="already exists"):
            backend.create_collection("papers")
        with pytest.raises(StoreError, match="collections create notes"):
            backend.open("notes", create=False)
        with pytest.raises(ConfigError, match="collection name"):
            backend.open("Bad-Name")
        default, papers = backend.open(), backend.open("papers", create=False)
        default.bind_space(SPACE)
        papers.bind_space(WIDE)
        load_corpus(default)
        document, chunks = make_document("paper.md", ["alpha particles in papers"])
        papers.upsert(document, chunks, np.ones((1, 8), dtype=np.float32))
        assert backend.collections() == ["default", "papers"]
        assert [h.source for h in papers.keyword_search("alpha", 10)] == ["paper.md"]
        assert "paper.md" not in {h.source for h in default.keyword_search("alpha", 10)}
        assert len(default.list_documents()) == 5 and len(papers.list_documents()) == 1
        with pytest.raises(EmbeddingSpaceMismatch):
            papers.bind_space(SPACE)
        assert backend.drop_collection("papers") is True
        assert backend.drop_collection("papers") is False
        assert backend.collections() == ["default"]
        assert len(default.list_documents()) == 5


WIDE = EmbeddingSpace("wide-model", 8, True, "cosine", "wide-fingerprint")


def test_settings_stats_paging_and_vectors(pg_url: str) -> None:
    store = connect(pg_url)
    store.bind_space(SPACE)
    documents = load_corpus(store)
    store.set_setting("chunker", "recursive:512")
    assert store.get_setting("chunker") == "recursive:512"
    assert store.get_setting("missing") is None
    stats = store.stats()
    assert (stats.documents, stats.chunks, stats.space) == (5, 6, SPACE)
    assert stats.characters == sum(len(d.content) for d in documents.values())
    assert stats.database_bytes > 0
    pages, after = [], None
    while page := store.chunk_page(after, 4):
        pages.append(page)
        after = page[-1].id
    ids = [c.id for page in pages for c in page]
    assert ids == sorted(ids) and len(ids) == 6 and [len(p) for p in pages] == [4, 2]
    vectors = store.chunk_vectors([*ids[:2], "nope"])
    assert set(vectors) == set(ids[:2]) and vectors[ids[0]].dtype == np.float32
    assert store.get_chunks([ids[0], "nope"]).keys() == {ids[0]}
    assert store.fingerprints() == {d.source: d.content_hash for d in documents.values()}
    assert store.find_document("c.md") == store.get_document(documents["c.md"].id)
    store.close()
    # reopened by another backend: the schema is there and its version is checked
    again = connect(pg_url, create=False)
    assert again.space == SPACE and again.stats().chunks == 6
    again.set_setting("schema_version", "999")
    with pytest.raises(StoreError, match="schema version 999"):
        connect(pg_url)
    again.close()


def test_a_write_batch_is_one_transaction(pg_url: str) -> None:
    store = connect(pg_url)
    store.bind_space(SPACE)
    good = make_document("good.md", ["fine text"])
    bad_document, _ = make_document("bad.md", ["other text"])
    bad = Chunk("bad", bad_document.id, 0, "not a span", 0, 10)
    with pytest.raises(StoreError):
        store.write(
            [
                DocumentWrite(*good, vectors_for("x", 1)),
                DocumentWrite(bad_document, [bad], vectors_for("x", 1)),
            ]
        )
    assert store.list_documents() == []
    # within a batch, a later document replaces an earlier one with its source
    first = make_document("same.md", ["first version"])
    second = make_document("same.md", ["second version now"])
    one = vectors_for("x", 1)
    store.write([DocumentWrite(*first, one), DocumentWrite(*second, one)])
    assert [c.text for c in store.chunks_of(second[0].id)] == ["second version now"]
    assert len(store.list_documents()) == 1 and store.stats().chunks == 1
    store.close()


def test_the_driver_missing_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragwright\[postgres\]'"):
        PostgresBackend("postgresql://localhost/nothing")


# -- LLM records -----------------------------------------------------------------------------


def test_llm_records_round_trip(pg_url: str) -> None:
    with PostgresBackend(pg_url) as backend:
        records = backend.llm_records()
        assert records.ledger() == [] and records.get_response("k") is None
        assert records.cache_stats() == CacheStats(0, 0)
        records.record_call("request", "gpt-x", Usage(1, 100, 20), 0.5)
        records.record_call("ingest", "gpt-x", Usage(1, 10, 2), None)
        records.record_call("request", "small", Usage(1, 5, 1), None)
        assert records.ledger() == [
            LedgerRow("gpt-x", 2, 110, 22, 0.5),
            LedgerRow("small", 1, 5, 1, None),
        ]
        completion = Completion(
            "the answer", "gpt-x", Usage(1, 7, 3), "stop", (TokenLogprob("the", -0.25),)
        )
        records.put_response("k", completion)
        cached = records.get_response("k")
        assert cached is not None
        assert (cached.text, cached.model, cached.finish_reason) == ("the answer", "gpt-x", "stop")
        assert cached.logprobs == (TokenLogprob("the", -0.25),)
        assert cached.usage.prompt_tokens == 7
        assert records.cache_stats() == CacheStats(1, 1)
        key = records.boundary_key()
        assert len(key) == 32 and backend.llm_records().boundary_key() == key
        assert records.clear_cache() == 1 and records.get_response("k") is None


# -- lost connections and a killed server ----------------------------------------------------


def _terminate_other_connections(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_lost_connections_are_retried(pg_url: str) -> None:
    store = connect(pg_url, pool_size=4)
    store.bind_space(SPACE)
    load_corpus(store)
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    assert store.vector_search(query, 1)[0].source == "a.md"
    assert _terminate_other_connections(pg_url) >= 1
    assert store.vector_search(query, 1)[0].source == "a.md"
    assert _terminate_other_connections(pg_url) >= 1
    document, chunks = make_document("new.md", ["written after the loss"])
    store.upsert(document, chunks, vectors_for("new.md", 1))
    assert [h.source for h in store.keyword_search("loss", 5)] == ["new.md"]
    store.close()


def _ingest_writes(count: int) -> list[DocumentWrite]:
    rng = random.Random(5)
    writes = []
    for i in range(count):
        n = rng.randint(1, 12)
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(3, 30))) for _ in range(n)]
        document, chunks = make_document(f"ingest/{i:05d}.md", texts, {"chunks": n})
        writes.append(DocumentWrite(document, chunks, vectors_for("x", n)))
    return writes


def _assert_whole(url: str, expected: int | None = None) -> int:
    """Every stored document has all its chunks, every chunk its postings, no orphans, and
    the BM25 counters equal what is stored. Returns how many documents there are."""
    s = "ragwright_default"
    with psycopg.connect(url) as conn:
        torn = conn.execute(
            f"SELECT d.source, (d.metadata ->> 'chunks')::int, count(c.id) FROM {s}.documents d "
            f"LEFT JOIN {s}.chunks c ON c.document_id = d.id GROUP BY d.id "
            "HAVING count(c.id) <> (d.metadata ->> 'chunks')::int"
        ).fetchall()
        assert torn == []
        (unindexed,) = conn.execute(
            f"SELECT count(*) FROM {s}.chunks c WHERE NOT EXISTS "
            f"(SELECT 1 FROM {s}.postings p WHERE p.chunk_id = c.id)"
        ).fetchone()
        (orphans,) = conn.execute(
            f"SELECT count(*) FROM {s}.postings p WHERE NOT EXISTS "
            f"(SELECT 1 FROM {s}.chunks c WHERE c.id = p.chunk_id)"
        ).fetchone()
        assert (unindexed, orphans) == (0, 0)
        counted = conn.execute(f"SELECT sum(chunks), sum(tokens) FROM {s}.bm25_stats").fetchone()
        stored = conn.execute(f"SELECT count(*), coalesce(sum(tokens), 0) FROM {s}.chunks")
        assert counted == stored.fetchone()
        (documents,) = conn.execute(f"SELECT count(*) FROM {s}.documents").fetchone()
    if expected is not None:
        assert documents == expected
    return int(documents)


def _kill(server: Any) -> None:
    """SIGKILL the postmaster and every server process under it: a crash, not a shutdown."""
    postmaster = psutil.Process(server.get_pid())
    processes = [postmaster, *postmaster.children(recursive=True)]
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):  # a child may exit as its parent dies
            process.kill()
    psutil.wait_procs(processes, timeout=10)


def _restart(server: Any) -> None:
    with server._lock:  # pgserver's own cross-process lock around starting a server
        server.ensure_postgres_running()


def _wait_for_documents(url: str, count: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT to_regclass('ragwright_default.documents')").fetchone()
            if found and found[0] and conn.execute(
                "SELECT count(*) FROM ragwright_default.documents"
            ).fetchone()[0] >= count:  # fmt: skip
                return
        time.sleep(0.02)
    raise AssertionError(f"the ingest did not reach {count} documents in {seconds} s")


def test_a_server_killed_during_an_ingest_loses_nothing_and_a_rerun_converges() -> None:
    server = start_server("rwpk")  # its own server: this test kills it
    try:
        url = create_database(server)
        writes = _ingest_writes(300)
        writer = connect(url, retry_seconds=60)
        probe = connect(url, retry_seconds=1, connect_timeout=1)
        writer.bind_space(SPACE)
        failures: list[BaseException] = []

        def ingest() -> None:
            try:
                for start in range(0, len(writes), 3):
                    writer.write(writes[start : start + 3])
            except BaseException as error:
                failures.append(error)

        thread = threading.Thread(target=ingest)
        thread.start()
        _wait_for_documents(url, 30)
        _kill(server)
        with pytest.raises(StoreError, match="did not answer"):  # the server stays away
            probe.list_documents()
        _restart(server)
        before = _assert_whole(url)
        assert 30 <= before <= len(writes)
        thread.join(120)
        assert not thread.is_alive() and failures == []  # the writer's retries carried on
        _assert_whole(url, len(writes))
        for start in range(0, len(writes), 50):  # running the ingest again changes nothing
            writer.write(writes[start : start + 50])
        _assert_whole(url, len(writes))
        assert writer.fingerprints() == {w.document.source: w.document.content_hash for w in writes}
        writer.close()
        probe.close()
    finally:
        server.cleanup()


def test_processes_creating_one_collection_at_once_all_succeed(pg_url: str) -> None:
    """Schema creation and binding the space are serialized by advisory locks."""
    url = pg_url.replace("postgresql://", "postgres://", 1)  # both spellings are accepted
    opened: list[Any] = []
    failures: list[BaseException] = []

    def open_and_bind() -> None:
        try:
            store = connect(url, "race")
            store.bind_space(SPACE)
            opened.append(store)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=open_and_bind) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(opened) == 4
    assert {store.space for store in opened} == {SPACE}
    for store in opened:
        store.close()


def test_an_index_opens_a_postgresql_url_through_the_entry_point(
    pg_url: str, tmp_path: Path
) -> None:
    backend = open_backend(pg_url)
    assert isinstance(backend, PostgresBackend) and "postgresql://" in backend.location
    backend.close()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tea.md").write_text("# Tea\n\nGreen tea is steamed.\n", "utf-8")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([tmp_path / "docs"]).ok
        [hit] = kb.search("steamed tea", mode="bm25")
        assert hit.source.endswith("docs/tea.md")
        assert kb.search("green tea")[0].source == hit.source


def test_a_filter_past_the_limits_is_unsupported_on_postgres(pg_url: str) -> None:
    """The limits SQLite's compiler checks hold here too: a filter built in Python (not
    parsed) past them is refused before any SQL, never a server error."""
    from ragwright.filters import MAX_VALUES, Comparison, In, Or

    store = connect(pg_url)
    try:
        store.bind_space(SPACE)
        load_corpus(store)
        for where in (
            Or(tuple(Comparison("year", "=", i) for i in range(495))),
            In("year", tuple(range(MAX_VALUES + 1))),
        ):
            with pytest.raises(UnsupportedFilter, match="the filter"):
                store.vector_search(np.ones(4, dtype=np.float32), 3, where)
            with pytest.raises(UnsupportedFilter, match="the filter"):
                store.keyword_search("alpha", 3, where)
    finally:
        store.close()


def test_check_finds_bad_offsets_and_repair_refuses_them(pg_url: str, tmp_path: Path) -> None:
    import json

    from cli_helpers import runner
    from ragwright.cli import app

    docs = tmp_path / "docs"
    docs.mkdir()
    rows = "\n".join(f"Town{i},{1000 + i}" for i in range(80))
    (docs / "cities.csv").write_text(f"City,Population\n{rows}\n", encoding="utf-8")
    (docs / "notes.md").write_text("# Notes\n\nInstall it with the package manager.\n")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs]).ok
    result = runner.invoke(app, ["check", "--index", pg_url, "--json"])
    assert result.exit_code == 0, result.output
    [report] = json.loads(result.stdout)
    assert [f["name"] for f in report["findings"] if f["ok"]] == [
        "schema", "settings", "postings", "orphans", "offsets", "vectors", "graph"
    ]  # fmt: skip
    assert report["counts"]["documents"] == 2 and report["counts"]["chunks"] > 2
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE ragwright_default.chunks SET char_end = char_end + 1 "
            "WHERE id = (SELECT min(id) FROM ragwright_default.chunks)"
        )
        conn.execute(
            "DELETE FROM ragwright_default.postings "
            "WHERE chunk_id = (SELECT max(id) FROM ragwright_default.chunks)"
        )
    result = runner.invoke(app, ["check", "--index", pg_url, "--json"])
    assert result.exit_code == 1
    [report] = json.loads(result.stdout)
    failed = {f["name"] for f in report["findings"] if not f["ok"]}
    assert failed == {"offsets", "postings"}
    assert report["counts"]["bad_offsets"] == 1 and report["counts"]["unindexed_chunks"] == 1
    result = runner.invoke(app, ["repair", "--index", pg_url])
    assert result.exit_code == 1 and "cannot fix" in result.stderr
    assert "offsets:" in result.stderr and "postings:" in result.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [("embedding_space", '{"dimension": 4, '), ("chunking", "[]"), ("parser_options", "7")],
)
def test_a_broken_settings_row_is_named_by_check_and_every_command(
    pg_url: str, tmp_path: Path, key: str, value: str
) -> None:
    import json

    from cli_helpers import runner
    from ragwright.cli import app

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nInstall it with the package manager.\n")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs]).ok
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE ragwright_default.settings SET value = %s WHERE key = %s", (value, key)
        )
    result = runner.invoke(app, ["check", "--index", pg_url, "--json"])
    assert result.exit_code == 1, result.output
    [report] = json.loads(result.stdout)
    failed = {f["name"] for f in report["findings"] if not f["ok"]}
    assert f"setting:{key}" in failed and failed <= {f"setting:{key}", "vectors"}
    stopped = []
    for command in (["search", "install"], ["ask", "how to install?"], ["stats"],
                    ["ingest", str(docs)]):  # fmt: skip
        result = runner.invoke(app, [*command, "--index", pg_url])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        if result.exit_code == 0:  # a command that does not read the row
            continue
        assert result.exit_code == 2, (command, result.output)
        assert f"broken setting {key!r}" in result.stderr, (command, result.stderr)
        assert "`ragwright repair`" in result.stderr
        stopped.append(command[0])
    assert "ingest" in stopped  # it reads every one of these rows
    result = runner.invoke(app, ["repair", "--index", pg_url])
    assert result.exit_code == 0, result.output
    assert repr(key) in result.stdout
    result = runner.invoke(app, ["check", "--index", pg_url])
    assert result.exit_code == 0, result.output
    for command in (["search", "install"], ["ingest", str(docs)]):
        result = runner.invoke(app, [*command, "--index", pg_url])
        assert result.exit_code == 0, (command, result.output)


def test_repair_refuses_a_row_it_cannot_restore_and_writes_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    from cli_helpers import runner
    from ragwright.cli import app

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nInstall it with the package manager.\n")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs]).ok
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for key, value in (("fts_tokenizer", "klingon"), ("chunking", "[]")):
            conn.execute(
                "UPDATE ragwright_default.settings SET value = %s WHERE key = %s", (value, key)
            )
    result = runner.invoke(app, ["repair", "--index", pg_url])
    assert result.exit_code == 1 and "setting:fts_tokenizer" in result.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT value FROM ragwright_default.settings WHERE key = 'chunking'"
        ).fetchone()
    assert row == ("[]",)  # refused before anything was written
