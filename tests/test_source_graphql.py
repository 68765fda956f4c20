"""The GraphQL source against a loopback API of our own that answers the fixed query only:
typed variables, cursor pages, the ``updatedAt`` watermark, an ``errors`` array in a 200 as a
failure, API-key and OAuth2 client-credentials headers; an update, a delete (``--full``) and
a `ragwright sync run` killed midway and rerun."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from ragwright import Index
from ragwright.config import Config
from ragwright.errors import CredentialsError
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.sources import open_source
from ragwright.sources.graphql import DOCUMENTS_QUERY, ApiKeyAuth, GraphQLSource
from ragwright.sources.settings import SourceSettings
from ragwright.testing import HashingEmbedder
from sync_helpers import documents, sync_command, sync_environment, wait_for


@dataclass
class Api:
    """Items by id; ``calls`` the variables of every query; ``errors_on_page`` answers that
    page (1-based) with a 200 whose ``errors`` array is set."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    tokens: int = 0
    errors_on_page: int | None = None
    delay: float = 0.0
    key: str = "k-123"
    url: str = ""

    def put(self, key: str, body: str, at: str, principals: tuple[str, ...] = ()) -> None:
        self.items[key] = {
            "id": key, "updatedAt": at, "title": f"Item {key}", "url": None,
            "contentType": "text/markdown", "body": body, "principals": list(principals),
        }  # fmt: skip

    def answer(self, payload: dict[str, Any], authorization: str) -> tuple[int, dict[str, Any]]:
        if authorization not in {f"Bearer {self.key}", f"Bearer tok-{self.tokens}"}:
            return 401, {"errors": [{"message": "unauthorized"}]}
        if payload.get("query") != DOCUMENTS_QUERY:
            return 200, {"errors": [{"message": "this API answers one query only"}]}
        variables = payload["variables"]
        self.calls.append(variables)
        assert isinstance(variables["first"], int)
        if self.errors_on_page is not None and variables["after"] == str(
            (self.errors_on_page - 1) * variables["first"]
        ):
            return 200, {"data": None, "errors": [{"message": "rate limited"}]}
        time.sleep(self.delay)
        since = variables["updatedSince"]
        found = sorted(
            (i for i in self.items.values() if since is None or i["updatedAt"] >= since),
            key=lambda i: (i["updatedAt"], i["id"]),
        )
        start = int(variables["after"] or 0)
        page = found[start : start + variables["first"]]
        end = start + len(page)
        info = {"hasNextPage": end < len(found), "endCursor": str(end)}
        return 200, {"data": {"documents": {"pageInfo": info, "nodes": page}}}

    def token(self, form: dict[str, list[str]], authorization: str) -> tuple[int, dict[str, Any]]:
        expected = "Basic " + base64.b64encode(b"client-1:s3cret").decode()
        if authorization != expected or form.get("grant_type") != ["client_credentials"]:
            return 401, {"error": "invalid_client"}
        self.tokens += 1
        return 200, {"access_token": f"tok-{self.tokens}", "token_type": "Bearer"}


@pytest.fixture
def api() -> Iterator[Api]:
    served = Api()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            authorization = self.headers.get("Authorization", "")
            served.headers.append(authorization)
            if self.path == "/token":
                status, body = served.token(parse_qs(raw.decode()), authorization)
            else:
                status, body = served.answer(json.loads(raw), authorization)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


def sync(kb: Index, api: Api, *, full: bool = False, page_size: int = 2) -> SyncReport:
    source = GraphQLSource(f"{api.url}/graphql", auth=ApiKeyAuth(api.key), page_size=page_size)
    try:
        return kb.sync_source("api", source, full=full)
    finally:
        source.close()


def test_watermark_update_delete_and_the_pinned_api_key_header(api: Api, tmp_path: Path) -> None:
    for number in range(5):
        api.put(
            f"i{number}",
            f"# Item {number}\n\nAbout fjord {number}.",
            f"2026-01-0{number + 1}T00:00:00Z",
            ("u:ann",),
        )
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        first = sync(kb, api)
        assert len(first.added) == 5 and first.complete and not first.failed
        assert set(api.headers) == {f"Bearer {api.key}"}
        assert [c["after"] for c in api.calls] == [None, "2", "4"]  # cursor pages of 2
        assert kb.sync_checkpoint("api").cursor == "2026-01-05T00:00:00Z"
        source = f"{api.url}/graphql#i0"
        document = kb.document(source)
        assert document is not None and document.principals == ("u:ann",)

        api.calls.clear()
        again = sync(kb, api)
        assert api.calls[0]["updatedSince"] == "2026-01-05T00:00:00Z"  # only what changed
        assert (again.added, again.updated, again.unchanged) == ([], [], 1)
        assert not again.complete  # an incremental listing prunes nothing

        api.put("i1", "# Item 1\n\nNow about kelp.", "2026-02-01T00:00:00Z", ("u:ann",))
        del api.items["i3"]
        changed = sync(kb, api)
        assert changed.updated == [f"{api.url}/graphql#i1"] and changed.removed == []
        assert kb.document(f"{api.url}/graphql#i3") is not None  # unseen by a watermark
        full = sync(kb, api, full=True)
        assert full.removed == [f"{api.url}/graphql#i3"] and full.complete
        assert len(kb.documents()) == 4


def test_an_errors_array_in_a_200_is_a_failure_that_prunes_nothing(
    api: Api, tmp_path: Path
) -> None:
    for number in range(6):
        api.put(f"i{number}", f"Item {number}.", f"2026-01-0{number + 1}T00:00:00Z")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        sync(kb, api)
        cursor = kb.sync_checkpoint("api").cursor
        del api.items["i0"]
        api.errors_on_page = 2
        report = sync(kb, api, full=True)
        assert [f.reason for f in report.failed] == [
            f"{api.url}/graphql answered with errors: rate limited"
        ]
        assert not report.complete and report.removed == []
        assert kb.sync_checkpoint("api").cursor == cursor  # the watermark did not move
        api.errors_on_page = None
        assert sync(kb, api, full=True).removed == [f"{api.url}/graphql#i0"]


def settings_for(api: Api, **table: object) -> SourceSettings:
    config = Config({"sources": {"api": {"type": "graphql", "url": f"{api.url}/graphql", **table}}})
    return SourceSettings.from_config(config, "api")


def test_oauth2_client_credentials_from_a_0600_file(api: Api, tmp_path: Path) -> None:
    api.put("i0", "Item zero.", "2026-01-01T00:00:00Z")
    secret = tmp_path / "client-secret"
    secret.write_text("s3cret\n")
    secret.chmod(0o644)
    table = {"auth": "oauth2", "token_url": f"{api.url}/token", "client_id": "client-1",
             "client_secret_file": str(secret)}  # fmt: skip
    with pytest.raises(CredentialsError, match="readable by others"):
        open_source(settings_for(api, **table))
    secret.chmod(0o600)
    source = open_source(settings_for(api, **table))
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        try:
            report = kb.sync_source("api", source)  # type: ignore[arg-type]
        finally:
            source.close()  # type: ignore[union-attr]
    assert len(report.added) == 1
    assert api.tokens == 1 and api.headers[-1] == "Bearer tok-1"


def test_a_secret_written_in_the_table_is_refused(api: Api) -> None:
    with pytest.raises(CredentialsError, match="api_key_env"):
        open_source(settings_for(api, auth="api_key", api_key="k-123"))


@pytest.mark.slow
def test_a_sync_killed_midway_resumes_and_converges(api: Api, tmp_path: Path) -> None:
    total = 40
    for number in range(total):
        api.put(f"i{number:02}", f"Item {number}.", f"2026-01-01T00:{number:02}:00Z")
    (tmp_path / "ragwright.toml").write_text(
        f'[sources.api]\ntype = "graphql"\nurl = "{api.url}/graphql"\nauth = "api_key"\n'
        'api_key_env = "API_KEY"\npage_size = 2\nbatch = 2\n'
    )
    api.delay = 0.1
    command = sync_command("run", "--index", "kb", "--embedder", "hashing")
    environment = sync_environment(API_KEY=api.key)
    process = subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(lambda: len(api.calls) >= 8, timeout=90)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), create=False) as kb:
        checkpoint = kb.sync_checkpoint("api")
    assert checkpoint.cursor is None and 2 <= len(checkpoint.items) < total
    api.delay = 0.0
    rerun = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    added = int(rerun.stdout.split(": ", 1)[1].split(" added")[0])
    assert added <= total - len(checkpoint.items)  # what was committed was not written again
    state = documents(tmp_path / "kb")
    assert sorted(state) == [f"{api.url}/graphql#i{n:02}" for n in range(total)]
