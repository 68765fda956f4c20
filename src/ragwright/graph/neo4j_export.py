"""The entity graph for Neo4j: CSV files for `neo4j-admin database import` and a Cypher script.

Both carry the same graph as the GraphML/JSON export (`graph.export`): one `:Entity` node per
entity (keyed by its entity key; its type also as a second label where that is a plain
identifier) and one `RELATED_TO` relationship per related or synonym-linked pair, pointing from
the smaller key to the larger (the graph is undirected; query it with `-[:RELATED_TO]-`).

The CSVs suit an empty database (bulk import); the Cypher script suits a running one: every
statement is a `MERGE`, so running it twice changes nothing. A statement is one line, since
every string literal escapes its line breaks.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence

from ragwright.errors import ConfigError
from ragwright.graph.export import ExportedEdge, ExportedEntity, GraphExport

NODES_FILE = "entities.csv"
RELATIONSHIPS_FILE = "relationships.csv"
CYPHER_FILE = "import.cypher"
COMMAND_FILE = "neo4j-admin-import.sh"
ENTITY_LABEL = "Entity"
RELATIONSHIP_TYPE = "RELATED_TO"
NODE_HEADER = (
    "key:ID",
    "name",
    "type",
    "mentions:int",
    "aliases:string[]",
    "alias_counts:int[]",
    "chunk_count:int",
    "chunks:string[]",
    ":LABEL",
)
RELATIONSHIP_HEADER = (
    ":START_ID",
    ":END_ID",
    ":TYPE",
    "weight:double",
    "synonym:double",
    "chunks:string[]",
)
# neo4j-admin has no escape inside an array field, so the delimiter must be a character no
# alias holds: ';' (its default) unless some alias has one.
_DELIMITERS = (";", "|", "\x1f")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CYPHER_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def neo4j_files(export: GraphExport) -> dict[str, str]:
    """File name -> text: the two CSVs, the Cypher script and the `neo4j-admin` command."""
    delimiter = array_delimiter(export.entities)
    return {
        NODES_FILE: _csv(NODE_HEADER, (_node_row(e, delimiter) for e in export.entities)),
        RELATIONSHIPS_FILE: _csv(
            RELATIONSHIP_HEADER, (_edge_row(e, delimiter) for e in export.edges)
        ),
        CYPHER_FILE: cypher_script(export),
        COMMAND_FILE: admin_command(delimiter),
    }


def array_delimiter(entities: Sequence[ExportedEntity]) -> str:
    """The first delimiter no alias, label or chunk id contains (chunk ids are hex)."""
    texts = [text for e in entities for text, _ in e.aliases] + [e.label for e in entities]
    for delimiter in _DELIMITERS:
        if not any(delimiter in text for text in texts):
            return delimiter
    raise ConfigError(
        "every array delimiter neo4j-admin could use appears in an alias; "
        "export --format json or graphml instead"
    )


def admin_command(delimiter: str) -> str:
    shown = "\\037" if delimiter == "\x1f" else delimiter  # octal: POSIX printf has no \\x
    return (
        "#!/bin/sh\n"
        "# Bulk import into an empty database (Neo4j 5; stop the database first).\n"
        "neo4j-admin database import full \\\n"
        f"  --nodes={NODES_FILE} --relationships={RELATIONSHIPS_FILE} \\\n"
        f"  --array-delimiter=\"$(printf '{shown}')\" --multiline-fields=true \\\n"
        '  "${1:-neo4j}"\n'
    )


def labels(entity: ExportedEntity) -> tuple[str, ...]:
    """`Entity`, then the entity's type where it is a plain identifier (PERSON, ORG…)."""
    if _IDENTIFIER.fullmatch(entity.label) and entity.label != ENTITY_LABEL:
        return (ENTITY_LABEL, entity.label)
    return (ENTITY_LABEL,)


def _csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    # neo4j-admin's quoting is RFC 4180's: quotes doubled, fields with line breaks quoted.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _node_row(entity: ExportedEntity, delimiter: str) -> tuple[object, ...]:
    return (
        entity.key,
        entity.name,
        entity.label,
        entity.mentions,
        delimiter.join(text for text, _ in entity.aliases),
        delimiter.join(str(count) for _, count in entity.aliases),
        len(entity.chunks),
        delimiter.join(entity.chunks),
        delimiter.join(labels(entity)),
    )


def _edge_row(edge: ExportedEdge, delimiter: str) -> tuple[object, ...]:
    return (
        edge.source,
        edge.target,
        RELATIONSHIP_TYPE,
        _number(edge.weight),
        _number(edge.synonym),
        delimiter.join(edge.chunks),
    )


def cypher_script(export: GraphExport) -> str:
    """Idempotent Cypher: a uniqueness constraint on the key, a MERGE per node and edge."""
    lines = [
        f"// ragwright entity graph, version {export.version}: "
        f"{len(export.entities)} entities, {len(export.edges)} relationships",
        f"CREATE CONSTRAINT ragwright_entity_key IF NOT EXISTS "
        f"FOR (e:{ENTITY_LABEL}) REQUIRE e.key IS UNIQUE;",
    ]
    lines.extend(_merge_node(entity) for entity in export.entities)
    lines.extend(_merge_edge(edge) for edge in export.edges)
    return "\n".join(lines) + "\n"


def _merge_node(entity: ExportedEntity) -> str:
    extra = "".join(f":{label_literal(label)}" for label in labels(entity)[1:])
    properties = {
        "name": entity.name,
        "type": entity.label,
        "mentions": entity.mentions,
        "aliases": [text for text, _ in entity.aliases],
        "alias_counts": [count for _, count in entity.aliases],
        "chunk_count": len(entity.chunks),
        "chunks": list(entity.chunks),
    }
    assignments = ", ".join(f"e.{name} = {literal(value)}" for name, value in properties.items())
    tail = f" SET e{extra}" if extra else ""
    return f"MERGE (e:{ENTITY_LABEL} {{key: {literal(entity.key)}}}) SET {assignments}{tail};"


def _merge_edge(edge: ExportedEdge) -> str:
    return (
        f"MATCH (a:{ENTITY_LABEL} {{key: {literal(edge.source)}}}), "
        f"(b:{ENTITY_LABEL} {{key: {literal(edge.target)}}}) "
        f"MERGE (a)-[r:{RELATIONSHIP_TYPE}]->(b) "
        f"SET r.weight = {literal(edge.weight)}, r.synonym = {literal(edge.synonym)}, "
        f"r.chunks = {literal(list(edge.chunks))};"
    )


def literal(value: object) -> str:
    """A Cypher literal: strings single-quoted with every quote, backslash and control
    character escaped (no raw line break, so a statement stays on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return "'" + "".join(_escape(char) for char in value) + "'"
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    raise TypeError(f"no Cypher literal for {type(value).__name__}")


def label_literal(label: str) -> str:
    return "`" + label.replace("`", "``") + "`"


def _escape(char: str) -> str:
    if char in _CYPHER_ESCAPES:
        return _CYPHER_ESCAPES[char]
    if ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029":
        return f"\\u{ord(char):04x}"
    return char


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise ConfigError(f"a graph weight is {value}, which Neo4j cannot store")
    return repr(float(value))
