from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import ingest_sample_docs, runner
from ragwright.cli import app


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ingest_sample_docs(tmp_path, monkeypatch)


def run_json(*args: str) -> object:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ingest_reports_a_summary_and_reruns_are_unchanged(index: Path) -> None:
    report = run_json("ingest", "docs")
    assert report["unchanged"] == ["docs/install.md", "docs/pets.txt"]
    assert report["added"] == [] and report["chunks_written"] == 0


def test_ingest_exit_code_says_whether_a_file_failed(index: Path) -> None:
    Path("docs/bad.txt").write_bytes(b"\x00\xff\x00" * 50)
    result = runner.invoke(app, ["ingest", "docs"])
    assert result.exit_code == 1
    assert "docs/bad.txt" in result.output


def test_search_json_is_stable_and_complete(index: Path) -> None:
    out = run_json("search", "install on linux", "--top-k", "2")
    assert out["mode"] == "hybrid" and out["top_k"] == 2 and out["filter"] is None
    first = out["hits"][0]
    assert first["source"] == "docs/install.md" and first["rank"] == 1
    assert first["scale"] == "fused" and first["arms"] == ["bm25", "vector"]
    assert first["breadcrumb"] == "Install > Linux"
    assert set(first) >= {"score", "document_id", "chunk_id", "char_start", "char_end", "text"}


def test_search_human_output_and_filters(index: Path) -> None:
    result = runner.invoke(app, ["search", "cats", "--filter", 'source = "docs/pets.txt"'])
    assert result.exit_code == 0 and "docs/pets.txt" in result.output
    out = run_json("search", "cats", "--mode", "bm25", "--filter", 'filename = "install.md"')
    assert out["hits"] == []


def test_bad_filter_is_a_clear_error_with_exit_code_2(index: Path) -> None:
    result = runner.invoke(app, ["search", "cats", "--filter", "year >"])
    assert result.exit_code == 2
    assert "expected a value" in result.output


def test_min_score_on_hybrid_is_refused(index: Path) -> None:
    result = runner.invoke(app, ["search", "cats", "--min-score", "0.3"])
    assert result.exit_code == 2 and "fused" in result.output


def test_ask_citations_resolve_to_exact_spans(index: Path) -> None:
    out = run_json("ask", "How do I install it on Linux?")
    assert out["found"] and out["citations"]
    shown = run_json("docs", "show", out["citations"][0]["source"])
    for citation in out["citations"]:
        assert f"[{citation['number']}]" in out["answer"]
        start, end = citation["char_start"], citation["char_end"]
        assert shown["content"][start:end] == citation["quote"]


def test_docs_list_show_delete_and_stats(index: Path) -> None:
    listed = run_json("docs", "list")
    assert [d["source"] for d in listed] == ["docs/install.md", "docs/pets.txt"]
    shown = run_json("docs", "show", listed[0]["id"], "--chunks")
    assert shown["sections"][-1]["breadcrumb"] == "Install > Linux" and shown["chunks"]
    assert runner.invoke(app, ["docs", "delete", "docs/pets.txt"]).exit_code == 0
    missing = runner.invoke(app, ["docs", "delete", "docs/pets.txt"])
    assert missing.exit_code == 2 and "no document with id or source 'docs/pets.txt'" in " ".join(
        missing.output.split()
    )
    stats = run_json("stats")
    assert stats["documents"] == 1 and stats["embedder"].startswith("hashing")
    assert stats["embedding_space"]["model"] == "ragwright-hashing"
    text = runner.invoke(app, ["stats"]).stdout
    assert "embedding_space: model=ragwright-hashing, dimension=" in text
    assert "{" not in text  # settings read as key=value pairs, not Python dicts


def test_commands_on_a_missing_index_explain_how_to_create_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "none"))
    result = runner.invoke(app, ["search", "anything"])
    assert result.exit_code == 2 and "ragwright ingest" in result.output
    assert not (tmp_path / "none").exists()


def test_error_messages_are_printed_verbatim_not_as_markup(index: Path) -> None:
    result = runner.invoke(app, ["docs", "show", "[/x]"])
    assert result.exit_code == 2 and "[/x]" in result.output
    huge = runner.invoke(app, ["search", "cats", "--top-k", "99999999999999999999"])
    assert huge.exit_code == 2 and "--top-k" in huge.output
