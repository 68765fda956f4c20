"""Connection limits below the application: a deadline for a request's headers, a longest pause
while its body arrives, and a cap on open connections (slowloris and its kin).

uvicorn has none of the three: its keep-alive timer runs only between requests and is
cancelled by the first byte of the next one, so a connection that sends nothing, or half a
request and then a byte now and then, is held open for ever, before any authentication (ASGI
middleware runs only once a request's headers are in). `limited_protocol` makes a subclass of
uvicorn's h11 protocol that adds them:

- **header_timeout**: a request's headers must have arrived this many seconds after the
  connection opened, or after the first byte of a later request on a kept-alive connection
  (the time between requests is uvicorn's keep-alive timeout). A connection that sent nothing
  is closed; one that sent part of a request is answered 408.
- **body_timeout**: while a body is incomplete, the longest wait for its next bytes (as
  nginx's ``client_body_timeout``); not counted while the server itself has stopped reading
  (flow control, or a client waiting for ``100 Continue``). Past it: 408, and the application
  reading the body sees the client gone.
- **body_min_rate**: once a body has taken ``body_timeout`` seconds, it must have averaged
  this many bytes a second (as Apache's ``mod_reqtimeout`` ``MinRate``): a client sending a
  byte just before each pause ends would otherwise hold the connection for days. Past it: 408.
- **max_connections**: a connection beyond the cap is answered 503 at once and closed; the
  connections it found stay as they are.

Every answer here is the API's JSON error shape (`ragwright.server.problems`), as is the 400
for bytes that are not HTTP, which uvicorn itself would send as plain text.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from http import HTTPStatus

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ragwright.server.access_log import LOGGER, UNANSWERED_STATUS
from ragwright.server.problems import error_body
from ragwright.server.settings import ConnectionLimits

log = logging.getLogger(LOGGER)
#: How long a refused connection is kept to let the client read its 503 before the socket is
#: closed (closing at once, with its request still unread, can reset the connection first).
REFUSED_LINGER = 1.0


def limited_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``limits`` (uvicorn's ``http`` setting takes the class)."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits})


def problem_bytes(status: HTTPStatus, code: str, message: str, extra_header: str = "") -> bytes:
    """A whole HTTP/1.1 response in the API's error shape, closing the connection: written
    straight to the socket where no request (or no application) can answer."""
    body = json.dumps(error_body(status.value, code, message)).encode()
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"{extra_header}connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class LimitedH11Protocol(H11Protocol):
    limits = ConnectionLimits()

    _deadline: asyncio.TimerHandle | None = None
    _waiting_for: str | None = None  # "headers" or "body": what the deadline is for
    _refused = False
    _body_began: float | None = None  # when the body under way started to arrive
    _body_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse()
            return
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # its 503 is sent; the request is never read
        if self._body_began is not None:
            self._body_bytes += len(data)
        super().data_received(data)
        self._follow_request()
        if self._body_began is not None and self._body_too_slow():
            self._body_timed_out(slow=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_request()  # the next request (pipelined, or the rest of this body)

    def _follow_request(self) -> None:
        """Move the deadline on as the request does. Waiting for a request, its headers'
        deadline runs (from the connection's start or the previous response's end: arrivals
        do not move it); while a body is incomplete, the body's (each arrival restarts it);
        once the request is in, none."""
        state = self.conn.their_state
        if state is h11.SEND_BODY and self._body_began is None:
            # Its first bytes came with the headers (or come next): counted from here.
            self._body_began, self._body_bytes = self.loop.time(), 0
        elif state is not h11.SEND_BODY:
            self._body_began = None
        if state is h11.IDLE:
            if self._waiting_for != "headers":
                self._arm("headers", self.limits.header_timeout, self._header_timed_out)
        elif state is h11.SEND_BODY:
            self._arm("body", self.limits.body_timeout, self._body_timed_out)
        else:
            self._disarm()

    def _body_too_slow(self) -> bool:
        """Whether the body under way, past its first ``body_timeout`` seconds, averages fewer
        than ``body_min_rate`` bytes a second. A client held back by ``100 Continue`` has not
        been asked for its body yet: its clock starts again."""
        assert self._body_began is not None
        now = self.loop.time()
        if self.cycle.waiting_for_100_continue:
            self._body_began, self._body_bytes = now, 0
            return False
        elapsed = now - self._body_began
        return (
            elapsed > self.limits.body_timeout
            and self._body_bytes < self.limits.body_min_rate * elapsed
        )

    # -- the deadlines ------------------------------------------------------------------------

    def _arm(self, waiting_for: str, seconds: float, handler: Callable[[], None]) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, handler)
        self._waiting_for = waiting_for

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self._waiting_for = None

    def _header_timed_out(self) -> None:
        self._deadline = self._waiting_for = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # part of a request came: say why it ends
            seconds = f"{self.limits.header_timeout:g}s"
            self._answer(HTTPStatus.REQUEST_TIMEOUT, f"the request's headers took over {seconds}")
        self.transport.close()

    def _body_timed_out(self, *, slow: bool = False) -> None:
        """The body stopped arriving for ``body_timeout`` seconds, or (``slow``) arrives
        slower than ``body_min_rate``."""
        self._disarm()
        if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            return
        cycle = self.cycle  # a body is under way: its request has a cycle
        if not slow and (self.flow.read_paused or cycle.waiting_for_100_continue):
            # The server is not reading (the application has not asked for more yet): the
            # client is not the one that is late.
            self._arm("body", self.limits.body_timeout, self._body_timed_out)
            return
        if not cycle.response_started:
            if slow:
                rate = f"{self.limits.body_min_rate:,} bytes a second"
                message = f"the request's body arrives too slowly: under {rate} on average"
            else:
                seconds = f"{self.limits.body_timeout:g}s"
                message = f"the request's body stopped arriving: nothing came for {seconds}"
            self._answer(HTTPStatus.REQUEST_TIMEOUT, message)
            cycle.scope[UNANSWERED_STATUS] = 408  # type: ignore[literal-required]
        cycle.disconnected = True  # the application reading the body gets http.disconnect
        cycle.message_event.set()
        self.transport.close()

    def _refuse(self) -> None:
        self._refused = True
        limit = self.limits.max_connections
        message = f"the server has {limit} connections open, its limit: try again shortly"
        self._answer(HTTPStatus.SERVICE_UNAVAILABLE, message)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(REFUSED_LINGER, self.transport.close)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes that are not HTTP (h11 refused them: a NUL in a header,
        headers past 16 KiB, a malformed request line), in the API's error shape: uvicorn
        sends plain text."""
        self.transport.write(problem_bytes(HTTPStatus.BAD_REQUEST, "invalid_http", msg))
        self.transport.close()

    def _answer(self, status: HTTPStatus, message: str) -> None:
        """Write ``status`` in the error shape (the connection closes after it) and log it."""
        code = "request_timeout" if status is HTTPStatus.REQUEST_TIMEOUT else "too_many_connections"
        retry = "retry-after: 1\r\n" if status is HTTPStatus.SERVICE_UNAVAILABLE else ""
        self.transport.write(problem_bytes(status, code, message, retry))
        client = self.client[0] if self.client else None
        fields = {"event": f"connection.{code}", "status": status.value, "client": client}
        log.warning(
            "connection from %s: %s %s", client, status.value, message, extra={"fields": fields}
        )
