"""``ragwright reindex``: a new space is built beside the current one from the stored chunks
while searches go on, swapped in one transaction, resumed after a kill without embedding
anything twice, rolled back, and its previous space dropped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import app, ingest_sample_docs, runner
from ragwright import Index
from ragwright.errors import EmbeddingSpaceMismatch
from ragwright.models import Hit
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

OLD, NEW = "hashing:64", "hashing:128"
TOPICS = ["apples", "rivers", "engines", "music", "stars", "bread", "tides", "glass"]


def write_docs(folder: Path, count: int = 60) -> None:
    folder.mkdir()
    for i in range(count):
        words = " ".join(TOPICS[(i + k) % len(TOPICS)] for k in range(3))
        (folder / f"note{i}.txt").write_text(f"Note {i} is about {words} and item{i}.", "utf-8")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    write_docs(tmp_path / "docs")
    with Index(tmp_path / "index", embedder=OLD) as kb:
        assert kb.ingest([tmp_path / "docs"]).ok
    return tmp_path / "index"


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An index of 60 notes (hashing:64) in either store."""
    if request.param == "sqlite":
        where = str(tmp_path / "index")
    else:
        where = request.getfixturevalue("pg_url")
    write_docs(tmp_path / "docs")
    with Index(where, embedder=OLD) as kb:
        assert kb.ingest([tmp_path / "docs"], base=tmp_path).ok
    return where


def stored_vectors(index: str | Path) -> dict[str, np.ndarray]:
    with Index(index) as kb:
        ids = [c.id for c in kb.documents.export.chunk_page(None, 10_000)]
        return {i: np.asarray(v) for i, v in kb.documents.export.chunk_vectors(ids).items()}


def expected_vectors(index: str | Path, spec: str) -> dict[str, np.ndarray]:
    embedder = HashingEmbedder(int(spec.split(":")[1]))
    with Index(index) as kb:
        chunks = kb.documents.export.chunk_page(None, 10_000)
    vectors = embedder.embed_documents([c.indexed_text for c in chunks])
    return {c.id: np.asarray(v) for c, v in zip(chunks, vectors, strict=True)}


def space_of(hits: list[Hit], query: str, spaces: dict[str, dict[str, np.ndarray]]) -> set[str]:
    """The spaces whose vectors give exactly these hits' scores for ``query``."""
    found = set()
    for spec, vectors in spaces.items():
        q = np.asarray(HashingEmbedder(int(spec.split(":")[1])).embed_query(query))
        if all(abs(float(vectors[h.chunk.id] @ q) - h.score) < 1e-4 for h in hits):
            found.add(spec)
    return found


def test_reindex_goes_on_while_searches_see_one_space_each_and_no_error(
    location: str,
) -> None:
    index_dir = location
    spaces = {OLD: stored_vectors(index_dir), NEW: expected_vectors(index_dir, NEW)}
    errors: list[BaseException] = []
    seen: list[set[str]] = []
    stop = threading.Event()
    searches = threading.Semaphore(0)

    def search_loop() -> None:
        with Index(index_dir) as reader:  # follows the recorded embedder, as `serve` does
            n = 0
            while not stop.is_set():
                query = f"{TOPICS[n % len(TOPICS)]} item{n % 60}"
                try:
                    hits = reader.search(query, mode="vector", top_k=5)
                    seen.append(space_of(hits, query, spaces))
                except BaseException as error:  # the assertion below names any
                    errors.append(error)
                n += 1
                searches.release()

    thread = threading.Thread(target=search_loop, daemon=True)
    thread.start()
    for _ in range(5):  # some searches before the reindex starts...
        assert searches.acquire(timeout=60)
    with Index(index_dir) as kb:
        report = kb.spaces.reindex(NEW, batch=4, sample=20)
    while searches.acquire(blocking=False):  # those done during the reindex count not
        pass
    for _ in range(5):  # ...and some after the swap (the first may have begun before it)
        assert searches.acquire(timeout=60)
    stop.set()
    thread.join(timeout=60)
    assert errors == []
    assert all(len(spaces_matched) == 1 for spaces_matched in seen), seen
    assert {next(iter(s)) for s in seen} == {OLD, NEW}
    assert seen[-1] == {NEW}
    assert (report.embedded, report.chunks, report.swapped) == (60, 60, True)
    assert report.agreement is not None and report.agreement.queries == 20
    assert report.agreement.self_found_current == report.agreement.self_found_staged == 1.0


def test_after_a_swap_the_index_holds_the_new_vectors_and_rolls_back_to_the_old(
    index_dir: Path,
) -> None:
    old = stored_vectors(index_dir)
    with Index(index_dir) as kb:
        kb.spaces.reindex(NEW, sample=0)
        assert (kb.embedding.spec, kb.space.dimension) == (NEW, 128)
        assert kb.spaces.status().previous.embedder == OLD
    new = stored_vectors(index_dir)
    expected = expected_vectors(index_dir, NEW)
    assert all(np.allclose(new[i], expected[i], atol=1e-6) for i in expected)
    with Index(index_dir, embedder=OLD) as stale, pytest.raises(EmbeddingSpaceMismatch) as error:
        stale.search("apples", mode="vector")
    assert "ragwright reindex --embedder" in str(error.value)
    with Index(index_dir) as kb:
        kb.spaces.swap("previous")
        assert kb.embedding.spec == OLD
        hits = kb.search("apples item3", mode="vector", top_k=3)
        assert space_of(hits, "apples item3", {OLD: old}) == {OLD}
    rolled_back = stored_vectors(index_dir)
    assert all(np.array_equal(rolled_back[i], old[i]) for i in old)


def test_dropping_the_previous_space_frees_its_vectors(index_dir: Path) -> None:
    with Index(index_dir) as kb:
        kb.spaces.reindex(NEW, sample=0)
        kb.spaces.drop("previous")
        assert kb.spaces.status().previous is None
    with SQLiteStore(index_dir, read_only=True) as store:
        assert store._db.query("SELECT count(*) FROM space_vectors")[0][0] == 0


RESUMABLE = """
import sys, time
from pathlib import Path
from ragwright.pipeline.rebuild.reindex import Reindexer
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

class Logged(HashingEmbedder):
    def embed_documents(self, texts):
        if SLOW:
            time.sleep(0.2)
        vectors = super().embed_documents(texts)
        with open(LOG, "a") as log:
            log.write(f"{len(texts)}\\n")
        return vectors

index, LOG, SLOW = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "slow"
with SQLiteStore(index) as store:
    reindexer = Reindexer(
        store, store, store, current=HashingEmbedder(64), embedder=Logged(128),
        embedder_spec="hashing:128", batch=3,
    )
    reindexer.build()
"""


def test_a_killed_reindex_resumes_without_embedding_anything_twice(
    index_dir: Path, tmp_path: Path
) -> None:
    script = tmp_path / "resumable.py"
    script.write_text(RESUMABLE, "utf-8")
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    command = [sys.executable, str(script), str(index_dir)]
    process = subprocess.Popen([*command, str(first), "slow"])
    try:
        deadline = time.monotonic() + 60
        while not first.exists() or len(first.read_text().split()) < 4:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    with SQLiteStore(index_dir, read_only=True) as store:
        staged = store.space_status().staged
    assert staged is not None and 0 < staged.vectors < 60
    subprocess.run([*command, str(second), "fast"], check=True, timeout=120)
    embedded_again = sum(int(n) for n in second.read_text().split())
    assert embedded_again == 60 - staged.vectors  # only what the killed run had not committed
    with Index(index_dir) as kb:
        kb.spaces.swap("staged")
    assert stored_vectors(index_dir).keys() == expected_vectors(index_dir, NEW).keys()
    new, expected = stored_vectors(index_dir), expected_vectors(index_dir, NEW)
    assert all(np.allclose(new[i], expected[i], atol=1e-6) for i in expected)


def test_the_cli_reindexes_rolls_back_and_drops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, ["reindex", "--embedder", NEW, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["embedder"], report["swapped"], report["chunks"]) == (
        NEW,
        True,
        report["embedded"],
    )
    result = runner.invoke(app, ["reindex", "--rollback", "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    assert (status["embedder"], status["previous"]["embedder"]) == ("hashing", NEW)
    result = runner.invoke(app, ["reindex", "--drop-previous", "--json"])
    assert json.loads(result.output)["previous"] is None
    result = runner.invoke(app, ["reindex", "--rollback"])
    assert result.exit_code == 2 and "no previous space" in result.output
    result = runner.invoke(app, ["reindex"])
    assert result.exit_code == 2 and "give one of --embedder" in result.output
