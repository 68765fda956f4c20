"""`ragwright graph export`: GraphML that networkx reads back (as Gephi would) and JSON, with
every entity's aliases, mention count and chunk provenance, and edges with their weights; an
index with no graph is refused with the build hint, a bad format or path with a typed error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.testing import HashingEmbedder

DOCS = {
    "summit.md": "Barack Obama met Angela Merkel in Berlin.\n\nObama flew home from Berlin.\n",
    "lab.md": "IBM opened a lab in Zurich. The I.B.M. team grew.\n",
}


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    return docs


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def ingest(graph: bool = True) -> None:
    extra = ["--graph", "--extractor", "capitalized"] if graph else []
    result = cli("ingest", "docs", "--embedder", "hashing", *extra)
    assert result.exit_code == 0, result.output


def test_graphml_reads_back_in_networkx_with_aliases_weights_and_provenance(
    corpus: Path, tmp_path: Path
) -> None:
    ingest()
    written = cli("graph", "export", "--format", "graphml", "--output", "graph.graphml")
    assert written.exit_code == 0, written.output
    assert "entities and" in written.output
    graph = nx.read_graphml(tmp_path / "graph.graphml")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        obama = index.graph.entity("Barack Obama", max_sites=10)
        berlin = index.graph.entity("Berlin", max_sites=10)
        stats = index.graph.stats()
    assert obama is not None and berlin is not None
    assert graph.number_of_nodes() == stats.entities
    node = graph.nodes[berlin.key]
    assert node["label"] == "Berlin" and node["mentions"] == 2
    assert node["chunks"].split() == sorted({site.chunk_id for site in berlin.sites})
    assert node["aliases"] == "Berlin (2)"
    edge = graph.edges[obama.key, berlin.key]
    assert edge["weight"] == pytest.approx(
        next(link.weight for link in obama.neighbours if link.key == berlin.key)
    )
    assert edge["chunks"].split() == sorted(
        {s.chunk_id for s in obama.sites} & {s.chunk_id for s in berlin.sites}
    )
    ibm, dotted = "ibm", "i.b.m"
    assert graph.edges[ibm, dotted]["synonym"] == pytest.approx(1.0)  # the resolution link


def test_json_export_goes_to_stdout_with_the_same_graph(corpus: Path, tmp_path: Path) -> None:
    ingest()
    exported = json.loads(cli("graph", "export", "--format", "json").stdout)
    cli("graph", "export", "-o", "graph.graphml")
    graph = nx.read_graphml(tmp_path / "graph.graphml")
    assert {e["key"] for e in exported["entities"]} == set(graph.nodes)
    assert len(exported["edges"]) == graph.number_of_edges()
    berlin = next(e for e in exported["entities"] if e["key"] == "berlin")
    assert berlin["aliases"] == [{"text": "Berlin", "count": 2}] and berlin["mentions"] == 2
    assert all(edge["weight"] > 0 or edge["synonym"] > 0 for edge in exported["edges"])


def test_export_refuses_no_graph_a_bad_format_and_an_unwritable_path(corpus: Path) -> None:
    ingest(graph=False)
    refused = cli("graph", "export")
    assert refused.exit_code == 2 and "ragwright graph build" in refused.output
    bad = cli("graph", "export", "--format", "gexf")
    assert bad.exit_code == 2 and "choose one of graphml, json" in bad.output
    ingest()
    unwritable = cli("graph", "export", "-o", "missing/folder/graph.graphml")
    assert unwritable.exit_code == 2 and "cannot write" in unwritable.output
    assert "Traceback" not in refused.output + bad.output + unwritable.output
