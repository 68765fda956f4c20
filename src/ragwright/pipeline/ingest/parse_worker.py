"""Parsing under a time and a memory limit per file, in a child process reused across files.

A pathological file (a PDF whose objects loop, a decompression bomb) must not stall or kill an
ingest run. The worker is a separate Python process started for a run (or kept from the run
before, see below), its address space capped by ``RLIMIT_AS``; the parent waits for each answer
at most ``timeout`` seconds. A worker that runs out of time or memory, or crashes, is killed,
and the next file gets a fresh one.

On POSIX the worker is a ``python -c`` subprocess (`serve_socket`) talking over a socket pair,
not a ``multiprocessing`` child: those re-import the caller's main module, which would re-run a
script that calls ``Index.ingest`` at top level without an ``if __name__ == "__main__"`` guard.
Windows (no socket passing, no memory cap) uses a ``multiprocessing`` spawn child.

A worker may outlive the run it started for: `ParseWorker.release` hands its process over,
its parsers forgotten, and a later `ParseWorker` under the same memory limit adopts it
(`KeptParseWorker` keeps one per index between runs), so an index that ingests again and again
(a server's uploads, a script's loop) does not start an interpreter and import the parsers'
libraries each time (about 0.25 s of CPU, most of a small run's parsing).

Parsers travel to the worker pickled, once per worker; a parser that cannot be pickled or
unpickled there (a class defined in the caller's script) is run in this process instead,
without the limits.

A ``budget`` bounds the time all files of a run spend parsing together (an upload's: many
pathological files in one request must not hold the ingest lock for hours). A file's wait is
cut to what is left of it, and once it is spent each further file is `ParseBudgetSpent`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Protocol

from ragwright.errors import ParseBudgetSpent, ParseError, ParseLimitExceeded, RagwrightError

log = logging.getLogger("ragwright.ingest")

if TYPE_CHECKING:
    from collections.abc import Callable

    from ragwright.models import ParsedDocument
    from ragwright.ports import Parser

MB = 1024 * 1024
_EXIT_OUT_OF_MEMORY = 3  # the worker's exit status when even receiving a file was too much
#: What a worker sends once it has started and set its limits: only then does a file's time run.
_READY = ("ready", None)
#: Tells a worker handed over to a later run to let go of the parsers it holds: their keys
#: (object ids in this process) may be reused by that run's.
_FORGET = ("forget", None, None)
#: How long a fresh interpreter may take to start and import the worker (a loaded machine).
_STARTUP_SECONDS = 120.0
#: The worker's program (``{fd}``: its socket). It needs the parsers only; the package's public
#: names load on first use (see `ragwright.__init__`), so the index, the federation and the
#: answer engines are not imported by a worker every ingest run waits for before its first file.
_WORKER_MAIN = """\
from ragwright.pipeline.ingest.parse_worker import serve_socket
serve_socket({fd})
"""
#: A parse that fails after taking the worker's peak address space past this share of its
#: limit failed for want of memory, whatever the parser says (lxml: "unknown error").
_NEAR_LIMIT = 0.9
#: Where a worker that parsed a file ran out of memory: pickling the result to send it back.
_SENDING_BACK = "sending the parsed text back"


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Per-file limits: wall-clock seconds and memory (the worker's address space) in MB; and
    ``budget``, the seconds all files of a run may spend parsing together (worker start-ups
    included). ``None`` switches a limit off; with all off, files are parsed in this process."""

    timeout: float | None = 300.0
    memory_mb: int | None = 2048
    budget: float | None = None

    @property
    def enabled(self) -> bool:
        return self.timeout is not None or self.memory_mb is not None or self.budget is not None


#: The limits a file is parsed under unless the run says otherwise.
DEFAULT_PARSE_LIMITS = ParseLimits()


class _Child(Protocol):
    """The worker process: a `multiprocessing.Process`, or a `_Subprocess` that looks like one."""

    @property
    def exitcode(self) -> int | None: ...

    @property
    def pid(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def kill(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


@dataclass
class _Subprocess:
    popen: subprocess.Popen[bytes]

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    @property
    def pid(self) -> int | None:
        return self.popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        self.popen.kill()

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)


@dataclass(frozen=True, slots=True)
class StartedWorker:
    """A worker process handed over by `ParseWorker.release`, holding no parser, and the
    memory limit it was started under (a limit lowered in a process cannot be raised)."""

    child: _Child
    connection: Connection
    memory_mb: int | None

    def close(self) -> None:
        """Ask the process to exit, and wait for it (killed after a grace period)."""
        _end(self.child, self.connection, grace=5)


class ParseWorker:
    """Parses files in a child process under `ParseLimits`. Close it (or use ``with``), or
    hand its process over to a later one (`release`)."""

    def __init__(
        self,
        limits: ParseLimits,
        clock: Callable[[], float] = time.monotonic,
        *,
        started: StartedWorker | None = None,
    ) -> None:
        """``clock`` tells the seconds spent against the budget (a test's fake moves it).
        ``started``: a process an earlier worker released, used if its memory limit is this
        one's (and closed otherwise)."""
        self.limits = limits
        self._clock = clock
        self._spent = 0.0  # seconds spent parsing so far (the budget's)
        self._child: _Child | None = None
        self._connection: Connection | None = None
        if started is not None:
            if limits.enabled and started.memory_mb == limits.memory_mb:
                self._child, self._connection = started.child, started.connection
            else:
                started.close()
        self._sent: set[int] = set()  # ids of the parsers the current worker holds
        self._pickled: dict[int, bytes | None] = {}  # None: runs in this process
        # The parsers those ids are of, kept alive: a parser collected while its id is a key
        # here could have its id reused by another, which would then be sent as the first.
        self._parsers: dict[int, Parser] = {}

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def parse(self, parser: Parser, data: bytes, source: str) -> ParsedDocument:
        return self.parse_taking(parser, lambda: data, source)

    def parse_taking(
        self, parser: Parser, take: Callable[[], bytes], source: str
    ) -> ParsedDocument:
        """`parse`, taking the file's bytes from ``take()`` once the worker holds ``parser``,
        and letting go of them once they are sent: while the worker parses and while its
        answer (the parsed text) arrives, this process holds no copy of the file, if the
        caller holds none (`LoadedFile.take_data`). `ParseBudgetSpent` once the run's
        budget is spent (the bytes are not taken)."""
        wait = self._wait(source)
        started = self._clock()
        try:
            return self._parse_taking(parser, take, source, wait)
        finally:
            self._spent += self._clock() - started

    def _wait(self, source: str) -> float | None:
        """How long the next file's answer may be waited for: the per-file timeout, cut to
        what is left of the budget; `ParseBudgetSpent` when nothing is."""
        timeout, budget = self.limits.timeout, self.limits.budget
        if budget is None:
            return timeout
        left = budget - self._spent
        if left <= 0:
            raise ParseBudgetSpent(
                source,
                f"not parsed: the {budget:g} s this run may spend parsing were spent on the "
                "files before it; ingest it again on its own",
            )
        return left if timeout is None else min(timeout, left)

    def _parse_taking(
        self, parser: Parser, take: Callable[[], bytes], source: str, wait: float | None
    ) -> ParsedDocument:
        pickled = self._pickle(parser) if self.limits.enabled else None
        if pickled is None:
            return parser.parse(take(), source)
        connection, answered = self._holding(parser, pickled, source)
        if connection is None:  # the worker cannot load this parser: run it here from now on
            self._pickled[id(parser)] = None
            _runs_unlimited(parser, "the parse worker cannot import it")
            return parser.parse(take(), source)
        data = take()
        try:
            _send_file(connection, id(parser), data, source)
        except OSError:
            if answered:  # it was alive a moment ago: it died on this very file
                raise self._crashed(source) from None
            self._discard()  # it died since the last file: one more try with a fresh one
            connection, _ = self._holding(parser, pickled, source)
            if connection is None:
                return parser.parse(data, source)
            try:
                _send_file(connection, id(parser), data, source)
            except OSError:
                raise self._crashed(source) from None
        del data
        return self._answer(connection, source, wait)

    def _holding(
        self, parser: Parser, pickled: bytes, source: str
    ) -> tuple[Connection | None, bool]:
        """The worker's connection once the worker holds ``parser`` (None: it cannot load it),
        and whether the worker answered just now (it was started or sent the parser)."""
        key = id(parser)
        if self._child is not None and not self._child.is_alive():
            # It died since the last file: a fresh one, without trying a send first.
            self._discard()
        fresh = self._connection is None
        connection = self._ensure_started(source)
        if key in self._sent:  # (never so for a fresh worker)
            return connection, False
        try:
            connection.send(("parser", key, pickled))
        except OSError:
            if fresh:
                raise self._crashed(source) from None
            self._discard()  # it died since the last file
            return self._holding(parser, pickled, source)
        if not self._loaded(connection, source):
            return None, True
        self._sent.add(key)
        return connection, True

    def _loaded(self, connection: Connection, source: str) -> bool:
        """Whether the worker could load the parser just sent (unpickling it may import a
        parser's libraries: that time is the worker's start-up, not the file's)."""
        try:
            if not connection.poll(_STARTUP_SECONDS):
                raise self._crashed(source)
            kind, _ = connection.recv()
        except (EOFError, OSError):
            raise self._crashed(source) from None
        return bool(kind == "loaded")

    def close(self) -> None:
        self._discard(grace=5)  # asked to exit first

    def release(self, keep_mb: int) -> StartedWorker | None:
        """Close this worker, handing its process over, its parsers forgotten, unless it
        has exited or holds more than ``keep_mb`` MB (what one large file left it holding
        is not kept idle); None when nothing is handed over."""
        child, connection = self._child, self._connection
        if child is None or connection is None or not child.is_alive():
            self.close()
            return None
        resident = _resident_mb(child.pid)
        if resident is not None and resident > keep_mb:
            self.close()
            return None
        try:
            connection.send(_FORGET)
        except OSError:
            self.close()
            return None
        self._child, self._connection = None, None
        self._sent.clear()
        return StartedWorker(child, connection, self.limits.memory_mb)

    def _answer(self, connection: Connection, source: str, wait: float | None) -> ParsedDocument:
        """The parsed document, or the error the worker's answer (or none within ``wait``
        seconds) means."""
        if not connection.poll(wait):
            self._discard()
            timeout, budget = self.limits.timeout, self.limits.budget
            if budget is not None and wait is not None and (timeout is None or wait < timeout):
                raise ParseLimitExceeded(
                    source,
                    f"parse stopped after {wait:g} s: the {budget:g} s this run may spend "
                    "parsing ran out",
                )
            raise ParseLimitExceeded(source, f"parse timed out after {timeout:g} s")
        try:
            kind, payload = connection.recv()
        except (EOFError, OSError):
            raise self._crashed(source) from None
        if kind == "ok":
            document: ParsedDocument = payload
            return document
        if kind == "memory":
            self._discard()  # a process that ran out of memory may be in any state
            where = f" ({payload})" if payload else ""
            raise ParseLimitExceeded(source, f"parse exceeded {self.limits.memory_mb} MB{where}")
        if kind == "limit":
            raise ParseLimitExceeded(source, str(payload))
        raise ParseError(source, str(payload))

    def _crashed(self, source: str) -> ParseError:
        """The error for a worker that died on ``source``, which is then discarded."""
        child = self._child
        code = None
        if child is not None:
            child.join(timeout=5)
            code = child.exitcode
        self._discard()
        limit = self.limits.memory_mb
        if code == _EXIT_OUT_OF_MEMORY:
            return ParseLimitExceeded(source, f"parse exceeded {limit} MB (receiving the file)")
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = f" (it may have hit the {limit} MB memory limit)" if limit is not None else ""
            return ParseError(source, f"the parser crashed with {name}{hint}")
        return ParseError(source, f"the parse worker exited unexpectedly (exit code {code})")

    def _pickle(self, parser: Parser) -> bytes | None:
        key = id(parser)
        if key not in self._pickled:
            self._parsers[key] = parser
            try:
                self._pickled[key] = pickle.dumps(parser)
            except Exception as error:  # any pickling failure means: run it here
                self._pickled[key] = None
                _runs_unlimited(parser, f"it cannot be pickled ({error})")
        return self._pickled[key]

    def _ensure_started(self, source: str) -> Connection:
        """The worker's connection, starting a worker first if there is none. Its start-up (a
        fresh interpreter importing ragwright) is waited for here, so it never counts against
        the time limit of ``source``, the file it starts for."""
        if self._connection is None:
            self._child, self._connection = _start_worker()
            # The worker imports parsers from wherever this process can.
            self._connection.send((list(sys.path), self.limits.memory_mb))
            try:
                ready = self._connection.poll(_STARTUP_SECONDS)
                ready = ready and self._connection.recv() == _READY
            except (EOFError, OSError):
                ready = False
            if not ready:
                raise self._crashed(source)
        return self._connection

    def _discard(self, grace: float = 0) -> None:
        """End the current worker, killing it if it has not exited within ``grace`` seconds
        (none for one out of time or memory, or dead); the next file starts a fresh one."""
        child, connection = self._child, self._connection
        self._child, self._connection = None, None
        self._sent.clear()
        _end(child, connection, grace)


def _end(child: _Child | None, connection: Connection | None, grace: float = 0) -> None:
    """Close the connection (a worker waiting for its next message then exits) and wait up to
    ``grace`` seconds for the process to exit before killing it."""
    if connection is not None:
        if grace:
            with contextlib.suppress(OSError):
                connection.send(None)  # asks the worker to exit
        connection.close()
    if child is not None:
        if grace:
            child.join(timeout=grace)
        if child.is_alive():
            child.kill()
        child.join()


def _resident_mb(pid: int | None) -> float | None:
    """The resident memory of process ``pid`` in MB (Linux's VmRSS); None where not known."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def _runs_unlimited(parser: Parser, why: str) -> None:
    """Say so, once per parser and run, when the per-file limits cannot hold for a parser."""
    log.warning(
        "%s parses in the ingesting process, without the per-file time and memory limits: %s",
        type(parser).__qualname__,
        why,
    )


def _start_worker() -> tuple[_Child, Connection]:
    if os.name != "posix":
        import multiprocessing

        context: Any = multiprocessing.get_context("spawn")
        parent, child_end = context.Pipe()
        process = context.Process(target=serve, args=(child_end,), daemon=True)
        process.start()
        child_end.close()
        return process, parent
    parent_socket, child_socket = socket.socketpair()
    with child_socket:
        fd = child_socket.fileno()
        popen = subprocess.Popen(
            [sys.executable, "-c", _WORKER_MAIN.format(fd=fd)],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
        )
    return _Subprocess(popen), Connection(parent_socket.detach())


def _send_file(connection: Connection, key: int, data: bytes, source: str) -> None:
    """A file to parse: its parser's key and source, then its bytes as they are (pickling
    them would copy them once more)."""
    connection.send(("file", key, source))
    connection.send_bytes(data)


def serve(connection: Connection) -> None:
    """The worker's loop. First message: (sys.path, memory limit in MB or None). Then
    ``("parser", key, pickled parser)``, answered ``loaded`` or ``unloadable``, and
    ``("file", key, source)`` followed by the file's bytes, answered with (kind, payload):
    ``ok`` (the document), ``failed`` or ``limit`` (a reason) or ``memory``; `_FORGET`,
    unanswered, drops the parsers held. None ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    path, memory_mb = connection.recv()
    sys.path[:] = path
    if memory_mb is not None:
        _limit_memory(memory_mb * MB)
    connection.send(_READY)
    parsers: dict[int, Any] = {}
    while True:
        try:
            message = connection.recv()
            if message is not None and message[0] == "file":
                data = connection.recv_bytes()
        except (EOFError, OSError):
            return
        except MemoryError:  # the stream is mid-message now: nothing to do but leave
            os._exit(_EXIT_OUT_OF_MEMORY)
        if message is None:
            return
        if message == _FORGET:
            parsers.clear()
            continue
        if message[0] == "parser":
            _, key, pickled = message
            try:
                parsers[key] = pickle.loads(pickled)
            except Exception as error:
                connection.send(("unloadable", f"{type(error).__name__}: {error}"))
            else:
                connection.send(("loaded", None))
            continue
        _, key, source = message
        answer = _parse(parsers[key], data, source, memory_mb)
        del data
        try:
            connection.send(answer)
        except MemoryError:  # pickling the result failed before anything was written
            del answer
            connection.send(("memory", _SENDING_BACK))
        except Exception as error:  # pickling fails before anything is written
            reason = f"the parsed result cannot be sent back ({type(error).__name__}: {error})"
            connection.send(("failed", reason))


def _parse(parser: Parser, data: bytes, source: str, memory_mb: int | None) -> tuple[str, object]:
    before = _peak_bytes() or 0
    answer = _run(parser, data, source)
    after = _peak_bytes() or 0
    near_limit = memory_mb is not None and after >= _NEAR_LIMIT * memory_mb * MB
    if answer[0] == "failed" and after > before and near_limit:
        return "memory", None  # the parser turned a refused allocation into its own error
    return answer


def _run(parser: Parser, data: bytes, source: str) -> tuple[str, object]:
    try:
        document = parser.parse(data, source)
        # Metadata is often a read-only mapping proxy, which does not pickle.
        return "ok", replace(document, metadata=dict(document.metadata))
    except MemoryError:
        return "memory", None
    except ParseLimitExceeded as error:  # a limit of the parser's own (HTML nested too deep)
        return "limit", error.reason
    except ParseError as error:
        return "failed", error.reason
    except RagwrightError as error:
        return "failed", str(error)
    except Exception as error:  # a parser bug must reach the report, not kill the worker
        return "failed", f"unexpected {type(error).__name__}: {error}"


def _peak_bytes() -> int | None:
    """This process's peak address space (Linux's VmPeak); None where it is not known."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _limit_memory(limit: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: no address-space limit; the time limit still applies
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def serve_socket(fd: int) -> None:
    """The POSIX worker's entry point: serve on the inherited socket ``fd``."""
    serve(Connection(fd))
