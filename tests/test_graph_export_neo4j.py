"""`ragwright graph export --format neo4j`: the CSVs read back with the csv module as
neo4j-admin reads them (typed headers, array fields split on the delimiter) and the Cypher
script parsed statement by statement give back every entity and edge of `graph.export()`,
hostile names included (quotes, backslashes, line breaks, the array delimiter, backticks)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import runner
from ragwright.cli import app
from ragwright.graph.export import ExportedEdge, ExportedEntity, GraphExport, graph_json
from ragwright.graph.neo4j_export import (
    CYPHER_FILE,
    NODES_FILE,
    RELATIONSHIPS_FILE,
    admin_command,
    array_delimiter,
    neo4j_files,
)

DOCS = {
    "summit.md": "Barack Obama met Angela Merkel in Berlin.\n\nObama flew home from Berlin.\n",
    "lab.md": "IBM opened a lab in Zurich. The I.B.M. team grew.\n",
}

# --- neo4j-admin's reading of the CSVs --------------------------------------------------------


def read_admin_csv(text: str, delimiter: str) -> list[dict[str, Any]]:
    """Rows as neo4j-admin types them: `name:int`, `name:double`, `name:T[]` (split on the
    array delimiter), `:ID`/`:START_ID`/… kept under their header; empty fields are absent."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    typed = []
    for row in body:
        assert len(row) == len(header)
        record: dict[str, Any] = {}
        for column, field in zip(header, row, strict=True):
            name, _, kind = column.partition(":")
            key = name or f":{kind}"
            if field == "":
                continue
            if kind.endswith("[]"):
                parts = field.split(delimiter)
                record[key] = [int(p) for p in parts] if kind == "int[]" else parts
            elif kind == "int":
                record[key] = int(field)
            elif kind == "double":
                record[key] = float(field)
            elif kind == "LABEL":
                record[key] = field.split(delimiter)
            else:
                record[key] = field
        typed.append(record)
    return typed


# --- a small Cypher reader: the statement forms the script uses, literals decoded -------------

TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*')|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"""
    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<quoted>`(?:[^`]|``)*`)"""
    r"""|(?P<punct>->|[-()\[\]{}:,.=;]))"""
)
ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def tokens(statement: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(statement):
        match = TOKEN.match(statement, at)
        assert match and match.end() > at, f"cannot read Cypher at {statement[at : at + 30]!r}"
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        at = match.end()
        while at < len(statement) and statement[at] == " ":
            at += 1
    return out


def unquote(text: str) -> str:
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
        elif body[i + 1] == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(ESCAPES[body[i + 1]])
            i += 2
    return "".join(out)


class Reader:
    def __init__(self, statement: str) -> None:
        self.items = tokens(statement)
        self.at = 0

    def take(self, expected: str | None = None) -> str:
        _kind, text = self.items[self.at]
        self.at += 1
        if expected is not None:
            assert text == expected, f"expected {expected!r}, got {text!r}"
        return text

    def peek(self) -> str:
        return self.items[self.at][1] if self.at < len(self.items) else ""

    def value(self) -> Any:
        kind, text = self.items[self.at]
        self.at += 1
        if kind == "str":
            return unquote(text)
        if kind == "num":
            return float(text) if any(c in text for c in ".eE") else int(text)
        assert text == "[", text
        items: list[Any] = []
        while self.peek() != "]":
            items.append(self.value())
            if self.peek() == ",":
                self.take(",")
        self.take("]")
        return items

    def node(self) -> tuple[str, str, Any]:
        self.take("(")
        variable = self.take()
        self.take(":")
        label = self.take()
        self.take("{")
        self.take("key")
        self.take(":")
        key = self.value()
        self.take("}")
        self.take(")")
        return variable, label, key

    def assignments(self, variable: str) -> tuple[dict[str, Any], list[str]]:
        properties: dict[str, Any] = {}
        labels: list[str] = []
        while self.peek() == "SET":
            self.take("SET")
            self.take(variable)
            if self.peek() == ":":
                self.take(":")
                labels.append(self.take()[1:-1].replace("``", "`"))
                continue
            while True:
                self.take(".")
                name = self.take()
                self.take("=")
                properties[name] = self.value()
                if self.peek() != ",":
                    break
                self.take(",")
                self.take(variable)
        self.take(";")
        return properties, labels


def read_cypher(script: str) -> tuple[dict[Any, dict[str, Any]], dict[tuple[Any, Any], Any]]:
    nodes: dict[Any, dict[str, Any]] = {}
    edges: dict[tuple[Any, Any], Any] = {}
    for line in script.splitlines():
        if line.startswith("//") or line.startswith("CREATE CONSTRAINT"):
            continue
        reader = Reader(line)
        first = reader.take()
        if first == "MERGE":
            _, label, key = reader.node()
            properties, labels = reader.assignments("e")
            nodes[key] = {**properties, "labels": [label, *labels]}
            continue
        assert first == "MATCH", line
        _, _, source = reader.node()
        reader.take(",")
        _, _, target = reader.node()
        for word in ("MERGE", "(", "a", ")", "-", "[", "r", ":"):
            reader.take(word)
        kind = reader.take()
        for word in ("]", "->", "(", "b", ")"):
            reader.take(word)
        properties, _ = reader.assignments("r")
        edges[source, target] = {**properties, "type": kind}
    return nodes, edges


# --- the tests ----------------------------------------------------------------------------


def check_files(files: dict[str, str], export: GraphExport) -> None:
    """Every entity and edge of ``export`` comes back from both CSVs and from the script."""
    expected = graph_json(export)
    delimiter = array_delimiter(export.entities)
    nodes = {row["key"]: row for row in read_admin_csv(files[NODES_FILE], delimiter)}
    assert set(nodes) == {e["key"] for e in expected["entities"]}
    script_nodes, script_edges = read_cypher(files[CYPHER_FILE])
    assert set(script_nodes) == set(nodes)
    for entity in expected["entities"]:
        row, merged = nodes[entity["key"]], script_nodes[entity["key"]]
        aliases = [a["text"] for a in entity["aliases"]]
        counts = [a["count"] for a in entity["aliases"]]
        assert row["name"] == merged["name"] == entity["name"]
        assert row.get("type", "") == merged["type"] == entity["label"]
        assert row["mentions"] == merged["mentions"] == entity["mentions"]
        assert row.get("aliases", []) == merged["aliases"] == aliases
        assert row.get("alias_counts", []) == merged["alias_counts"] == counts
        assert row.get("chunks", []) == merged["chunks"] == entity["chunks"]
        assert row["chunk_count"] == merged["chunk_count"] == len(entity["chunks"])
        assert row[":LABEL"] == merged["labels"] and row[":LABEL"][0] == "Entity"
    edges = read_admin_csv(files[RELATIONSHIPS_FILE], delimiter)
    assert len(edges) == len(script_edges) == len(expected["edges"])
    by_pair = {(e[":START_ID"], e[":END_ID"]): e for e in edges}
    for edge in expected["edges"]:
        pair = (edge["source"], edge["target"])
        row, merged = by_pair[pair], script_edges[pair]
        assert row[":TYPE"] == merged["type"] == "RELATED_TO"
        assert row["weight"] == merged["weight"] == pytest.approx(edge["weight"])
        assert row["synonym"] == merged["synonym"] == pytest.approx(edge["synonym"])
        assert row.get("chunks", []) == merged["chunks"] == edge["chunks"]
        assert {row[":START_ID"], row[":END_ID"]} <= set(nodes)


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


def test_cli_writes_csvs_and_a_script_that_read_back_as_the_graph(
    corpus: Path, tmp_path: Path
) -> None:
    ingested = runner.invoke(
        app, ["ingest", "docs", "--embedder", "hashing", "--graph", "--extractor", "capitalized"]
    )
    assert ingested.exit_code == 0, ingested.output
    written = runner.invoke(app, ["graph", "export", "--format", "neo4j", "-o", "neo4j"])
    assert written.exit_code == 0, written.output
    assert "neo4j-admin-import.sh" in written.output
    exported = runner.invoke(app, ["graph", "export", "--format", "json"])
    expected = json.loads(exported.stdout)
    folder = tmp_path / "neo4j"
    files = {path.name: path.read_text("utf-8") for path in folder.iterdir()}
    assert set(files) == {NODES_FILE, RELATIONSHIPS_FILE, CYPHER_FILE, "neo4j-admin-import.sh"}
    assert files[NODES_FILE].splitlines()[0] == (
        "key:ID,name,type,mentions:int,aliases:string[],alias_counts:int[],"
        "chunk_count:int,chunks:string[],:LABEL"
    )
    assert files[RELATIONSHIPS_FILE].splitlines()[0] == (
        ":START_ID,:END_ID,:TYPE,weight:double,synonym:double,chunks:string[]"
    )
    assert "--array-delimiter=\"$(printf ';')\"" in files["neo4j-admin-import.sh"]
    export = GraphExport(
        expected["version"],
        tuple(
            ExportedEntity(
                e["key"],
                e["name"],
                e["label"],
                e["mentions"],
                tuple((a["text"], a["count"]) for a in e["aliases"]),
                tuple(e["chunks"]),
            )
            for e in expected["entities"]
        ),
        tuple(
            ExportedEdge(e["source"], e["target"], e["weight"], e["synonym"], tuple(e["chunks"]))
            for e in expected["edges"]
        ),
    )
    assert len(export.entities) >= 5 and any(e.synonym > 0 for e in export.edges)
    check_files(files, export)


HOSTILE = GraphExport(
    "v7",
    (
        ExportedEntity(
            "o'brien\\x",
            'O\'Brien "Jr"\nline two\ttab',
            "PERSON",
            3,
            (("O'Brien; Jr", 2), ("Ob\\rien", 1)),
            ("c1", "c2"),
        ),
        ExportedEntity("weird`label", "back`tick", "WORK OF ART`", 1, (), ("c3",)),
        ExportedEntity("é\u2028x", "naïve, \u0007 bell", "", 1, (("naïve", 1),), ()),
    ),
    (
        ExportedEdge("o'brien\\x", "weird`label", 1.5, 0.0, ("c1",)),
        ExportedEdge("o'brien\\x", "é\u2028x", 0.0, 0.93, ()),
    ),
)


def test_hostile_names_round_trip_and_each_statement_is_one_line() -> None:
    files = neo4j_files(HOSTILE)
    assert array_delimiter(HOSTILE.entities) == "|"  # an alias holds ';'
    assert "--array-delimiter=\"$(printf '|')\"" in files["neo4j-admin-import.sh"]
    statements = files[CYPHER_FILE].splitlines()
    assert len(statements) == 2 + len(HOSTILE.entities) + len(HOSTILE.edges)
    assert all(s.endswith(";") for s in statements[1:])
    check_files(files, HOSTILE)
    nodes, _ = read_cypher(files[CYPHER_FILE])
    assert nodes["o'brien\\x"]["labels"] == ["Entity", "PERSON"]
    assert nodes["weird`label"]["labels"] == ["Entity"]  # not a plain identifier


def test_neo4j_needs_a_folder_and_an_unknown_format_lists_it(corpus: Path) -> None:
    runner.invoke(
        app, ["ingest", "docs", "--embedder", "hashing", "--graph", "--extractor", "capitalized"]
    )
    no_folder = runner.invoke(app, ["graph", "export", "--format", "neo4j"])
    assert no_folder.exit_code == 2 and "name a folder with --output" in no_folder.output
    bad = runner.invoke(app, ["graph", "export", "--format", "gexf"])
    assert bad.exit_code == 2 and "graphml, json, neo4j" in bad.output
    (corpus.parent / "taken").write_text("a file", "utf-8")
    blocked = runner.invoke(app, ["graph", "export", "--format", "neo4j", "-o", "taken"])
    assert blocked.exit_code == 2 and "cannot write" in blocked.output
    assert "Traceback" not in no_folder.output + bad.output + blocked.output


@pytest.mark.parametrize("delimiter", [";", "|", "\x1f"])
def test_the_import_command_passes_the_delimiter_through_sh(
    delimiter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command file run by ``sh`` with a stand-in ``neo4j-admin`` that prints its
    arguments, one per line (the real one is not installed here)."""
    fake = tmp_path / "neo4j-admin"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', "utf-8")
    fake.chmod(0o755)
    script = tmp_path / "import.sh"
    script.write_text(admin_command(delimiter), "utf-8")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    out = subprocess.run(["sh", str(script), "kb"], capture_output=True, text=True, check=True)
    arguments = out.stdout.split("\n")[:-1]
    assert arguments[:3] == ["database", "import", "full"]
    assert f"--array-delimiter={delimiter}" in arguments
    assert arguments[-1] == "kb"
