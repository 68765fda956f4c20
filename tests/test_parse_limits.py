"""Per-file parse limits: a parser that hangs, one that eats memory and one that crashes are
each reported and skipped while the batch goes on. The parsers are real and run in the real
worker process (they travel there by pickling, so they live at module level)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragwright.chunkers import create_chunker
from ragwright.errors import ParseError, ParseLimitExceeded
from ragwright.models import ParsedDocument
from ragwright.parsers import ParserRegistry, TextParser
from ragwright.pipeline.ingest.ingestor import IngestOptions, Ingestor, IngestReport
from ragwright.pipeline.ingest.parse_worker import ParseLimits, ParseWorker
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

pytestmark = pytest.mark.slow  # spawns worker processes


class SlowParser:
    """Never finishes in time (a PDF whose object graph loops, say)."""

    extensions: tuple[str, ...] = (".slow",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        time.sleep(120)
        return ParsedDocument(content="too late")


class HugeParser:
    """Inflates its input far beyond any sane size (a decompression bomb)."""

    extensions: tuple[str, ...] = (".huge",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        inflated = bytearray(4 * 1024**3)
        return ParsedDocument(content=str(len(inflated)))


class SwallowingParser:
    """Turns running out of memory into a parse error of its own, as lxml does (a Word bomb
    under the ratio limit fails inside libxml2 with "unknown error")."""

    extensions: tuple[str, ...] = (".swallow",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        try:
            hog = [bytearray(32 * 1024**2) for _ in range(1000)]
        except MemoryError:
            raise ParseError(source, "unknown error (<string>, line 0)") from None
        return ParsedDocument(content=str(len(hog)))


class CrashingParser:
    """Takes its process down the way a crashing C library does."""

    extensions: tuple[str, ...] = (".crash",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


class FailingParser:
    """Fails the ordinary ways: a ParseError, or a bug."""

    extensions: tuple[str, ...] = (".fail",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        if data.startswith(b"bug"):
            raise ValueError("a parser bug")
        raise ParseError(source, "the header is wrong")


class PidParser:
    """Says which process parsed it."""

    extensions: tuple[str, ...] = (".pid",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content=f"parsed by process {os.getpid()}")


class UnpicklablePidParser(PidParser):
    extensions: tuple[str, ...] = (".local",)

    def __init__(self) -> None:
        self.hook = lambda: None  # lambdas do not pickle


def registry() -> ParserRegistry:
    return ParserRegistry(
        [
            TextParser(),
            SlowParser(),
            HugeParser(),
            SwallowingParser(),
            CrashingParser(),
            FailingParser(),
        ]
    )


def ingest(root: Path, files: dict[str, bytes], options: IngestOptions) -> IngestReport:
    docs = root / "docs"
    docs.mkdir()
    for name, data in files.items():
        (docs / name).write_bytes(data)
    embedder = HashingEmbedder()
    store = SQLiteStore(root / "index", create=True)
    try:
        store.bind_space(embedder.space)
        ingestor = Ingestor(
            store,
            embedder,
            registry(),
            create_chunker("recursive"),
            chunker_spec="recursive",
            base=root,
            options=options,
        )
        return ingestor.run([docs])
    finally:
        store.close()


def reasons(report: IngestReport) -> dict[str, str]:
    return {failure.source: failure.reason for failure in report.failed}


def test_a_parse_that_runs_too_long_is_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    files = {"a.txt": b"first", "b.slow": b"", "c.txt": b"after the slow one"}
    report = ingest(tmp_path, files, IngestOptions(parse_timeout=1))
    assert reasons(report) == {"docs/b.slow": "parse timed out after 1 s"}
    assert report.added == ["docs/a.txt", "docs/c.txt"]


def test_a_parse_that_needs_too_much_memory_is_reported_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    files = {"a.huge": b"", "b.txt": b"after the bomb"}
    report = ingest(tmp_path, files, IngestOptions(parse_memory_mb=600))
    assert reasons(report) == {"docs/a.huge": "parse exceeded 600 MB"}
    assert report.added == ["docs/b.txt"]


def test_a_parser_hiding_its_memory_error_is_reported_with_the_limit(tmp_path: Path) -> None:
    files = {"a.swallow": b"", "b.txt": b"after the bomb", "c.fail": b"header"}
    report = ingest(tmp_path, files, IngestOptions(parse_memory_mb=600))
    assert reasons(report) == {
        "docs/a.swallow": "parse exceeded 600 MB",
        "docs/c.fail": "the header is wrong",  # a fresh worker: no stale peak to blame
    }
    assert report.added == ["docs/b.txt"]


def test_a_crashing_parser_is_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    files = {"a.crash": b"", "b.txt": b"after the crash", "c.crash": b"", "d.txt": b"again"}
    report = ingest(tmp_path, files, IngestOptions())
    crash = "the parser crashed with SIGKILL (it may have hit the 2048 MB memory limit)"
    assert reasons(report) == {"docs/a.crash": crash, "docs/c.crash": crash}
    assert report.added == ["docs/b.txt", "docs/d.txt"]


def test_ordinary_failures_in_the_worker_keep_their_reasons(tmp_path: Path) -> None:
    files = {"a.fail": b"header", "b.fail": b"bug", "c.txt": b"fine"}
    report = ingest(tmp_path, files, IngestOptions())
    assert reasons(report) == {
        "docs/a.fail": "the header is wrong",
        "docs/b.fail": "unexpected ValueError: a parser bug",
    }
    assert report.added == ["docs/c.txt"]


def test_one_worker_serves_every_file_and_limits_off_parse_here() -> None:
    parser = PidParser()
    with ParseWorker(ParseLimits(timeout=30, memory_mb=None)) as worker:
        first = worker.parse(parser, b"", "a.pid").content
        second = worker.parse(parser, b"", "b.pid").content
    assert first == second != f"parsed by process {os.getpid()}"
    with ParseWorker(ParseLimits(timeout=None, memory_mb=None)) as worker:
        assert worker.parse(parser, b"", "c.pid").content == f"parsed by process {os.getpid()}"


def test_a_parser_that_cannot_be_pickled_is_run_here(caplog: pytest.LogCaptureFixture) -> None:
    parser = UnpicklablePidParser()
    with (
        caplog.at_level("WARNING", logger="ragwright.ingest"),
        ParseWorker(ParseLimits()) as worker,
    ):
        document = worker.parse(parser, b"", "a.local")
        worker.parse(parser, b"", "b.local")
    assert document.content == f"parsed by process {os.getpid()}"
    # Not silently: the limits do not hold for it, and the log says so once.
    (record,) = caplog.records
    assert "UnpicklablePidParser parses in the ingesting process, without" in record.message


def test_after_a_timeout_the_next_file_gets_a_fresh_worker() -> None:
    pid = PidParser()
    # 3 s, not 1: on a loaded machine the fresh worker's first parse alone once took over 1 s.
    with ParseWorker(ParseLimits(timeout=3)) as worker:
        before = worker.parse(pid, b"", "a.pid").content
        with pytest.raises(ParseError, match="parse timed out after 3 s"):
            worker.parse(SlowParser(), b"", "b.slow")
        after = worker.parse(pid, b"", "c.pid").content
    assert before != after


def wait_until_exited(pid: int) -> None:
    """Until the child process has exited, all its threads (its socket closed), leaving it
    to be reaped by its owner. Its main thread shows as a zombie in /proc before that."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="waits with os.waitid")
def test_a_worker_that_died_since_the_last_file_is_replaced_for_the_next() -> None:
    pid = PidParser()
    with ParseWorker(ParseLimits(timeout=30)) as worker:
        first = worker.parse(pid, b"", "a.pid").content
        killed = int(first.rsplit(" ", 1)[1])
        os.kill(killed, signal.SIGKILL)  # between files, not on one
        wait_until_exited(killed)
        second = worker.parse(pid, b"", "b.pid").content
        third = worker.parse(TextParser(), b"plain words", "c.txt").content
    assert first != second != f"parsed by process {os.getpid()}"
    assert third == "plain words"


@pytest.mark.skipif(os.name != "posix", reason="the POSIX worker is a python -c subprocess")
def test_a_slow_worker_start_does_not_count_against_the_first_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loaded machine may take seconds to start an interpreter; the first file's time limit
    runs only once the worker says it is ready."""
    from ragwright.pipeline.ingest import parse_worker

    slow_start = "import time; time.sleep(2); " + parse_worker._WORKER_MAIN
    monkeypatch.setattr(parse_worker, "_WORKER_MAIN", slow_start)
    with ParseWorker(ParseLimits(timeout=1)) as worker:
        parsed = worker.parse(PidParser(), b"", "a.pid").content
    assert parsed != f"parsed by process {os.getpid()}"  # parsed in the worker, in time


class ModulesParser(PidParser):
    """Says whether the package's public API (which imports the index) was loaded to parse."""

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        loaded = "ragwright.index" in sys.modules
        return ParsedDocument(content=f"index loaded: {loaded} in process {os.getpid()}")


class ApiParser(PidParser):
    """A plug-in parser that uses a name of the package's public API."""

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        from ragwright import IngestOptions

        return ParsedDocument(content=f"{IngestOptions.__name__} in process {os.getpid()}")


def test_the_worker_starts_without_the_package_api_and_loads_it_when_asked() -> None:
    """The worker skips what parsing does not need (its start-up is every run's wait), and a
    parser that asks the package for a public name still gets it, in the worker, loading only
    the module that defines it."""
    with ParseWorker(ParseLimits(timeout=60)) as worker:
        bare = worker.parse(ModulesParser(), b"", "a.pid").content
        api = worker.parse(ApiParser(), b"", "b.pid").content
        after = worker.parse(ModulesParser(), b"", "c.pid").content
    assert bare.startswith("index loaded: False in process ")
    assert not bare.endswith(f" {os.getpid()}")
    worker_pid = bare.rsplit(" ", 1)[1]
    assert api == f"IngestOptions in process {worker_pid}"
    assert after == f"index loaded: False in process {worker_pid}"


class ScriptParser(PidParser):
    """Stands for a parser class defined in the caller's script (its ``__main__``)."""

    extensions: tuple[str, ...] = (".script",)


def test_a_parser_from_the_callers_script_is_run_here(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Pickles by reference to __main__.ScriptParser, which the worker's __main__ lacks.
    monkeypatch.setattr(ScriptParser, "__module__", "__main__")
    monkeypatch.setattr(sys.modules["__main__"], "ScriptParser", ScriptParser, raising=False)
    pid, script = PidParser(), ScriptParser()
    with ParseWorker(ParseLimits(timeout=30)) as worker:
        assert worker.parse(script, b"", "a.script").content == f"parsed by process {os.getpid()}"
        assert worker.parse(pid, b"", "b.pid").content != f"parsed by process {os.getpid()}"
        assert worker.parse(script, b"", "c.script").content == f"parsed by process {os.getpid()}"
    assert [r.message.endswith("the parse worker cannot import it") for r in caplog.records] == [
        True
    ]


def test_a_script_without_a_main_guard_can_ingest(tmp_path: Path) -> None:
    """The worker never re-imports the caller's main module (multiprocessing would)."""
    (tmp_path / "notes.txt").write_text("Notes about otters.", "utf-8")
    script = tmp_path / "ingest_script.py"
    script.write_text(
        "from ragwright import Index\n"
        "with Index('index', embedder='hashing') as kb:\n"
        "    report = kb.ingest(['notes.txt'])\n"
        "print(report.added, report.failed)\n",
        "utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "['notes.txt'] []", result.stderr


def test_a_file_too_large_to_receive_under_the_memory_limit_is_reported() -> None:
    # More than the worker's whole address space may hold: it cannot even receive it.
    data = b"x" * (300 * 1024 * 1024)
    with ParseWorker(ParseLimits(timeout=60, memory_mb=250)) as worker:
        with pytest.raises(ParseError, match=r"parse exceeded 250 MB \(receiving the file\)"):
            worker.parse(TextParser(), data, "big.txt")
        del data
        assert worker.parse(PidParser(), b"", "next.pid").content.startswith("parsed by")


class WideParser:
    """Makes text that fits the worker's memory but not once more, as sending it back needs
    (each "é" is one byte in the string and two in the UTF-8 it is pickled as)."""

    extensions: tuple[str, ...] = (".wide",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content="é" * (150 * 1024 * 1024))


def test_a_result_too_large_to_send_back_under_the_memory_limit_is_reported() -> None:
    with ParseWorker(ParseLimits(timeout=60, memory_mb=500)) as worker:
        match = r"parse exceeded 500 MB \(sending the parsed text back\)"
        with pytest.raises(ParseLimitExceeded, match=match):
            worker.parse(WideParser(), b"", "wide.wide")
        assert worker.parse(PidParser(), b"", "next.pid").content.startswith("parsed by")


SAMPLES = {
    ".txt": b"Plain words.",
    ".md": b"# Title\n\nBody text.\n",
    ".html": b"<h1>Title</h1><p>Body text.</p>",
    ".csv": b"a,b\n1,2\n",
    ".json": b'{"title": "x"}',
    ".rtf": b"{\\rtf1\\ansi Body text.\\par}",
}


def test_every_built_in_parser_travels_to_the_worker() -> None:
    """The limits hold only for parsers the worker can receive (pickled): one that cannot be
    pickled is parsed in the ingesting process, with no limit at all."""
    import pickle

    registry = ParserRegistry.from_entry_points()
    for extension in registry.extensions:
        parser = registry.parser_for(f"file{extension}")
        copy = pickle.loads(pickle.dumps(parser))
        if extension in SAMPLES:  # the copy parses as the original does
            data = SAMPLES[extension]
            assert copy.parse(data, "f") == parser.parse(data, "f"), extension


def test_a_new_parser_is_never_taken_for_an_earlier_one_whose_id_it_reuses() -> None:
    """The worker keeps each parser it was sent by id; a parser garbage-collected after use
    must not let the next one, given its id, be parsed as the first."""
    with ParseWorker(ParseLimits(timeout=60, memory_mb=400)) as worker:
        for _ in range(20):  # temporaries: CPython reuses a freed object's id at once
            assert worker.parse(TextParser(), b"plain words", "a.txt").content == "plain words"
            assert worker.parse(PidParser(), b"", "b.pid").content.startswith("parsed by")
