"""`ingest --engine ray` on a real local Ray cluster (2 CPUs, loopback, started once for the
module): the same documents, chunks, vectors and search results as a local ingest, into
PostgreSQL (workers write) and SQLite (the driver writes); a killed worker is reported and a
re-run converges; a crashing parser fails its file alone; a cluster that cannot be reached or
is too small is a `ClusterError`. Every test has a hard timeout."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray

from ragwright import ChunkingConfig, ClusterError, Index, IngestReport
from ragwright.chunkers import create_chunker
from ragwright.distributed.cluster import RaySettings, connected, worker_count
from ragwright.distributed.ray_ingest import ingest_on_ray
from ragwright.distributed.recipe import ChunkerRecipe, EmbedderRecipe, WorkerRecipe
from ragwright.models import document_id_for
from ragwright.parsers import MarkdownParser, ParserRegistry
from ragwright.parsers.options import ParserOptions
from ragwright.pipeline.ingest.ingestor import IngestOptions, Ingestor, Progress
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CHUNKING = ChunkingConfig("recursive", {"size": 240, "overlap": 30})
#: Two workers, two files a task: several tasks per run, in flight on both workers at once.
CLUSTER = RaySettings(workers=2, files_per_task=2)
TOPICS = ("tea", "granite", "comets", "violins", "glaciers", "bees", "ferries", "lichens")


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[None]:
    """One local cluster for the module, on loopback; its workers find `ray_helpers` (their
    parse child processes too) through PYTHONPATH."""
    here = str(Path(__file__).parent)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([here, *([saved] if saved else [])])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        object_store_memory=128 * 1024 * 1024,
        configure_logging=False,
        log_to_driver=False,
    )
    try:
        yield
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number, topic in enumerate(TOPICS):
        paragraphs = [
            f"# {topic.title()}\n",
            *(
                f"Paragraph {k} about {topic}: the {topic} of site {number} were measured "
                f"{k + number} times, and each note on {topic} cites the survey of year {1900 + k}."
                for k in range(number + 2)
            ),
        ]
        (docs / f"{topic}.md").write_text("\n\n".join(paragraphs) + "\n")
    return docs


def ingest(location: str | Path, folder: Path, embedder: Any, **options: Any) -> IngestReport:
    with Index(location, embedder=embedder, collection=options.pop("collection", "default")) as kb:
        kb.ingestion.name_sources_from(folder.parent)
        return kb.ingest([folder], chunking=CHUNKING, **options)


def contents(location: str | Path, collection: str = "default") -> dict[str, Any]:
    """Every chunk (id → document, position, offsets, text, vector) and a few searches."""
    with Index(location, embedder=HashingEmbedder(), collection=collection, create=False) as kb:
        chunks = []
        while page := kb.documents.export.chunk_page(chunks[-1].id if chunks else None, 500):
            chunks.extend(page)
        vectors = kb.documents.export.chunk_vectors([chunk.id for chunk in chunks])
        searches = {
            (query, mode): [(h.chunk.id, round(h.score, 6)) for h in kb.search(query, mode=mode)]
            # Topic words, not words of every chunk ("survey", "site"): a hybrid ranking's
            # fusion is normalized over each arm's candidates, and chunks tied at BM25's idf
            # floor come in write order, which parallel workers do not keep.
            for query in ("tea bees", "comets", "violins lichens")
            for mode in ("vector", "bm25", "hybrid")
        }  # fmt: skip
    return {
        "chunks": {
            c.id: (c.document_id, c.index, c.char_start, c.char_end, c.text) for c in chunks
        },
        "vectors": {chunk_id: np.asarray(vector) for chunk_id, vector in vectors.items()},
        "searches": searches,
    }


def assert_same(local: dict[str, Any], distributed: dict[str, Any]) -> None:
    assert distributed["chunks"] == local["chunks"]
    assert len(local["chunks"]) > len(TOPICS)  # several chunks per document
    for chunk_id, vector in local["vectors"].items():
        np.testing.assert_allclose(distributed["vectors"][chunk_id], vector, atol=1e-6)
    assert untied(distributed["searches"]) == untied(local["searches"])


def untied(
    searches: dict[Any, list[tuple[str, float]]],
) -> dict[Any, list[tuple[str | None, float]]]:
    """Each ranking's scores, with the chunk of each score no other hit shares: equal scores
    rank in the order their chunks were written (both stores), and parallel workers write in
    their own order."""
    shown = {}
    for key, hits in searches.items():
        scores = [score for _, score in hits]
        shown[key] = [(i if scores.count(score) == 1 else None, score) for i, score in hits]
    return shown


def test_ray_into_postgres_gives_the_local_chunks_vectors_and_results(
    folder: Path, pg_url: str
) -> None:
    local = ingest(pg_url, folder, "hashing", collection="here")
    on_ray = ingest(pg_url, folder, "hashing", collection="ray", cluster=CLUSTER)
    assert on_ray.added == local.added == [f"docs/{topic}.md" for topic in sorted(TOPICS)]
    assert on_ray.chunks_written == local.chunks_written
    assert on_ray.ok
    assert_same(contents(pg_url, "here"), contents(pg_url, "ray"))


def test_ray_into_sqlite_equals_local_with_progress_prune_and_updates(
    folder: Path, tmp_path: Path
) -> None:
    local = ingest(tmp_path / "here", folder, "hashing")
    seen: list[Progress] = []
    on_ray = ingest(tmp_path / "ray", folder, "hashing", cluster=CLUSTER, progress=seen.append)
    assert (on_ray.added, on_ray.chunks_written) == (local.added, local.chunks_written)
    assert [p.files_done for p in seen] == sorted(p.files_done for p in seen)
    assert (seen[-1].files_done, seen[-1].files_total) == (len(TOPICS), len(TOPICS))
    assert seen[-1].chunks_written == local.chunks_written
    assert_same(contents(tmp_path / "here"), contents(tmp_path / "ray"))

    (folder / "bees.md").unlink()
    (folder / "tea.md").write_text("# Tea\n\nGreen tea is steamed, black tea is oxidised.\n")
    options = IngestOptions(prune=True)
    local = ingest(tmp_path / "here", folder, "hashing", options=options)
    on_ray = ingest(tmp_path / "ray", folder, "hashing", options=options, cluster=CLUSTER)
    assert on_ray.updated == local.updated == ["docs/tea.md"]
    assert on_ray.removed == local.removed == ["docs/bees.md"]
    assert on_ray.unchanged == local.unchanged and len(on_ray.unchanged) == len(TOPICS) - 2
    assert_same(contents(tmp_path / "here"), contents(tmp_path / "ray"))


def test_a_killed_worker_is_reported_and_a_rerun_converges(
    folder: Path, tmp_path: Path, pg_url: str
) -> None:
    marker = tmp_path / "kill-once"
    marker.touch()
    from ray_helpers import KillOnceEmbedder

    killer = KillOnceEmbedder(marker)
    first = ingest(pg_url, folder, killer, collection="ray", cluster=CLUSTER)
    lost = [failure.source for failure in first.failed]
    assert not marker.exists()  # a worker died, on its first embedding call
    assert len(lost) == CLUSTER.files_per_task  # that worker's task, and only it
    assert all("the Ray worker died" in failure.reason for failure in first.failed)
    assert sorted(first.added + lost) == [f"docs/{topic}.md" for topic in sorted(TOPICS)]

    second = ingest(pg_url, folder, killer, collection="ray", cluster=CLUSTER)
    assert second.ok and second.added == sorted(lost)
    assert sorted(second.unchanged) == sorted(first.added)
    ingest(pg_url, folder, "hashing", collection="here")
    assert_same(contents(pg_url, "here"), contents(pg_url, "ray"))  # no duplicate, none missing


def test_a_file_that_crashes_the_parser_fails_alone(folder: Path, tmp_path: Path) -> None:
    from ray_helpers import CrashingParser

    (folder / "bad.crash").write_bytes(b"")
    embedder = HashingEmbedder()
    parsers = ParserRegistry([MarkdownParser(), CrashingParser()])
    store = SQLiteStore(tmp_path / "index", create=True)
    try:
        store.bind_space(embedder.space)
        options = IngestOptions(parse_timeout=60)
        ingestor = Ingestor(
            store,
            embedder,
            parsers,
            create_chunker("recursive"),
            chunker_spec="recursive",
            base=tmp_path,
            options=options,
        )
        recipe = WorkerRecipe(
            EmbedderRecipe.of(embedder), ChunkerRecipe("recursive"), "recursive", parsers, options
        )
        report = ingest_on_ray(ingestor, recipe, CLUSTER, [folder])
    finally:
        store.close()
    crashed = "the parser crashed with SIGKILL (it may have hit the 2048 MB memory limit)"
    assert [(f.source, f.reason) for f in report.failed] == [("docs/bad.crash", crashed)]
    assert len(report.added) == len(TOPICS)


def test_a_document_the_store_refuses_fails_alone(tmp_path: Path) -> None:
    """The driver writes for SQLite: a document the store refuses (a NUL character in its
    metadata) fails alone, as in a local ingest, instead of ending the run."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, tag in (("a", "fine"), ("b", "x\\u0000y"), ("c", "ok")):
        (docs / f"{name}.json").write_text(
            f'{{"text": "Record {name} about quokkas.", "tag": "{tag}"}}'
        )
    options = ParserOptions(text_fields=("text",), meta_fields=("tag",))
    with Index(tmp_path / "ray", embedder="hashing") as kb:
        report = kb.ingest([docs], parser_options=options, base=tmp_path, cluster=CLUSTER)
        assert report.added == ["docs/a.json", "docs/c.json"]
        [failure] = report.failed
        assert failure.source == "docs/b.json" and "NUL character" in failure.reason
        assert sorted(info.source for info in kb.documents.list()) == report.added
        stored = sum(len(kb.documents.chunks_of(document_id_for(s))) for s in report.added)
        assert report.chunks_written == stored


def test_a_cluster_too_small_for_the_workers_is_refused() -> None:
    with (
        connected(RaySettings()) as joined,
        pytest.raises(ClusterError, match=r"has 2 CPUs; 5 workers of 0\.5 CPU need 2\.5"),
    ):
        worker_count(joined, RaySettings(workers=5))


def test_a_cluster_that_cannot_be_reached_is_a_cluster_error() -> None:
    with (
        pytest.raises(ClusterError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:1 "),
        connected(RaySettings(address="127.0.0.1:1")),
    ):
        pass


def test_the_cli_ingests_on_ray_with_the_local_report(folder: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragwright.cli import app

    runner = CliRunner()
    base = ["ingest", str(folder), "--embedder", "hashing", "--root", str(tmp_path), "--json"]
    local = runner.invoke(app, [*base, "--index", str(tmp_path / "here")])
    on_ray = runner.invoke(
        app, [*base, "--index", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]
    )
    assert on_ray.exit_code == local.exit_code == 0, on_ray.output
    assert json.loads(on_ray.stdout) == json.loads(local.stdout)
    assert json.loads(on_ray.stdout)["added"] == [f"docs/{t}.md" for t in sorted(TOPICS)]
    refused = runner.invoke(app, [*base, "--index", str(tmp_path / "x"), "--workers", "2"])
    assert refused.exit_code == 2 and "--workers need --engine ray" in refused.output


def test_the_graph_of_a_ray_ingest_is_extracted_after_the_files(
    folder: Path, tmp_path: Path
) -> None:
    report = ingest(tmp_path / "ray", folder, "hashing", cluster=CLUSTER, extractor="capitalized")
    assert report.ok and report.chunks_extracted == report.chunks_written > 0
    with Index(tmp_path / "ray", create=False) as kb:
        assert kb.graph.stats().mentions > 0
