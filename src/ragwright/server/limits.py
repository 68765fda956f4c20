"""The request body limit, enforced before and while a body is read.

A declared ``Content-Length`` over the limit is refused at once; a body sent without one
(chunked) is counted as it arrives and refused as soon as it passes the limit. Either way the
answer is 413 with the usual JSON error, and the application never sees the rest of the body.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragwright.server.problems import error_body


class _TooLarge(Exception):
    pass


class BodyLimit:
    """``limit_for(scope)`` gives the byte limit for a request (uploads get a larger one)."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[Scope], int]) -> None:
        self.app, self.limit_for = app, limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(limit, scope, receive, send)
            return
        received, exceeded = 0, False

        async def counted() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise _TooLarge
            return message

        async def guarded(message: Message) -> None:
            # Once over the limit, whatever the application answers (it may have wrapped the
            # error as a 400 of its own) is replaced by the 413 below.
            if not exceeded:
                await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counted, guarded)
        if exceeded:
            await _refuse(limit, scope, receive, send)


async def _refuse(limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    message = f"the request body is over the limit of {limit:,} bytes"
    body = error_body(413, "body_too_large", message, limit=limit)
    await JSONResponse(body, 413, headers={"Connection": "close"})(scope, receive, send)
