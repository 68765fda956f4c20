"""API keys: creation and storage (`ragwright keys`), 401 vs 403, scopes, the loopback rule."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from typer.testing import CliRunner

from ragwright import ConfigError
from ragwright.cli import app as cli
from ragwright.config import Config, load_config
from ragwright.server import ServerSettings, create_app
from ragwright.server.access_log import JsonFormatter
from ragwright.server.keys import Scope, find_key
from ragwright.server.runner import check_exposure
from server_helpers import build_index, serve, serve_logged

runner = CliRunner()


def add_key(config: Path, name: str, scope: str) -> str:
    result = runner.invoke(cli, ["keys", "add", name, "--scope", scope, "--config", str(config)])
    assert result.exit_code == 0, result.output
    secret = result.stdout.strip().splitlines()[-1]
    assert secret.startswith("rw_")
    return secret


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "ragwright.toml"
    path.write_text("# my settings\n[server]\nmax_files = 7  # per upload\n", encoding="utf-8")
    return path


def test_keys_add_stores_only_a_hash_and_keeps_the_file_readable(config: Path) -> None:
    reader = add_key(config, "reader", "read")
    writer = add_key(config, "ci-bot", "write")
    text = config.read_text(encoding="utf-8")
    assert reader not in text and writer not in text
    assert "# my settings" in text and "# per upload" in text  # comments survive
    settings = ServerSettings.from_config(load_config(config))
    assert settings.max_files == 7
    assert {(k.name, k.scope) for k in settings.keys} == {
        ("reader", Scope.READ),
        ("ci-bot", Scope.WRITE),
    }
    assert find_key(settings.keys, reader).name == "reader"  # type: ignore[union-attr]
    assert find_key(settings.keys, writer + "x") is None
    assert tomllib.loads(text)["server"]["keys"]["reader"]["hash"].startswith("sha256:")

    listed = runner.invoke(cli, ["keys", "list", "--config", str(config)])
    assert "reader" in listed.stdout and "ci-bot" in listed.stdout and reader not in listed.stdout
    duplicate = runner.invoke(cli, ["keys", "add", "reader", "--config", str(config)])
    assert duplicate.exit_code == 2 and "already has a key" in duplicate.output
    removed = runner.invoke(cli, ["keys", "remove", "reader", "--config", str(config)])
    assert removed.exit_code == 0
    assert [k.name for k in ServerSettings.from_config(load_config(config)).keys] == ["ci-bot"]
    again = runner.invoke(cli, ["keys", "remove", "reader", "--config", str(config)])
    assert again.exit_code == 2 and "no key named" in again.output


def test_keys_add_creates_a_private_config_file(tmp_path: Path) -> None:
    path = tmp_path / "new.toml"
    add_key(path, "alice", "write")
    assert path.stat().st_mode & 0o777 == 0o600
    bad = runner.invoke(cli, ["keys", "add", "bad name", "--config", str(path)])
    assert bad.exit_code == 2
    scope = runner.invoke(cli, ["keys", "add", "bob", "--scope", "admin", "--config", str(path)])
    assert scope.exit_code == 2 and "read or write" in scope.output


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"max_files": 0}, "positive number"),
        ({"max_upload_mb": "big"}, "positive number"),
        ({"port": 80}, "unknown setting 'port'"),
        ({"header_timeout": 0}, "positive number"),
        ({"body_timeout": float("nan")}, "positive number"),
        ({"max_connections": float("inf")}, "positive number"),
        ({"max_files": float("inf")}, "positive number"),
        ({"keys": {"a": {"hash": "md5:x", "scope": "read"}}}, "sha256:"),
        ({"keys": {"a": {"hash": "sha256:x", "scope": "admin"}}}, "'read' or 'write'"),
    ],
)
def test_bad_server_settings_are_config_errors(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ServerSettings.from_config(Config({"server": table}))


# -- requests -------------------------------------------------------------------------------


@pytest.fixture
def secured(tmp_path: Path, config: Path) -> Iterator[tuple[str, str, str]]:
    reader, writer = add_key(config, "reader", "read"), add_key(config, "writer", "write")
    settings = ServerSettings.from_config(load_config(config))

    async def hello(_: object) -> PlainTextResponse:
        return PlainTextResponse("mounted")

    extra = Starlette(routes=[Route("/", hello)])
    with build_index(tmp_path) as index, serve(index, settings, mounts={"/extra": extra}) as url:
        yield url, reader, writer


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_missing_or_unknown_keys_are_401_with_a_challenge(secured: tuple[str, str, str]) -> None:
    url, reader, _ = secured
    search = {"query": "install"}
    for headers in ({}, {"Authorization": f"Basic {reader}"}, {"Authorization": "Bearer"}):
        response = httpx.post(f"{url}/v1/search", json=search, headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="ragwright"'
        assert response.json()["error"]["code"] == "unauthorized"
    unknown = httpx.post(f"{url}/v1/search", json=search, headers=bearer(reader + "x"))
    assert unknown.status_code == 401
    assert 'error="invalid_token"' in unknown.headers["WWW-Authenticate"]
    assert httpx.get(f"{url}/extra/").status_code == 401
    files = [("files", ("faq.md", b"Wombats.\n", "text/markdown"))]
    assert httpx.post(f"{url}/v1/documents", files=files).status_code == 401
    assert httpx.get(f"{url}/healthz").status_code == 200  # health needs no key
    assert httpx.get(f"{url}/").status_code == 200  # nor the page (it asks for one)


def test_every_v1_route_refuses_a_request_without_a_key(tmp_path: Path, config: Path) -> None:
    """Read from the app's own OpenAPI paths, so a route added later without a key check
    fails here."""
    add_key(config, "reader", "read")
    settings = ServerSettings.from_config(load_config(config))
    with build_index(tmp_path) as index, serve(index, settings) as url:
        paths = create_app(index, settings).openapi()["paths"]
        routes = [
            (method.upper(), path)
            for path, operations in paths.items()
            if path.startswith("/v1/")
            for method in operations
        ]
        assert len(routes) >= 8, routes
        for method, template in routes:
            path = template.replace("{document}", "docs/guide.md").replace("{chunk_id}", "x")
            body = {"query": "install", "question": "install?"} if method == "POST" else None
            response = httpx.request(method, f"{url}{path}", json=body)
            assert response.status_code == 401, (method, path, response.text)
        assert index.documents.get("docs/guide.md") is not None


def test_read_keys_read_and_write_keys_do_both(secured: tuple[str, str, str]) -> None:
    url, reader, writer = secured
    files = [("files", ("faq.md", b"Wombats dig burrows.\n", "text/markdown"))]
    for path in ("/v1/stats", "/v1/documents", "/extra/"):
        assert httpx.get(f"{url}{path}", headers=bearer(reader)).status_code == 200, path
    refused = httpx.post(f"{url}/v1/documents", files=files, headers=bearer(reader))
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert "WWW-Authenticate" not in refused.headers
    delete = httpx.delete(f"{url}/v1/documents/docs/guide.md", headers=bearer(reader))
    assert delete.status_code == 403
    uploaded = httpx.post(f"{url}/v1/documents", files=files, headers=bearer(writer))
    assert uploaded.status_code == 200
    search = httpx.post(f"{url}/v1/search", json={"query": "wombats"}, headers=bearer(writer))
    assert search.status_code == 200 and search.json()["hits"]
    deleted = httpx.delete(f"{url}/v1/documents/uploads/faq.md", headers=bearer(writer))
    assert deleted.status_code == 200


def test_the_log_names_the_key_and_never_shows_it(tmp_path: Path, config: Path) -> None:
    reader = add_key(config, "reader", "read")
    settings = ServerSettings.from_config(load_config(config))
    with build_index(tmp_path) as index, serve_logged(index, settings) as (url, records):
        httpx.get(f"{url}/v1/stats", headers=bearer(reader))
        httpx.get(f"{url}/v1/stats", headers=bearer("rw_wrong"))
    formatter = JsonFormatter()
    lines = [formatter.format(r) for r in records]
    assert any('"key": "reader"' in line and '"status": 200' in line for line in lines)
    assert any('"key": null' in line and '"status": 401' in line for line in lines)
    assert not any(reader in line or "rw_wrong" in line for line in lines)


# -- exposure -------------------------------------------------------------------------------


def test_without_keys_the_server_stays_on_loopback(tmp_path: Path, config: Path) -> None:
    open_settings = ServerSettings()
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_exposure(host, open_settings, insecure_no_auth=False)
    with pytest.raises(ConfigError, match="--insecure-no-auth"):
        check_exposure("0.0.0.0", open_settings, insecure_no_auth=False)
    check_exposure("0.0.0.0", open_settings, insecure_no_auth=True)
    add_key(config, "alice", "write")
    check_exposure("0.0.0.0", ServerSettings.from_config(load_config(config)), False)

    empty = tmp_path / "empty.toml"
    empty.write_text("[server]\n")
    refused = runner.invoke(
        cli, ["serve", "--index", str(tmp_path / "idx"), "--host", "0.0.0.0", "--config",
              str(empty)],
    )  # fmt: skip
    assert refused.exit_code == 2 and "--insecure-no-auth" in refused.output
