"""JSON and JSON Lines: records as text, with chosen fields as text and metadata.

A ``.jsonl``/``.ndjson`` file is one record per line; a ``.json`` file holding an array of
objects is one record per object, any other ``.json`` value one record. With several records,
each is a section headed ``Record N`` whose chunks carry ``record`` (N) and the record's
metadata fields. With `ParserOptions.text_fields`, a record's text is the values of those
fields; without, the record is written whole as readable ``path: value`` lines (nested objects
as dotted paths, list items as ``[i]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder
from ragwright.parsers._text import decode, iter_lines
from ragwright.parsers.options import ParserOptions

_MISSING = object()


class JsonParser:
    """Reads ``.json``, ``.jsonl`` and ``.ndjson`` files (see the module docs).

    Metadata: a single record's metadata fields go to the document; ``records`` counts them.
    """

    extensions: tuple[str, ...] = (".json", ".jsonl", ".ndjson")
    content_types: tuple[str, ...] = ("application/json", "application/x-ndjson")

    def __init__(self, options: ParserOptions | None = None) -> None:
        self.options = options or ParserOptions()

    @classmethod
    def from_options(cls, options: ParserOptions) -> JsonParser:
        return cls(options)

    @property
    def parse_settings(self) -> str:
        """The options, as text: part of each file's ingest fingerprint."""
        return self.options.spec

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        text, warnings = decode(data, source)
        builder = TextBuilder()
        if source.lower().endswith((".jsonl", ".ndjson")):
            count = self._write_records(builder, _lines(text, source))  # streamed, line by line
            return builder.build({"records": count}, self.content_types[1], warnings)
        records = _document(text, source)
        metadata: dict[str, Any] = {"records": len(records)}
        if len(records) == 1:
            metadata.update(self._metadata(records[0]))
            self._write(builder, records[0])
        else:
            self._write_records(builder, iter(records))
        return builder.build(metadata, self.content_types[0], warnings)

    def _write_records(self, builder: TextBuilder, records: Iterator[Any]) -> int:
        """Each record as a section headed ``Record N``; returns the count."""
        count = 0
        for count, record in enumerate(records, start=1):
            fields = {"record": count, **self._metadata(record)}
            builder.heading(f"Record {count}", level=1, metadata=fields)
            self._write(builder, record)
        return count

    def _write(self, builder: TextBuilder, record: Any) -> None:
        texts = [
            _as_text(value)
            for field in self.options.text_fields
            if (value := _at(record, field)) is not _MISSING
        ]
        if any(texts):
            for text in texts:
                builder.paragraph(text)
        else:  # no text field in this record: keep all of it, readable
            for path, value in _flatten(record, ""):
                builder.line(f"{path}: {value}" if path else value)
            builder.break_block()

    def _metadata(self, record: Any) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for field in self.options.meta_fields:
            value = _at(record, field)
            if value is _MISSING or value is None:
                continue
            scalar = isinstance(value, str | int | float | bool)
            found[field] = value if scalar else json.dumps(value, ensure_ascii=False)
        return found


def _document(text: str, source: str) -> list[Any]:
    """The records of a ``.json`` file: an array's objects, else the one value."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(source, f"invalid JSON at line {error.lineno}: {error.msg}") from error
    except RecursionError as error:
        raise ParseError(source, "JSON nested too deeply") from error
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return value
    return [value]


def _lines(text: str, source: str) -> Iterator[Any]:
    # Lines end at "\n" only: str.splitlines would also split at U+2028 and other separators
    # that a JSON string may hold as they are.
    for number, line in enumerate(iter_lines(text, universal=False), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as error:
            raise ParseError(source, f"invalid JSON on line {number}: {error.msg}") from error
        except RecursionError as error:
            raise ParseError(source, f"JSON nested too deeply on line {number}") from error


def _at(record: Any, path: str) -> Any:
    """The value at a dotted path (``post.text``); a key holding a dot is found whole first."""
    if isinstance(record, dict) and path in record:
        return record[path]
    value = record
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False)


def _flatten(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, text)`` for every scalar, depth first; nulls and empty containers left out."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:  # iterative: deeply nested values must not hit the recursion limit
        path, value = stack.pop()
        if isinstance(value, dict):
            items = [(f"{path}.{key}" if path else str(key), item) for key, item in value.items()]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value)]))
        elif value is not None:
            yield path, _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
