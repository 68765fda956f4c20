"""``ragwright reindex --chunker``: a new chunking is built beside the current one from the
stored text while searches go on, swapped in one transaction, resumed after a kill, rolled
back, its previous chunks dropped, and the graph re-extracted for the new chunks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_helpers import app, ingest_sample_docs, runner
from ragwright import Index
from ragwright.errors import ConfigError
from ragwright.index import ChunkingConfig
from ragwright.pipeline.rebuild.rechunk import RechunkReport
from ragwright.pipeline.search.one_chunking import OneChunking
from ragwright.ports import CHUNKING_GENERATION

EMBEDDER = "hashing:64"
TOPICS = ["apples", "rivers", "engines", "music", "stars", "bread", "tides", "glass"]
SMALL = ChunkingConfig("sentence", {"max_size": 60})


def write_docs(folder: Path, count: int = 30) -> None:
    """Notes of four sentences each (one chunk by default, four with `SMALL`)."""
    folder.mkdir()
    for i in range(count):
        sentences = [
            f"Note {i} tells of {TOPICS[(i + k) % len(TOPICS)]} and Item{i}x{k}." for k in range(4)
        ]
        (folder / f"note{i}.txt").write_text(" ".join(sentences), "utf-8")


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An index of 30 notes (one chunk each, with graph facts) in either store."""
    if request.param == "sqlite":
        where = str(tmp_path / "index")
    else:
        where = request.getfixturevalue("pg_url")
    write_docs(tmp_path / "docs")
    with Index(where, embedder=EMBEDDER) as kb:
        assert kb.ingest([tmp_path / "docs"], base=tmp_path, extractor="capitalized").ok
    return where


def chunk_ids(kb: Index) -> set[str]:
    return {chunk.id for chunk in kb.documents.export.chunk_page(None, 10_000)}


def rechunk(kb: Index, **options: object) -> RechunkReport:
    report = kb.spaces.reindex(None, chunking=SMALL, **options)  # type: ignore[arg-type]
    assert isinstance(report, RechunkReport)
    return report


def test_a_rechunk_goes_on_while_searches_see_one_chunking_each_and_no_error(
    location: str,
) -> None:
    with Index(location) as kb:
        old = chunk_ids(kb)
    errors: list[BaseException] = []
    seen: list[set[str]] = []
    stop = threading.Event()
    searches = threading.Semaphore(0)

    def search_loop() -> None:
        with Index(location) as reader:  # as `serve` does
            n = 0
            while not stop.is_set():
                try:
                    query = f"{TOPICS[n % len(TOPICS)]} Item{n % 30}x1"
                    hits = reader.search(query, mode="hybrid", top_k=5)
                    seen.append({hit.chunk.id for hit in hits})
                except BaseException as error:  # the assertion below names any
                    errors.append(error)
                n += 1
                searches.release()

    thread = threading.Thread(target=search_loop, daemon=True)
    thread.start()
    for _ in range(5):  # some searches before the re-chunk starts...
        assert searches.acquire(timeout=60)
    with Index(location) as kb:
        report = rechunk(kb, batch=8, sample=10)
        new = chunk_ids(kb)
    for _ in range(5):  # ...and some after the swap
        assert searches.acquire(timeout=60)
    stop.set()
    thread.join(timeout=60)
    assert errors == []
    assert not old & new
    assert all(ids and (ids <= old or ids <= new) for ids in seen), seen
    assert any(ids <= old for ids in seen) and seen[-1] <= new
    assert (report.documents, report.chunked, report.chunks, report.swapped) == (30, 30, 120, True)
    assert report.embedded == 120 and len(new) == 120
    assert report.agreement is not None and report.agreement.queries == 10
    assert report.agreement.self_found_current == report.agreement.self_found_staged == 1.0


def test_after_a_rechunk_the_graph_belongs_to_the_new_chunks_and_a_rollback_restores_the_old(
    location: str,
) -> None:
    with Index(location) as kb:
        old = chunk_ids(kb)
        before = [h.chunk.id for h in kb.search("rivers Item3x1", mode="hybrid", top_k=5)]
        report = rechunk(kb, sample=0)
        assert (report.graph_chunks_dropped, report.graph_chunks_extracted) == (30, 120)
        new = chunk_ids(kb)
        stats = kb.graph.stats()
        assert stats.chunks_total == stats.extracted["capitalized:1"] == 120
        mentioned = {c for entity in kb.graph.export().entities for c in entity.chunks}
        assert mentioned and mentioned <= new  # no mention points at a dropped chunk
        assert kb.ingestion.chunking == SMALL
        hits = kb.search("Item3x1", mode="bm25", top_k=1)
        assert hits[0].chunk.text == "Note 3 tells of stars and Item3x1."
        for hit in kb.search("tides", mode="vector", top_k=20):
            document = kb.documents.get(hit.chunk.document_id)
            assert document is not None
            assert document.content[hit.chunk.char_start : hit.chunk.char_end] == hit.chunk.text
        kb.spaces.swap("previous")
        assert chunk_ids(kb) == old and kb.ingestion.chunking == ChunkingConfig()
        mentioned = {c for entity in kb.graph.export().entities for c in entity.chunks}
        assert mentioned and mentioned <= old  # extracted again for the chunks brought back
        assert kb.graph.stats().extracted["capitalized:1"] == 30
        after = [h.chunk.id for h in kb.search("rivers Item3x1", mode="hybrid", top_k=5)]
        assert after == before
        previous = kb.spaces.chunking_status().previous
        assert previous is not None and previous.chunks == 120
        kb.spaces.drop("previous")
        assert kb.spaces.chunking_status().previous is None
        with pytest.raises(Exception, match="no previous space"):
            kb.spaces.swap("previous")


def test_an_embedder_reindex_and_a_rechunk_wait_for_each_other(location: str) -> None:
    with Index(location) as kb:
        rechunk(kb, sample=0, swap=False)
        with pytest.raises(ConfigError, match=r"re-chunk .* is under way"):
            kb.spaces.reindex("hashing:128")
        kb.spaces.drop("staged")
        kb.spaces.reindex("hashing:128", swap=False, sample=0)
        with pytest.raises(ConfigError, match="embedder reindex is under way"):
            rechunk(kb)
        kb.spaces.drop("staged")
        report = kb.spaces.reindex("hashing:128", chunking=SMALL, sample=0)
        assert isinstance(report, RechunkReport) and report.chunks == 120
        assert kb.embedding.spec == "hashing:128" and kb.space is not None
        assert kb.space.dimension == 128
        assert len(kb.search("bread", mode="vector", top_k=3)) == 3
        kb.spaces.reindex("hashing:64", sample=0)  # an embedder swap after the re-chunk
        assert kb.spaces.chunking_status().previous is None  # one rollback: the last swap's
        previous = kb.spaces.status().previous
        assert previous is not None and previous.embedder == "hashing:128"
        kb.spaces.swap("previous")
        assert kb.embedding.spec == "hashing:128" and len(chunk_ids(kb)) == 120


RESUMABLE = """
import sys, time
from ragwright import Index
from ragwright.index import ChunkingConfig
from ragwright.chunkers import create_chunker
from ragwright.pipeline.rebuild.rechunk import Rechunker
from ragwright.ports import Chunking
from ragwright.testing import HashingEmbedder

class Logged(HashingEmbedder):
    def embed_documents(self, texts):
        if SLOW:
            time.sleep(0.2)
        vectors = super().embed_documents(texts)
        with open(LOG, "a") as log:
            log.write(f"{len(texts)}\\n")
        return vectors

location, LOG, SLOW = sys.argv[1], sys.argv[2], sys.argv[3] == "slow"
chunking = ChunkingConfig("sentence", {"max_size": 60})
new = Logged(64)
with Index(location) as kb:
    Rechunker(
        kb._store, kb._store, kb._store, current=kb.embedder,
        chunker=create_chunker(chunking.name, token_counter=new, **chunking.options),
        embedder=new, chunking=Chunking(chunking.spec, new.space, "hashing:64"),
        max_chunk_chars=20_000, batch=4,
    ).build()
"""


def test_a_killed_rechunk_resumes_without_chunking_anything_twice(
    location: str, tmp_path: Path
) -> None:
    script = tmp_path / "resumable.py"
    script.write_text(RESUMABLE, "utf-8")
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    command = [sys.executable, str(script), location]
    process = subprocess.Popen([*command, str(first), "slow"])
    try:
        deadline = time.monotonic() + 60
        while not first.exists() or len(first.read_text().split()) < 3:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    with Index(location) as kb:
        staged = kb.spaces.chunking_status().staged
    assert staged is not None and 0 < staged.documents < 30
    assert staged.chunks == 4 * staged.documents
    subprocess.run([*command, str(second), "fast"], check=True, timeout=120)
    embedded_again = sum(int(n) for n in second.read_text().split())
    assert embedded_again == 4 * (30 - staged.documents)  # only what was not committed
    with Index(location) as kb:
        report = rechunk(kb, sample=0)  # nothing is left to build: it checks and swaps
        assert (report.chunked, report.embedded, report.chunks) == (0, 0, 120)
        assert len(chunk_ids(kb)) == 120


def test_the_cli_rechunks_rolls_back_and_drops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    before = json.loads(runner.invoke(app, ["stats", "--json"]).output)["chunks"]
    result = runner.invoke(
        app, ["reindex", "--chunker", "sentence", "--chunk-size", "20", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["swapped"] and report["chunks"] > before
    assert json.loads(report["chunking"]) == {"name": "sentence", "options": {"max_size": 20}}
    result = runner.invoke(app, ["reindex", "--rollback", "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert status["chunkings"]["previous"]["chunks"] == report["chunks"]
    assert status["chunks"] == before
    result = runner.invoke(app, ["reindex", "--drop-previous"])
    assert result.exit_code == 0 and "chunking" not in result.output
    result = runner.invoke(app, ["reindex", "--chunk-size", "20", "--no-swap"])
    assert result.exit_code == 2 and "overlap (100) must be smaller" in result.output
    result = runner.invoke(
        app, ["reindex", "--chunk-size", "20", "--chunk-overlap", "0", "--no-swap"]
    )
    assert result.exit_code == 0, result.output
    assert "not swapped" in result.output
    result = runner.invoke(app, ["reindex", "--rollback"])
    assert result.exit_code == 2 and "no previous space" in result.output


class Settings(dict[str, str]):
    """Settings in memory (the `IndexSettings` a search's guard reads)."""

    def get_setting(self, key: str) -> str | None:
        return self.get(key)


def test_a_retrieval_a_swap_overlapped_runs_again() -> None:
    settings = Settings({CHUNKING_GENERATION: "1"})
    runs: list[str] = []

    def retrieve() -> str:
        runs.append(settings[CHUNKING_GENERATION])
        if len(runs) == 1:  # a swap commits while the first run reads
            settings[CHUNKING_GENERATION] = "2"
        return f"hits of generation {runs[-1]}"

    guard = OneChunking(settings)  # type: ignore[arg-type]
    assert guard.run(retrieve) == "hits of generation 2"
    assert runs == ["1", "2"]
    # The next search takes the generation read after this one as its "before": a swap
    # committed between the two searches is seen after the next retrieval, which runs again.
    settings[CHUNKING_GENERATION] = "3"
    assert guard.run(retrieve) == "hits of generation 3"
    assert runs == ["1", "2", "3", "3"]
    assert guard.run(retrieve) == "hits of generation 3" and len(runs) == 5


KILLED_AFTER_ITS_SWAP = """
import os, signal, sys
from ragwright import Index
from ragwright.index import ChunkingConfig

with Index(sys.argv[1]) as kb:
    store = kb._store
    swap = store.swap_chunking

    def swap_then_die(slot):
        swap(slot)  # committed: the old chunks' graph facts went with them
        os.kill(os.getpid(), signal.SIGKILL)  # before their replacements are extracted

    store.swap_chunking = swap_then_die
    kb.spaces.reindex(None, chunking=ChunkingConfig("sentence", {"max_size": 60}), sample=0)
"""


def graph_findings(location: str) -> tuple[int, dict[str, str]]:
    result = runner.invoke(app, ["check", "--index", location, "--json"])
    [report] = json.loads(result.stdout)
    return result.exit_code, {f["name"]: f["detail"] for f in report["findings"] if not f["ok"]}


def test_a_rechunk_killed_just_after_its_swap_is_noticed_and_the_next_run_extracts_the_graph(
    location: str, tmp_path: Path
) -> None:
    script = tmp_path / "killed.py"
    script.write_text(KILLED_AFTER_ITS_SWAP, "utf-8")
    killed = subprocess.run([sys.executable, str(script), location], timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL
    with Index(location) as kb:
        assert len(chunk_ids(kb)) == 120  # the swap committed ...
        assert kb.graph.stats().extracted.get("capitalized:1", 0) == 0  # ... no facts since
    code, failed = graph_findings(location)
    assert code == 1 and set(failed) == {"graph"}, failed
    assert "`ragwright graph build`" in failed["graph"]
    if not location.startswith("postgresql"):  # repair leaves it to them, and says so
        result = runner.invoke(app, ["repair", "--index", location])
        assert result.exit_code == 1 and "still FAIL graph" in result.stdout, result.output
    result = runner.invoke(
        app, ["reindex", "--chunker", "sentence", "--chunk-size", "60", "--index", location]
    )  # the same command again, as its user would run it
    assert result.exit_code == 0, result.output
    with Index(location) as kb:
        stats = kb.graph.stats()
        assert stats.chunks_total == stats.extracted["capitalized:1"] == 120
        mentioned = {c for entity in kb.graph.export().entities for c in entity.chunks}
        assert mentioned and mentioned <= chunk_ids(kb)
    assert graph_findings(location) == (0, {})
