"""GraphQL API sources: `GraphQLSource`, the base a connector for one API subclasses, and
the built-in ``type = "graphql"`` source for APIs that follow its `DOCUMENTS_QUERY`.

The conventions: one POST per page with a constant query document and typed variables
(``first``, ``after``, ``updatedSince``; nothing the user writes is ever put into the query
text); cursor pagination (``pageInfo { hasNextPage endCursor }``); a watermark on
``updatedAt`` (the cursor of the checkpoint), so a sync lists only what changed since the last
one, inclusively, and the versions recorded skip what it lists again; a 200 response whose
``errors`` array is not empty is a failure (`SourceError`), never an empty page. An
incremental listing cannot see deletions: ``ragwright sync run --full`` lists everything,
and that complete listing prunes.

Authentication, with the header format pinned: ``auth = "api_key"`` sends
``Authorization: Bearer KEY`` (or the bare key in ``api_key_header``, e.g. ``X-API-Key``);
``auth = "oauth2"`` gets a token from ``token_url`` by the client-credentials grant (client id
and secret in HTTP Basic, RFC 6749 section 2.3.1; ``scope`` if given), sends it as
``Authorization: Bearer TOKEN``, and gets a new one when it expires or a call answers 401.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import httpx

from ragwright.errors import ConfigError, SourceError
from ragwright.ports import Checkpoint, ListingOutcome, SourceItem
from ragwright.sources.settings import SourceSettings

DOCUMENTS_QUERY = """\
query RagwrightDocuments($first: Int!, $after: String, $updatedSince: DateTime) {
  documents(first: $first, after: $after, updatedSince: $updatedSince) {
    pageInfo { hasNextPage endCursor }
    nodes { id updatedAt title url contentType body principals }
  }
}"""

_NAMES = {"text/markdown": "item.md", "text/html": "item.html", "text/plain": "item.txt"}


class Auth:
    """The ``Authorization`` (or API-key) header of every call."""

    def headers(self, client: httpx.Client, *, renew: bool = False) -> dict[str, str]:
        return {}


class ApiKeyAuth(Auth):
    def __init__(self, key: str, header: str = "Authorization") -> None:
        self.key, self.header = key, header

    def headers(self, client: httpx.Client, *, renew: bool = False) -> dict[str, str]:
        value = f"Bearer {self.key}" if self.header.lower() == "authorization" else self.key
        return {self.header: value}


class ClientCredentials(Auth):
    """OAuth2 client credentials: a token from ``token_url``, kept until it expires."""

    def __init__(self, token_url: str, client_id: str, secret: str, scope: str | None) -> None:
        self.token_url, self.client_id, self.secret, self.scope = (
            token_url, client_id, secret, scope,
        )  # fmt: skip
        self._token: str | None = None
        self._expires = 0.0

    def headers(self, client: httpx.Client, *, renew: bool = False) -> dict[str, str]:
        if renew or self._token is None or time.monotonic() >= self._expires:
            self._token = self._fetch(client)
        return {"Authorization": f"Bearer {self._token}"}

    def _fetch(self, client: httpx.Client) -> str:
        form = {"grant_type": "client_credentials"}
        if self.scope:
            form["scope"] = self.scope
        try:
            response = client.post(self.token_url, data=form, auth=(self.client_id, self.secret))
        except httpx.HTTPError as error:
            raise SourceError(f"the token endpoint {self.token_url} failed: {error}") from error
        if response.status_code != 200:
            raise SourceError(
                f"the token endpoint {self.token_url} answered HTTP {response.status_code}"
            )
        try:
            body = response.json()
            token = str(body["access_token"])
            lifetime = float(body.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError) as error:
            raise SourceError(f"the token endpoint {self.token_url} sent no token") from error
        self._expires = time.monotonic() + max(0.0, lifetime - 30)  # renewed a little early
        return token


class GraphQLSource:
    """The base of a GraphQL API source: subclasses set `QUERY` and `CONNECTION` (the field
    of ``data`` holding the page) and map a node to an item (`item`) and its content
    (`content`). The variables are ``first``, ``after`` and ``updatedSince``."""

    QUERY = DOCUMENTS_QUERY
    CONNECTION = "documents"

    def __init__(
        self,
        url: str,
        *,
        auth: Auth | None = None,
        page_size: int = 100,
        principals: tuple[str, ...] = (),
        client: httpx.Client | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.url = url
        self.auth = auth or Auth()
        self.page_size = page_size
        self.principals = principals
        self.client = client or httpx.Client(timeout=timeout)
        self._contents: dict[str, bytes] = {}

    def close(self) -> None:
        self.client.close()

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        since = checkpoint.cursor
        outcome.complete = since is None  # a listing from a watermark cannot see deletions
        watermark = since
        after: str | None = None
        while True:
            variables = {"first": self.page_size, "after": after, "updatedSince": since}
            page = self._page(variables)
            for node in _list(page.get("nodes"), "nodes"):
                if not isinstance(node, Mapping):
                    raise SourceError(f"{self.url}: a node is not an object")
                item = self.item(node)
                updated = str(node.get("updatedAt", ""))
                if watermark is None or _later(updated, watermark):
                    watermark = updated
                self._contents = {item.key: self.content(node)}
                yield item
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                break
            after = info.get("endCursor")
            if not isinstance(after, str):
                raise SourceError(f"{self.url}: hasNextPage without an endCursor")
        outcome.cursor = watermark

    def item(self, node: Mapping[str, Any]) -> SourceItem:
        """The item a node of `QUERY` describes."""
        key = str(node.get("id") or "")
        updated = node.get("updatedAt")
        if not key or not isinstance(updated, str):
            raise SourceError(f"{self.url}: a node without id or updatedAt")
        principals = tuple(sorted({*self.principals, *map(str, node.get("principals") or ())}))
        digest = hashlib.sha256("\0".join(principals).encode()).hexdigest()[:16]
        metadata = {k: node[k] for k in ("title", "url") if isinstance(node.get(k), str)}
        return SourceItem(
            key=key,
            version=f"{updated}|{digest}",
            document_source=str(node.get("url") or f"{self.url}#{key}"),
            name=_NAMES.get(str(node.get("contentType", "")).lower(), "item.txt"),
            principals=principals,
            metadata={**metadata, "updated_at": updated},
        )

    def content(self, node: Mapping[str, Any]) -> bytes:
        return str(node.get("body") or "").encode("utf-8")

    def fetch(self, item: SourceItem) -> bytes:
        content = self._contents.pop(item.key, None)
        if content is None:
            raise SourceError(f"{self.url}: {item.key} was not in the listing just made")
        return content

    def _page(self, variables: dict[str, Any]) -> Mapping[str, Any]:
        """One POST of the constant query; the connection's page, or `SourceError`."""
        payload = {"query": self.QUERY, "variables": variables}
        response = self._post(payload, renew=False)
        if response.status_code == 401:  # an expired or revoked token: one more try
            response = self._post(payload, renew=True)
        if response.status_code != 200:
            raise SourceError(f"{self.url} answered HTTP {response.status_code}")
        try:
            body = response.json()
        except ValueError as error:
            raise SourceError(f"{self.url} answered something that is not JSON") from error
        if not isinstance(body, Mapping):
            raise SourceError(f"{self.url} answered something that is not a GraphQL response")
        errors = body.get("errors")
        if errors:
            messages = "; ".join(
                str(e.get("message", e)) if isinstance(e, Mapping) else str(e)
                for e in _list(errors, "errors")
            )
            raise SourceError(f"{self.url} answered with errors: {messages}")
        data = body.get("data")
        page = data.get(self.CONNECTION) if isinstance(data, Mapping) else None
        if not isinstance(page, Mapping):
            raise SourceError(f"{self.url}: the response has no data.{self.CONNECTION}")
        return page

    def _post(self, payload: dict[str, Any], *, renew: bool) -> httpx.Response:
        try:
            headers = self.auth.headers(self.client, renew=renew)
            return self.client.post(self.url, json=payload, headers=headers)
        except httpx.HTTPError as error:
            raise SourceError(f"{self.url} failed: {error}") from error


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise SourceError(f"the GraphQL response's {what} is not a list")
    return value


def _later(first: str, second: str) -> bool:
    try:
        return _instant(first) > _instant(second)
    except ValueError as error:
        raise SourceError(f"updatedAt {first!r} is not an ISO 8601 time") from error


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def open_graphql(settings: SourceSettings) -> GraphQLSource:
    return GraphQLSource(
        settings.required("url"),
        auth=auth_from(settings),
        page_size=settings.integer("page_size", 100, minimum=1),
        principals=tuple(settings.strings("principals")),
        timeout=float(settings.integer("timeout", 30, minimum=1)),
    )


def auth_from(settings: SourceSettings) -> Auth:
    kind = settings.string("auth", "none")
    if kind == "api_key":
        key = settings.secret("api_key")
        assert key is not None
        return ApiKeyAuth(key, settings.string("api_key_header", "Authorization") or "")
    if kind == "oauth2":
        secret = settings.secret("client_secret")
        assert secret is not None
        return ClientCredentials(
            settings.required("token_url"),
            settings.required("client_id"),
            secret,
            settings.string("scope"),
        )
    if kind == "none":
        return Auth()
    raise ConfigError(f'{settings.where}: auth must be "api_key", "oauth2" or "none"')
