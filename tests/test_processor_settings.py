"""Result processors as configuration: named in ragwright.toml's [search] table, an eval
configuration or ``--processor`` on search, ask and eval, built with the index's own parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import app, ingest_sample_docs, runner
from ragwright import Index
from ragwright.errors import ConfigError, RegistryError
from ragwright.evaluation.config import EvalConfig
from ragwright.models import Document
from ragwright.pipeline.search.request import SearchRequest
from ragwright.processors.specs import ProcessorSpec
from ragwright.testing import HashingEmbedder

LONG = (
    "Cats sleep for most of the day. The moon is far away. Dogs like long walks in the park. "
    "Taxes are due in April."
)


def test_specs_parse_from_the_command_line_and_toml() -> None:
    spec = ProcessorSpec.parse("compress:max_sentences=1, min_similarity=0.25")
    assert spec == ProcessorSpec("compress", {"max_sentences": 1, "min_similarity": 0.25})
    assert ProcessorSpec.parse("dedupe:key=source").options == {"key": "source"}
    request = SearchRequest.from_mapping(
        {"processors": ["dedupe", {"name": "top_n", "n": 2}, "parent_section:max_chars=900"]}
    )
    assert [s.name for s in request.processors] == ["dedupe", "top_n", "parent_section"]
    assert request.settings()["processors"] == [
        {"name": "dedupe"},
        {"name": "top_n", "n": 2},
        {"name": "parent_section", "max_chars": 900},
    ]


@pytest.mark.parametrize(
    ("raw", "error", "says"),
    [
        (["nope"], RegistryError, "unknown result processor 'nope'"),
        (["top_n:m=3"], ConfigError, "has no option 'm'"),
        (["compress:embedder=x"], ConfigError, "has no option 'embedder'"),  # the index's own
        (["top_n:3"], ConfigError, "must be KEY=VALUE"),
        ([7], ConfigError, "a result processor is a name"),
        ("top_n:n=0", ConfigError, "n"),  # checked when built: TopN(0)
    ],
)
def test_bad_processor_settings_are_typed_errors(
    tmp_path: Path, raw: object, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        request = SearchRequest(processors=raw)  # type: ignore[arg-type]
        with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
            kb.search("x", request)


def test_configured_processors_run_with_the_index_parts(tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest_documents([Document.from_text("a.txt", LONG)]).ok
        request = SearchRequest(processors=["compress:max_sentences=1,min_similarity=0"])
        (hit,) = kb.search("dogs walks park", request)
        assert hit.chunk.text == "Dogs like long walks in the park."
        document = kb.document("a.txt")
        assert document is not None
        assert document.content[hit.chunk.char_start : hit.chunk.char_end] == hit.chunk.text
        assert "compressed_from" in hit.chunk.metadata


def test_search_ask_and_the_config_file_take_processors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    flag = runner.invoke(app, ["search", "cats dogs", "--processor", "top_n:n=1", "--json"])
    assert flag.exit_code == 0, flag.output
    assert len(json.loads(flag.output)["hits"]) == 1
    (tmp_path / "ragwright.toml").write_text(
        '[search]\nprocessors = [{ name = "compress", max_sentences = 1, min_similarity = 0 }]\n'
    )
    configured = runner.invoke(app, ["search", "dogs walks", "--mode", "bm25", "--json"])
    assert configured.exit_code == 0, configured.output
    assert json.loads(configured.output)["hits"][0]["text"] == "Dogs like walks."
    asked = runner.invoke(app, ["ask", "Do dogs like walks?", "--mode", "bm25", "--json"])
    assert asked.exit_code == 0, asked.output
    assert {c["quote"] for c in json.loads(asked.output)["citations"]} == {"Dogs like walks."}
    bad = runner.invoke(app, ["ask", "dogs?", "--processor", "nope"])
    assert bad.exit_code != 0 and "unknown result processor 'nope'" in bad.output


def test_an_eval_configuration_takes_processors_and_a_sparse_encoder() -> None:
    config = EvalConfig.from_mapping(
        {"processors": ["dedupe"], "sparse": "splade:/models/x", "sparse_weight": 0.3}
    )
    assert [s.name for s in config.search.processors] == ["dedupe"]
    assert config.sparse == "splade:/models/x" and config.search.sparse_weight > 0
    with pytest.raises(ConfigError, match="sparse must be a spec"):
        EvalConfig.from_mapping({"sparse": ""})
