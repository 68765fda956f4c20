"""The S3 source against moto's standalone S3 server (a real HTTP server on loopback, started
once for the module): ETag versions, an update, a delete, an unchanged bucket that downloads
nothing, and a `ragwright sync run` killed midway and rerun."""

from __future__ import annotations

import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragwright import Index
from ragwright.config import Config
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.sources import open_source
from ragwright.sources.settings import SourceSettings
from ragwright.testing import HashingEmbedder
from sync_helpers import documents, sync_command, sync_environment, wait_for

KEYS = {"S3_KEY_ID": "testing", "S3_SECRET": "testing-secret"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("moto's server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


class Counting:
    """Counts the object downloads boto3 sends to the server (its event hooks)."""

    def __init__(self, client: Any) -> None:
        self.calls: list[str] = []
        client.meta.events.register("before-send.s3.GetObject", self._sent)

    def _sent(self, request: Any, **_: object) -> None:
        self.calls.append(request.url)

    def gets(self) -> int:
        return len(self.calls)


@pytest.fixture
def bucket(endpoint: str) -> Iterator[tuple[str, Any]]:
    name = "b" + uuid.uuid4().hex[:12]
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing-secret",
    )  # fmt: skip
    client.create_bucket(Bucket=name)
    yield name, client
    client.close()


def config_for(endpoint: str, bucket: str, **extra: object) -> Config:
    table: dict[str, object] = {
        "type": "s3", "bucket": bucket, "endpoint_url": endpoint, "prefix": "docs/",
        "access_key_id_env": "S3_KEY_ID", "secret_access_key_env": "S3_SECRET",
        "principals": ["group:staff"], **extra,
    }  # fmt: skip
    return Config({"sources": {"bucket": table}})


def sync(kb: Index, endpoint: str, bucket: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    source = open_source(SourceSettings.from_config(config_for(endpoint, bucket), "bucket"))
    counting = Counting(source.client)  # type: ignore[union-attr]
    try:
        report: SyncReport = kb.sync_source("bucket", source)  # type: ignore[arg-type]
    finally:
        source.close()  # type: ignore[union-attr]
    return report, counting


def test_sync_update_delete_and_an_unchanged_bucket_downloads_nothing(
    endpoint: str, bucket: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, client = bucket
    for key, text in {
        "docs/a.md": "# A\n\nAmber.",
        "docs/sub/b.txt": "Basalt.",
        "c.md": "x",
    }.items():
        client.put_object(Bucket=name, Key=key, Body=text.encode())
    client.put_object(Bucket=name, Key="docs/image.bin", Body=b"\0\1")  # no parser: left alone
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report, counting = sync(kb, endpoint, name, monkeypatch)
        expected = [f"s3://{name}/docs/a.md", f"s3://{name}/docs/sub/b.txt"]
        assert sorted(report.added) == expected and not report.failed and report.complete
        document = kb.document(expected[0])
        assert document is not None and "Amber" in document.content
        assert document.principals == ("group:staff",)
        assert counting.gets() == 2  # the two objects a parser reads

        again, counting = sync(kb, endpoint, name, monkeypatch)
        assert (again.added, again.updated, again.unchanged) == ([], [], 2)
        assert counting.gets() == 0  # one listing, no object downloaded

        client.put_object(Bucket=name, Key="docs/a.md", Body=b"# A\n\nAmber and kelp.")
        client.delete_object(Bucket=name, Key="docs/sub/b.txt")
        changed, counting = sync(kb, endpoint, name, monkeypatch)
        assert changed.updated == [expected[0]] and changed.removed == [expected[1]]
        assert counting.gets() == 1
        assert [d.source for d in kb.documents()] == [expected[0]]


def test_missing_credentials_are_a_typed_error(endpoint: str, bucket: tuple[str, Any]) -> None:
    from ragwright.errors import CredentialsError

    settings = SourceSettings.from_config(config_for(endpoint, bucket[0]), "bucket")
    settings.environ = {}
    with pytest.raises(CredentialsError, match="S3_KEY_ID"):
        open_source(settings)


def checkpointed(index: Path) -> int:
    try:
        with sqlite3.connect(f"file:{index / 'index.sqlite3'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT count(*) FROM source_items").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_a_sync_killed_midway_resumes_and_converges(
    endpoint: str, bucket: tuple[str, Any], tmp_path: Path
) -> None:
    name, client = bucket
    total = 160
    for number in range(total):
        client.put_object(Bucket=name, Key=f"docs/n{number:03}.md", Body=f"Note {number}.".encode())
    table = config_for(endpoint, name, batch=3).data["sources"]["bucket"]
    lines = [f"{k} = {v!r}".replace("'", '"') for k, v in table.items()]
    (tmp_path / "ragwright.toml").write_text("[sources.bucket]\n" + "\n".join(lines) + "\n")
    command = sync_command("run", "--index", "kb", "--embedder", "hashing")
    process = subprocess.Popen(
        command, cwd=tmp_path, env=sync_environment(**KEYS), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(lambda: checkpointed(tmp_path / "kb") >= 24, timeout=90)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    killed_at = checkpointed(tmp_path / "kb")
    assert killed_at < total  # killed midway
    rerun = subprocess.run(
        command, cwd=tmp_path, env=sync_environment(**KEYS), capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    added = int(rerun.stdout.split(": ", 1)[1].split(" added")[0])
    assert added <= total - killed_at  # what was committed was not written again
    state = documents(tmp_path / "kb")
    assert sorted(state) == [f"s3://{name}/docs/n{n:03}.md" for n in range(total)]
    assert all(state[f"s3://{name}/docs/n{n:03}.md"] == f"Note {n}." for n in range(total))
