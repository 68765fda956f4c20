"""Parsing under a time and a memory limit per file, in a child process reused across files.

A pathological file (a PDF whose objects loop, a decompression bomb) must not stall or kill an
ingest run. The worker is a separate Python process started once (``forkserver`` where the
platform has it, else ``spawn``: never a fork of a threaded parent), with its address space
capped by ``RLIMIT_AS``; the parent waits for each answer at most ``timeout`` seconds. A worker
that runs out of time, memory or crashes is killed and the next file gets a fresh one.

Parsers travel to the worker by pickling, once per worker; a parser that cannot be pickled is
run in this process instead, without the limits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from ragwright.errors import ParseError, ParseLimitExceeded, RagwrightError
from ragwright.models import ParsedDocument

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from ragwright.ports import Parser

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Per-file limits: wall-clock seconds and memory (the worker's address space) in MB.
    ``None`` switches a limit off; with both off, files are parsed in this process."""

    timeout: float | None = 300.0
    memory_mb: int | None = 2048

    @property
    def enabled(self) -> bool:
        return self.timeout is not None or self.memory_mb is not None


class ParseWorker:
    """Parses files in a child process under `ParseLimits`. Close it (or use ``with``)."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._sent: set[int] = set()  # ids of the parsers the current worker holds
        self._picklable: dict[int, bool] = {}

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def parse(self, parser: Parser, data: bytes, source: str) -> ParsedDocument:
        if not self.limits.enabled or not self._can_send(parser):
            return parser.parse(data, source)
        connection = self._ensure_started()
        key = id(parser)
        message = (key, None if key in self._sent else parser, data, source)
        try:
            connection.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError):  # died since the last file
            self._discard()
            connection = self._ensure_started()
            connection.send((key, parser, data, source))
        self._sent.add(key)
        return self._answer(connection, source)

    def close(self) -> None:
        connection, process = self._connection, self._process
        self._connection, self._process = None, None
        self._sent.clear()
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.send(None)  # asks the worker to exit
            connection.close()
        if process is not None:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()

    def _answer(self, connection: Connection, source: str) -> ParsedDocument:
        timeout = self.limits.timeout
        if not connection.poll(timeout):
            self._discard()
            raise ParseLimitExceeded(source, f"parse timed out after {timeout:g} s")
        try:
            kind, payload = connection.recv()
        except (EOFError, OSError):
            raise ParseError(source, self._crash_reason()) from None
        if kind == "ok":
            document: ParsedDocument = payload
            return document
        if kind == "memory":
            self._discard()  # a process that ran out of memory may be in any state
            raise ParseLimitExceeded(source, f"parse exceeded {self.limits.memory_mb} MB")
        raise ParseError(source, str(payload))

    def _crash_reason(self) -> str:
        process = self._process
        code = None
        if process is not None:
            process.join(timeout=5)
            code = process.exitcode
        self._discard()
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = ""
            if self.limits.memory_mb is not None:
                hint = f" (it may have hit the {self.limits.memory_mb} MB memory limit)"
            return f"the parser crashed with {name}{hint}"
        return f"the parse worker exited unexpectedly (exit code {code})"

    def _can_send(self, parser: Parser) -> bool:
        key = id(parser)
        if key not in self._picklable:
            try:
                pickle.dumps(parser)
                self._picklable[key] = True
            except Exception:  # any pickling failure means: run it here
                self._picklable[key] = False
        return self._picklable[key]

    def _ensure_started(self) -> Connection:
        if self._connection is None:
            methods = multiprocessing.get_all_start_methods()
            method = "forkserver" if "forkserver" in methods else "spawn"
            context: Any = multiprocessing.get_context(method)
            parent, child = context.Pipe()
            process = context.Process(
                target=serve,
                args=(child, self.limits.memory_mb),
                name="ragwright-parse-worker",
                daemon=True,
            )
            process.start()
            child.close()
            self._process, self._connection = process, parent
        return self._connection

    def _discard(self) -> None:
        """Kill the current worker (out of time or memory, or dead); the next file starts a
        fresh one."""
        process, connection = self._process, self._connection
        self._process, self._connection = None, None
        self._sent.clear()
        if process is not None and process.is_alive():
            process.kill()
        if process is not None:
            process.join()
        if connection is not None:
            connection.close()


def serve(connection: Connection, memory_mb: int | None) -> None:
    """The worker's loop: receive (key, parser or None, data, source), answer (kind, payload)
    with kind ``ok`` (the document), ``failed`` (a reason) or ``memory``."""
    if memory_mb is not None:
        _limit_memory(memory_mb * MB)
    parsers: dict[int, Any] = {}
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        key, parser, data, source = message
        if parser is not None:
            parsers[key] = parser
        answer = _parse(parsers[key], data, source)
        del data, message
        try:
            connection.send(answer)
        except MemoryError:
            connection.send(("memory", None))
        except Exception as error:  # pickling fails before anything is written
            reason = f"the parsed result cannot be sent back ({type(error).__name__}: {error})"
            connection.send(("failed", reason))


def _parse(parser: Parser, data: bytes, source: str) -> tuple[str, object]:
    try:
        document = parser.parse(data, source)
        # Metadata is often a read-only mapping proxy, which does not pickle.
        return "ok", replace(document, metadata=dict(document.metadata))
    except MemoryError:
        return "memory", None
    except ParseError as error:
        return "failed", error.reason
    except RagwrightError as error:
        return "failed", str(error)
    except Exception as error:  # a parser bug must reach the report, not kill the worker
        return "failed", f"unexpected {type(error).__name__}: {error}"


def _limit_memory(limit: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: no address-space limit; the time limit still applies
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
