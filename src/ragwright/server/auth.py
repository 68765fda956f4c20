"""Bearer-key authentication with read and write scopes.

No key configured means no authentication (the server then listens on loopback only, see
`ragwright.server.runner`). Otherwise a request needs ``Authorization: Bearer KEY``: a missing
or unknown key is 401 with a ``WWW-Authenticate`` challenge, a known key without the scope the
route needs is 403. The key's *name* is recorded for the request log; the key never is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from ragwright.permissions import EVERYONE
from ragwright.server.keys import ApiKey, Scope, find_key
from ragwright.server.problems import ApiError, error_body
from ragwright.server.settings import ServerSettings

REALM = 'Bearer realm="ragwright"'
_bearer = HTTPBearer(auto_error=False, description="An API key from `ragwright keys add`.")


def check(settings: ServerSettings, authorization: str | None, required: Scope) -> ApiKey | None:
    """The key a request presents, checked for ``required``; None when auth is off."""
    if not settings.auth_required:
        return None
    scheme, _, secret = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise ApiError(
            401,
            "unauthorized",
            "an API key is required: Authorization: Bearer KEY",
            {"WWW-Authenticate": REALM},
        )
    key = find_key(settings.keys, secret.strip())
    if key is None:
        raise ApiError(
            401,
            "unauthorized",
            "unknown API key",
            {"WWW-Authenticate": f'{REALM}, error="invalid_token"'},
        )
    if not key.scope.allows(required):
        raise ApiError(
            403,
            "forbidden",
            f"the key {key.name!r} has scope {key.scope.value}; this needs {required.value}",
        )
    return key


def require(required: Scope) -> Callable[..., str | None]:
    """A route dependency: the calling key's name (None when auth is off)."""

    def dependency(
        request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
    ) -> str | None:
        settings: ServerSettings = request.app.state.settings
        key = check(settings, request.headers.get("authorization"), required)
        name = key.name if key else None
        request.state.key_name = name
        request.state.caller = key.caller if key else EVERYONE
        return name

    return dependency


class RequireKey:
    """The same check around a mounted ASGI app (e.g. the MCP endpoint)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, required: Scope) -> None:
        self.app, self.settings, self.required = app, settings, required

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            key = check(self.settings, headers.get("authorization"), self.required)
            if key is not None and key.caller.restricted:
                # Its tools serve the whole index; `ragwright mcp --principal` binds one.
                raise ApiError(
                    403,
                    "forbidden",
                    f"the key {key.name!r} is bound to principals and the mounted MCP endpoint "
                    "is not; run `ragwright mcp --principal …` for that caller",
                )
        except ApiError as error:
            body = error_body(error.status, error.code, error.message)
            await JSONResponse(body, error.status, headers=error.headers)(scope, receive, send)
            return
        scope.setdefault("state", {})["key_name"] = key.name if key else None
        await self.app(scope, receive, send)
