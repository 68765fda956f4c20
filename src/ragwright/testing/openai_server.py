"""A real HTTP server on loopback that speaks the OpenAI chat-completions API, scripted per test.

Standard library only. Each request to ``POST /v1/chat/completions`` takes the next scripted
`Reply` (or, when the script is empty, asks ``responder``); a text reply is sent as one JSON
completion or, when the request has ``"stream": true``, as server-sent events, word by word,
with the usage in a last chunk if the request asked for it. Every request body is recorded.

    with OpenAIServer() as server:
        server.script(Reply.text("Paris [1]."), Reply.status(429, retry_after="0"))
        llm = OpenAIChat("test-model", base_url=server.url)
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with `text`, `status` or `raw`; ``delay`` (seconds) holds the
    answer back, for client timeouts (closing the server ends the wait)."""

    kind: str
    content: str = ""
    status_code: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = None
    logprobs: tuple[tuple[str, float], ...] | None = None
    finish_reason: str = "stop"
    delay: float = 0.0

    @classmethod
    def text(
        cls,
        content: str,
        *,
        usage: tuple[int, int] | None = (10, 5),
        logprobs: list[tuple[str, float]] | None = None,
        finish_reason: str = "stop",
        delay: float = 0.0,
    ) -> Reply:
        """A completion with ``content``; ``usage`` is (prompt, completion) tokens or None to
        send none; ``logprobs`` are (token, logprob) pairs."""
        pairs = tuple(logprobs) if logprobs is not None else None
        return cls("text", content, 200, {}, usage, pairs, finish_reason, delay)

    @classmethod
    def status(
        cls, code: int, message: str = "scripted failure", *, retry_after: str | None = None
    ) -> Reply:
        """An error status with an OpenAI-style error body (and ``Retry-After`` if given)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        body = json.dumps({"error": {"message": message, "type": "scripted"}})
        return cls("raw", body, code, headers)

    @classmethod
    def raw(cls, body: str, *, status: int = 200, content_type: str = "application/json") -> Reply:
        """Exactly ``body`` (e.g. malformed JSON), with this status and content type."""
        return cls("raw", body, status, {"Content-Type": content_type})

    def after(self, seconds: float) -> Reply:
        """This reply, held back ``seconds``."""
        return replace(self, delay=seconds)


class OpenAIServer:
    """The server; a context manager. ``url`` is the base URL (ending in ``/v1``), ``requests``
    the JSON bodies received, in order."""

    def __init__(
        self, responder: Callable[[dict[str, Any]], Reply] | None = None, *, model: str = "test"
    ) -> None:
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies (a plain string is `Reply.text`)."""
        with self._lock:
            self._replies.extend(Reply.text(r) if isinstance(r, str) else r for r in replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._replies:
                return self._replies.pop(0)
        if self.responder is not None:
            try:
                return self.responder(body)
            except Exception as error:  # a broken responder is the test's bug: say so
                return Reply.status(500, f"the responder failed: {error!r}")
        return Reply.status(500, "the test server has no scripted reply left")


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}', {})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, b'{"error": {"message": "bad JSON"}}', {})
                return
            with server._lock:
                server.headers.append(dict(self.headers.items()))
            reply = server._next(body)
            if reply.delay and server._closing.wait(reply.delay):
                return
            if reply.kind == "raw":
                self._send(reply.status_code, reply.content.encode(), reply.headers)
            elif body.get("stream"):
                self._stream(reply, body)
            else:
                self._send(200, json.dumps(_completion(reply, body, server.model)).encode(), {})

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            headers = {"Content-Type": "application/json", **headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            model = body.get("model") or server.model
            events = [": scripted stream"]
            for piece in _WORDS.findall(reply.content):
                events.append(_event(model, {"content": piece}, None))
            events.append(_event(model, {}, reply.finish_reason))
            wants_usage = (body.get("stream_options") or {}).get("include_usage")
            if wants_usage and reply.usage is not None:
                chunk = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": model}
                chunk |= {"choices": [], "usage": _usage(reply.usage)}
                events.append("data: " + json.dumps(chunk))
            events.append("data: [DONE]")
            for event in events:
                self.wfile.write(event.encode() + b"\n\n")
                self.wfile.flush()
            self.close_connection = True

    return Handler


def _event(model: str, delta: dict[str, str], finish_reason: str | None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    chunk = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": model}
    return "data: " + json.dumps(chunk | {"choices": [choice]})


def _usage(pair: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": pair[0], "completion_tokens": pair[1], "total_tokens": sum(pair)}


def _completion(reply: Reply, body: dict[str, Any], default_model: str) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.content},
        "finish_reason": reply.finish_reason,
    }
    if body.get("logprobs") and reply.logprobs is not None:
        content = [{"token": t, "logprob": p, "top_logprobs": []} for t, p in reply.logprobs]
        choice["logprobs"] = {"content": content}
    result: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": body.get("model") or default_model,
        "choices": [choice],
    }
    if reply.usage is not None:
        result["usage"] = _usage(reply.usage)
    return result


_SOURCE = re.compile(
    r"BEGIN SOURCE (\d+) (\w+)\n(?:document: [^\n]*\n)?(.*?)\nEND SOURCE \1 \2", re.DOTALL
)
_NOTE = re.compile(r"BEGIN (?:NOTE|DRAFT) \d+ (\w+)\n(.*?)\nEND (?:NOTE|DRAFT) \d+ \1", re.DOTALL)
_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)
_SENTENCE = re.compile(r".+?[.!?](?=\s|$)|.+$", re.DOTALL)
_TERM = re.compile(r"\w{3,}")


def quoting_responder(body: dict[str, Any]) -> Reply:
    """A stand-in model for ragwright's answer prompts. It quotes the first sentence of the
    fenced source sharing most words with the question, citing it; given a draft (a refine
    step) it keeps the draft and adds a quote only from a source sharing two or more words;
    given only notes (a reduce step) it joins them; asked to self-check (JSON mode) it finds
    nothing unsupported; with nothing to go on it replies "Not found in the sources."."""
    if body.get("response_format"):
        return Reply.text('{"unsupported": []}')
    messages = body.get("messages") or [{"content": ""}]
    prompt = str(messages[-1]["content"])
    question = _QUESTION.search(prompt)
    terms = set(_TERM.findall((question.group(1) if question else "").lower()))
    notes = [text.strip() for _token, text in _NOTE.findall(prompt)]
    notes = [note for note in notes if not note.startswith("Not found")]
    best: tuple[int, str] | None = None
    for number, _token, text in _SOURCE.findall(prompt):
        score = len(terms & set(_TERM.findall(text.lower())))
        if score and (best is None or score > best[0]):
            best = (score, _quote(text, number))
    if best is not None and (not notes or best[0] >= 2):
        return Reply.text(" ".join([*notes, best[1]]))
    return Reply.text(" ".join(notes) if notes else "Not found in the sources.")


def _quote(text: str, number: str) -> str:
    prose = " ".join(line for line in text.splitlines() if not line.startswith("#")).strip()
    first = _SENTENCE.match(prose)
    sentence = (first.group(0) if first else prose).strip().rstrip(".!?")
    return f"{sentence} [{number}]."
