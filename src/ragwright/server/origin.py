"""Requests from other web sites: a browser must not be usable to reach the API for them.

The API sets no CORS headers, so a page on another site can never *read* an answer. But a
browser still *sends* some cross-site requests without asking first (a form POST, multipart
uploads included), and a server without keys on loopback has no other defence: any page the
user visits could add documents to their index. And a site whose name resolves to 127.0.0.1
(DNS rebinding) is, to the browser, same-origin with a loopback server, so it could read too.

So, for every request:

- when the server listens on loopback, the ``Host`` header must name a loopback host
  (``localhost``, ``127.0.0.1``, ``[::1]``, any port), or the answer is 400 ``untrusted_host``;
- a request that can change something (any method but GET, HEAD, OPTIONS) made by a browser
  for another site is 403 ``cross_site_request``: ``Sec-Fetch-Site`` is ``cross-site`` or
  ``same-site``, or (older browsers, which send no ``Sec-Fetch-Site``) its ``Origin`` is not
  this server's ``Host``.

Scripts and MCP clients send neither header and are not affected; the web page is same-origin.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ragwright.server.problems import error_body

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, IPv6 with or without brackets) is loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host: str) -> str:
    """The name in a ``Host`` header value, without port or IPv6 brackets, lower case."""
    return (urlsplit(f"//{host}").hostname or "").lower()


class CrossSiteGuard:
    """The rules above around ``app``; ``loopback`` says the server listens on loopback."""

    def __init__(self, app: ASGIApp, *, loopback: bool) -> None:
        self.app, self.loopback = app, loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        refusal = None
        if self.loopback and not is_loopback(host_name(host)):
            refusal = (
                400,
                "untrusted_host",
                f"this server answers to loopback names, not {host!r}",
            )
        elif scope["method"] not in SAFE_METHODS and _from_another_site(headers, host):
            refusal = (403, "cross_site_request", "a request from another web site is refused")
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, code, message = refusal
        await JSONResponse(error_body(status, code, message), status)(scope, receive, send)


def _from_another_site(headers: dict[str, str], host: str) -> bool:
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in {"cross-site", "same-site"}
    origin = headers.get("origin")
    return origin is not None and urlsplit(origin).netloc.lower() != host.lower()
