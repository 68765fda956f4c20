"""The parse worker's process kept between an index's ingest runs (`KeptParseWorker`): one
start for many runs, a fresh one whenever the kept one would not do, none left after close."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest

from ragwright.index import Index
from ragwright.models import ParsedDocument
from ragwright.pipeline.ingest import parse_worker
from ragwright.pipeline.ingest.kept_worker import KeptParseWorker
from ragwright.pipeline.ingest.parse_worker import ParseLimits
from ragwright.testing import HashingEmbedder

LIMITS = ParseLimits(timeout=60, memory_mb=1024)


class PidParser:
    """Says which process parsed it."""

    extensions: tuple[str, ...] = (".pid",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content=str(os.getpid()))


class LiveParsers:
    """Says how many parsers of its class the process parsing it holds."""

    extensions: tuple[str, ...] = (".live",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        gc.collect()
        alive = sum(isinstance(held, LiveParsers) for held in gc.get_objects())
        return ParsedDocument(content=str(alive))


def parsed_by(kept: KeptParseWorker, limits: ParseLimits = LIMITS) -> int:
    """The process that parsed a file in one run lent by ``kept``."""
    with kept.worker(limits) as worker:
        return int(worker.parse(PidParser(), b"", "a.pid").content)


def has_exited(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_runs_share_one_process_which_close_ends() -> None:
    kept = KeptParseWorker()
    first, second = parsed_by(kept), parsed_by(kept)
    assert first == second != os.getpid()
    kept.close()
    assert has_exited(first)
    after = parsed_by(kept)  # a run after close still parses, in a process of its own
    assert after != first and has_exited(after)


def test_a_run_under_another_memory_limit_gets_a_fresh_process() -> None:
    kept = KeptParseWorker()
    try:
        first = parsed_by(kept)
        other = parsed_by(kept, ParseLimits(timeout=60, memory_mb=512))
        assert other != first and has_exited(first)
        assert parsed_by(kept, ParseLimits(timeout=60, memory_mb=512)) == other
    finally:
        kept.close()


def test_a_process_holding_more_memory_than_the_keep_limit_is_not_kept() -> None:
    kept = KeptParseWorker(keep_mb=0)
    first = parsed_by(kept)
    assert has_exited(first)
    assert parsed_by(kept) != first


def test_a_run_that_raised_does_not_keep_its_process() -> None:
    """A file may still be on its way back from it: the next run must not read that."""
    kept = KeptParseWorker()
    try:
        with pytest.raises(KeyboardInterrupt), kept.worker(LIMITS) as worker:
            pid = int(worker.parse(PidParser(), b"", "a.pid").content)
            raise KeyboardInterrupt
        assert has_exited(pid)
        assert parsed_by(kept) != pid
    finally:
        kept.close()


def test_a_kept_process_lets_go_of_the_last_runs_parsers() -> None:
    kept = KeptParseWorker()
    try:
        for _ in range(3):  # each run sends its own parser object
            with kept.worker(LIMITS) as worker:
                assert worker.parse(LiveParsers(), b"", "a.live").content == "1"
    finally:
        kept.close()


def test_an_index_starts_one_parse_worker_for_many_ingests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    start = parse_worker._start_worker

    def counted() -> Any:
        child, connection = start()
        started.append(child)
        return child, connection

    monkeypatch.setattr(parse_worker, "_start_worker", counted)
    folders = [tmp_path / "one", tmp_path / "two"]
    for n, folder in enumerate(folders):
        folder.mkdir()
        (folder / "notes.md").write_text(f"# Notes {n}\n\nWords of folder {n}.\n")
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as kb:
        for folder in folders:
            assert kb.ingest([folder]).added == [f"{folder.name}/notes.md"]
        (child,) = started
        assert child.is_alive()
    assert not child.is_alive()
