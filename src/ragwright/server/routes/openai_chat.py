"""OpenAI-compatible routes: ``POST /v1/chat/completions`` and ``GET /v1/models``, so that a
chat client (Open WebUI, LibreChat, an agent framework, the ``openai`` SDK) can use a collection
as a "model".

The model name chooses what answers (`ChatModel`): ``ragwright`` is the collection the server
was started on, ``ragwright/NAME`` another collection of the index, and a ``:MODE`` suffix the
search mode of the answer's retrieval (``ragwright/notes:bm25``; without one, ``auto``).
The question is the last user message (earlier turns and system messages are not used: each
request is answered from the index alone, with ragwright's own grounding prompt). The answer
is `Index.ask`'s, with the server's answer engine and ``[search]`` settings, as the caller its
key acts as; its text keeps the ``[n]`` markers and ends with the sources they number, and the
citations with their exact spans come in the extra ``citations`` field (in the last chunk of a
stream). Sampling fields (``temperature``, ``max_tokens``, …) are accepted and ignored.

A federation's server serves the same routes with one model, ``ragwright[:MODE]``, listed in
the modes every member can serve the caller and answered from every member's hits fused by
rank (each citation naming its member in ``index``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ragwright.errors import RagwrightError, UnknownCollection
from ragwright.models import Answer, Citation
from ragwright.pipeline.search.mode_registry import known_name
from ragwright.pipeline.search.request import SearchMode
from ragwright.reading import Reader
from ragwright.server.access_log import LOGGER
from ragwright.server.problems import ApiError, error_body, status_of
from ragwright.server.readers import Readers
from ragwright.server.routes._deps import UNTRUSTED, ReadCaller, ReadersDep, SearchDefaults
from ragwright.shapes import citation_json
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["openai"])
log = logging.getLogger(LOGGER)
#: The model names' prefix: ``ragwright``, ``ragwright/COLLECTION``, each with ``:MODE``.
PREFIX = "ragwright"
#: How many messages a request may carry (only the last user message is read).
MAX_MESSAGES = 1_000
#: Chunks an answer draws from (`POST /v1/ask`'s default).
TOP_K = 5


@dataclass(frozen=True)
class ChatModel:
    """What a model name selects: a collection (None: the server's own) and a search mode."""

    collection: str | None
    mode: str

    @classmethod
    def parse(cls, name: str) -> ChatModel:
        """``ragwright[/COLLECTION][:MODE]``; anything else is 404 ``model_not_found``."""
        base, _, mode = name.partition(":")
        prefix, slash, collection = base.partition("/")
        if prefix != PREFIX or (slash and not collection):
            raise no_model(name, "models are named ragwright, ragwright/COLLECTION, each "
                            "optionally with :MODE (see GET /v1/models)")  # fmt: skip
        try:
            chosen = known_name(mode) if mode else SearchMode.AUTO.value
        except RagwrightError as error:
            raise no_model(name, str(error)) from None
        return cls(collection or None, chosen)

    def name(self, default_collection: str | None) -> str:
        """The name `list_models` gives it (the server's own collection as ``ragwright``)."""
        own = self.collection in (None, default_collection)
        base = PREFIX if own else f"{PREFIX}/{self.collection}"
        return base if self.mode == SearchMode.AUTO else f"{base}:{self.mode}"


def no_model(name: str, why: str) -> ApiError:
    return ApiError(404, "model_not_found", f"the model {name!r} does not exist: {why}")


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["text"]
    text: str


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls, …: not read
    role: str = Field(max_length=64)
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content)
        return self.content or ""


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """OpenAI's chat-completions request. Fields ragwright does not use (sampling, tools'
    settings, ``user``) are accepted and ignored, as clients send them unasked."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=200)
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int = Field(1, ge=1, le=1, description="One answer per request.")

    def question(self) -> str:
        asked = [m.text() for m in self.messages if m.role == "user"]
        if not asked or not asked[-1].strip():
            raise ApiError(400, "invalid_request", "the last user message has no text to answer")
        if len(asked[-1]) > MAX_QUERY_CHARS:
            raise ApiError(
                400, "invalid_request", f"the question is over {MAX_QUERY_CHARS} characters"
            )
        return asked[-1]


def _open(readers: Readers, model: ChatModel, name: str) -> Reader:
    try:
        return readers.get(model.collection)
    except UnknownCollection as error:
        raise no_model(name, str(error)) from None


@router.get("/models")
def list_models(readers: ReadersDep, caller: ReadCaller) -> dict[str, Any]:
    """The models: each collection of the index (a federation: one), in each search mode it
    can serve the caller now (``auto`` always; graph and global ones only where built and
    allowed; a federation's, where every member can)."""
    models = [
        ChatModel(collection, mode).name(readers.default)
        for collection in readers.names()
        for mode in readers.get(collection).modes_for(caller)
    ]
    return {"object": "list", "data": [model_json(name) for name in models]}


@router.get("/models/{model:path}")
def get_model(model: str, readers: ReadersDep, caller: ReadCaller) -> dict[str, Any]:
    """One model, as `list_models` lists it; 404 ``model_not_found`` otherwise."""
    chosen = ChatModel.parse(model)
    reader = _open(readers, chosen, model)
    if chosen.mode not in reader.modes_for(caller):
        raise no_model(model, readers.cannot_serve(chosen.mode))
    return model_json(chosen.name(readers.default))


def model_json(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": PREFIX}


@router.post(
    "/chat/completions",
    responses={200: {"content": {"text/event-stream": {}}, "description": "JSON or SSE."}},
)
def chat_completions(
    body: ChatRequest, readers: ReadersDep, defaults: SearchDefaults, caller: ReadCaller
) -> Any:
    """The answer to the last user message from the collection the model names (a
    federation: every member's hits fused by rank), with ``[n]`` citations; server-sent
    ``chat.completion.chunk`` events when ``stream`` is true."""
    model = ChatModel.parse(body.model)
    question = body.question()
    reader = _open(readers, model, body.model)
    reply = _Reply(body.model)
    if not body.stream:
        found = reader.ask(question, top_k=TOP_K, mode=model.mode, request=defaults, caller=caller)
        return reply.completion(found)
    pieces = reader.ask_stream(
        question, top_k=TOP_K, mode=model.mode, request=defaults, caller=caller
    )
    # The first piece is computed here, so that an error before any text gets its status.
    first = next(pieces, None)
    usage = body.stream_options is not None and body.stream_options.include_usage
    return StreamingResponse(
        reply.chunks(first, pieces, usage),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


class _Reply:
    """One request's completion, whole or as chunks, in OpenAI's shapes."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def completion(self, answer: Answer) -> dict[str, Any]:
        message = {"role": "assistant", "content": answer.text + _sources(answer.citations)}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        return self._head("chat.completion") | {
            "choices": [choice],
            "usage": _usage(answer),
            **_extras(answer),
        }

    def chunks(
        self, first: str | Answer | None, rest: Iterator[str | Answer], usage: bool
    ) -> Iterator[str]:
        """``data:`` events: the role, the text as written, the sources, the end with the
        citations, the usage if asked for, then ``[DONE]`` (an error event instead when the
        answer fails after the status line was sent)."""
        item = first
        yield self._chunk({"role": "assistant", "content": ""})
        try:
            while item is not None:
                if isinstance(item, Answer):
                    yield self._chunk({"content": _sources(item.citations)})
                    yield self._chunk({}, "stop", **_extras(item))
                    if usage:
                        yield _event(self._head("chat.completion.chunk") | {
                            "choices": [], "usage": _usage(item)
                        })  # fmt: skip
                else:
                    yield self._chunk({"content": item})
                item = next(rest, None)
        except RagwrightError as error:
            status, code = status_of(error)
            yield _event(error_body(status, code, str(error)))
            return
        except Exception:  # the status line is sent: report in the stream, log the details
            log.exception("chat completion stream failed")
            yield _event(error_body(500, "internal_error", "the answer failed; see the log"))
            return
        yield "data: [DONE]\n\n"

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def _chunk(self, delta: dict[str, str], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _event(self._head("chat.completion.chunk") | {"choices": [choice], **extra})


def _event(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _sources(citations: tuple[Citation, ...]) -> str:
    """What each ``[n]`` of the text points to, for a client that shows only the text."""
    if not citations:
        return ""
    lines = [f"[{c.number}] {c.source} (characters {c.char_start}–{c.char_end})" for c in citations]
    return "\n\nSources:\n" + "\n".join(lines)


def _usage(answer: Answer) -> dict[str, int]:
    used = answer.usage
    return {
        "prompt_tokens": used.prompt_tokens,
        "completion_tokens": used.completion_tokens,
        "total_tokens": used.total_tokens,
    }


def _extras(answer: Answer) -> dict[str, Any]:
    """ragwright's fields beside OpenAI's: the citations with their spans, the warnings of
    the answer, and the trust note of every response carrying document text."""
    return {
        "citations": [citation_json(citation) for citation in answer.citations],
        "warnings": list(answer.warnings),
        **UNTRUSTED,
    }
