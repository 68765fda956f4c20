"""The watch on its surfaces: `ragwright serve --watch` keeps the served index current and
reports at ``GET /v1/sync`` (a server without ``--watch`` reports watching nothing);
`ragwright watch` refuses what it cannot watch with a typed error."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from ragwright.cli import app as cli
from server_helpers import build_index, serve, serve_process
from watch_helpers import wait_for


@pytest.mark.slow
def test_serve_watch_makes_a_saved_file_searchable_and_reports_failures(tmp_path: Path) -> None:
    build_index(tmp_path).close()
    docs = tmp_path / "docs"
    options = ("--watch", str(docs), "--debounce", "50", "--reconcile-every", "0")
    with serve_process(str(tmp_path / "index"), tmp_path, *options) as url:

        def found(query: str) -> list[str]:
            body = {"query": query, "mode": "bm25", "top_k": 3}
            hits = httpx.post(f"{url}/v1/search", json=body, timeout=30).json()["hits"]
            return [hit["source"] for hit in hits]

        assert wait_for(lambda: httpx.get(f"{url}/v1/sync").json()["last_sync"] is not None)
        (docs / "zebra.md").write_text("Zebras graze on the savanna at dawn.\n", "utf-8")
        (docs / "broken.txt").write_bytes(b"\x00\x01binary\x00" * 50)
        assert wait_for(lambda: found("zebras savanna") == ["docs/zebra.md"])
        assert wait_for(lambda: httpx.get(f"{url}/v1/sync").json()["failures"] != [])
        status = httpx.get(f"{url}/v1/sync").json()
        assert status["watching"] == [str(docs)] and status["running"] is True
        assert status["totals"]["added"] == 1 and status["pending"] == 0
        assert status["reconcile_complete"] is True and status["error"] is None
        [failure] = status["failures"]
        assert failure["source"] == "docs/broken.txt" and "binary" in failure["reason"]
        (docs / "broken.txt").unlink()
        assert wait_for(lambda: httpx.get(f"{url}/v1/sync").json()["failures"] == [])


def test_a_server_without_watch_reports_watching_nothing(tmp_path: Path) -> None:
    with build_index(tmp_path) as index, serve(index) as url:
        response = httpx.get(f"{url}/v1/sync")
    assert response.status_code == 200
    status = response.json()
    assert (status["watching"], status["running"], status["last_sync"]) == ([], False, None)


def test_watch_refuses_a_path_that_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("a file, not a folder\n", "utf-8")
    for path in ("file.md", "missing"):
        result = CliRunner().invoke(
            cli,
            [
                "watch",
                str(tmp_path / path),
                "--index",
                str(tmp_path / "kb"),
                "--embedder",
                "hashing",
            ],
        )
        assert result.exit_code == 2
        assert "not a folder" in result.output


def test_watch_refuses_a_negative_reconcile_interval(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["watch", str(tmp_path), "--index", str(tmp_path / "kb"), "--reconcile-every", "-1"]
    )
    assert result.exit_code == 2
    assert "--reconcile-every must be 0 or more" in result.output
