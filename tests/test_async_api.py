"""The asyncio calls (`ragwright.async_api`): the same results as the blocking ones, the event
loop going on while they work (a ticker coroutine ticks while a search waits inside the
embedder), and cancellation stopping where nothing is left half done."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragwright import Answer, Federation, Index
from ragwright.async_api import iterate_in_thread
from ragwright.pipeline.ingest.ingestor import Progress
from ragwright.ports import Vectors
from ragwright.testing import HashingEmbedder

TOPICS = ["tea", "coffee", "cocoa", "mate", "chicory", "rooibos"]
#: How long a gated embedder waits for the loop to open its gate: only ever reached when
#: the loop is blocked (the test then fails), never a measured time.
GATE_LIMIT = 30.0


class GatedEmbedder(HashingEmbedder):
    """Embeds a query only once ``gate`` opens (while ``armed``), telling the loop it got
    there: a search in flight that the event loop itself must let through."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def embed_query(self, text: str) -> Vectors:
        if self.armed:
            self.waiting.set()
            assert self.gate.wait(GATE_LIMIT), "the event loop never ran while the search did"
        return super().embed_query(text)


def write_docs(folder: Path, topics: Sequence[str] = TOPICS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for topic in topics:
        (folder / f"{topic}.txt").write_text(
            f"The {topic} harvest starts in spring. {topic.title()} leaves are dried in the sun.",
            "utf-8",
        )
    return folder


@pytest.fixture
def embedder() -> GatedEmbedder:
    return GatedEmbedder()


@pytest.fixture
def kb(tmp_path: Path, embedder: GatedEmbedder) -> Iterator[Index]:
    with Index(tmp_path / "kb", embedder=embedder) as index:
        index.ingest(write_docs(tmp_path / "docs"))
        yield index


async def tick_until(done: asyncio.Future[object], gate: threading.Event) -> int:
    """Tick while ``done`` is pending; open ``gate`` after a few ticks (only a running loop
    gets there)."""
    ticks = 0
    while not done.done():
        ticks += 1
        if ticks == 3:
            gate.set()
        await asyncio.sleep(0)
    return ticks


def test_asearch_lets_the_loop_run_and_finds_what_search_finds(
    kb: Index, embedder: GatedEmbedder
) -> None:
    expected = kb.search("When does the cocoa harvest start?", top_k=3)
    embedder.armed = True

    async def main() -> tuple[list[object], int]:
        search = asyncio.ensure_future(kb.asearch("When does the cocoa harvest start?", top_k=3))
        ticks = await tick_until(search, embedder.gate)
        return await search, ticks

    hits, ticks = asyncio.run(main())
    assert embedder.waiting.is_set() and ticks >= 3
    assert hits == expected


def test_aask_and_aask_stream_answer_as_ask_does(kb: Index) -> None:
    expected = kb.ask("When does the cocoa harvest start?", top_k=2)

    async def main() -> tuple[Answer, list[str | Answer]]:
        answer = await kb.aask("When does the cocoa harvest start?", top_k=2)
        items = [
            item async for item in kb.aask_stream("When does the cocoa harvest start?", top_k=2)
        ]
        return answer, items

    answer, items = asyncio.run(main())
    assert answer.text == expected.text and answer.citations == expected.citations
    assert "[1]" in answer.text
    *pieces, final = items
    assert isinstance(final, Answer) and "".join(map(str, pieces)) == final.text == answer.text


def test_aingest_writes_what_ingest_would(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        report = asyncio.run(index.aingest(docs))
        assert len(report.added) == len(TOPICS)
        assert len(index.documents.list()) == len(TOPICS)
        again = asyncio.run(index.aingest([docs]))
        assert again.added == [] and len(again.unchanged) == len(TOPICS)


def test_a_cancelled_aingest_stops_after_a_whole_file_and_a_rerun_completes(
    tmp_path: Path,
) -> None:
    docs = write_docs(tmp_path / "docs", [f"topic{n}" for n in range(8)])
    updates: list[Progress] = []
    resume, resumed = threading.Event(), threading.Event()

    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:

        async def main() -> None:
            loop = asyncio.get_running_loop()
            first = asyncio.Event()

            def progress(update: Progress) -> None:  # in the worker thread
                updates.append(update)
                if len(updates) == 1:
                    loop.call_soon_threadsafe(first.set)
                    assert resume.wait(GATE_LIMIT)
                    resumed.set()

            task = asyncio.ensure_future(index.aingest(docs, progress=progress))
            await first.wait()
            task.cancel()
            for _ in range(5):  # the task waits for the worker, held in `progress`
                await asyncio.sleep(0)
            assert not task.done()
            resume.set()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert resumed.is_set()  # the worker got past its stop point before the task ended

        asyncio.run(main())
        assert len(updates) == 1  # stopped after the first file, not run to the end
        written = index.documents.list()
        assert len(written) < 8
        for info in written:  # every document written is whole
            chunks = index.documents.chunks_of(info.id)
            assert chunks and "harvest" in "".join(chunk.text for chunk in chunks)
        asyncio.run(index.aingest(docs))
        assert len(index.documents.list()) == 8


def test_a_cancelled_asearch_ends_once_its_search_has(kb: Index, embedder: GatedEmbedder) -> None:
    embedder.armed = True

    async def main() -> None:
        task = asyncio.ensure_future(kb.asearch("cocoa", top_k=1))
        while not embedder.waiting.is_set():
            await asyncio.sleep(0)
        task.cancel()
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done()  # the search is still inside the embedder
        embedder.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_stream_left_early_is_closed_in_a_worker_thread() -> None:
    closed_in: list[str] = []

    def pieces() -> Iterator[str]:
        try:
            yield from ("one ", "two ", "three")
        finally:
            closed_in.append(threading.current_thread().name)

    async def main() -> list[str]:
        got = []
        async with contextlib.aclosing(iterate_in_thread(pieces())) as stream:
            async for piece in stream:
                got.append(piece)
                break
        return got

    assert asyncio.run(main()) == ["one "]
    assert len(closed_in) == 1 and closed_in[0] != threading.main_thread().name


def test_federated_asearch_and_aask(tmp_path: Path, kb: Index) -> None:
    with Index(tmp_path / "other", embedder=HashingEmbedder(96)) as other:
        other.ingest(write_docs(tmp_path / "other-docs", ["barley", "rye"]))
        with Federation([("main", kb), ("other", other)], timeout=30) as both:
            expected = both.search("harvest in spring", top_k=4)

            async def main() -> tuple[object, Answer]:
                found = await both.asearch("harvest in spring", top_k=4)
                answer = await both.aask("When does the rye harvest start?", top_k=2)
                return found, answer

            found, answer = asyncio.run(main())
            assert found == expected and {hit.index for hit in expected.hits} == {"main", "other"}
            assert answer.citations and answer.citations[0].index == "other"
