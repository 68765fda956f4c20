"""Fields a filter names that no chunk in the index has: most often a misspelling (``sorce``).

Such a filter is not an error (``draft != true`` rightly matches everything while no document
has ``draft`` yet), but when it matches nothing the user should hear why, with the fields the
index does have and the closest one."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Protocol

from ragwright.filters import DOCUMENT_FIELDS, And, Comparison, Exists, Filter, In, Not, Or
from ragwright.models import Chunk, DocumentInfo

#: Chunks read to list the fields an index has (the check of a named field is exact).
SAMPLE_CHUNKS = 500


class FieldLookup(Protocol):
    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]: ...

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]: ...


def fields_of(node: Filter) -> Iterator[str]:
    """Every field ``node`` tests."""
    match node:
        case Comparison(name, _, _) | In(name, _, _) | Exists(name):
            yield name
        case And(operands) | Or(operands):
            for operand in operands:
                yield from fields_of(operand)
        case Not(operand):
            yield from fields_of(operand)


def missing_fields_warning(store: FieldLookup, where: Filter) -> str | None:
    """A sentence naming the fields of ``where`` that no chunk has, or None when all exist."""
    missing = sorted(
        {name for name in fields_of(where) if name not in DOCUMENT_FIELDS}
        - {name for name in fields_of(where) if store.list_documents(Exists(name))}
    )
    if not missing:
        return None
    known = set(DOCUMENT_FIELDS)
    for chunk in store.chunk_page(None, SAMPLE_CHUNKS):
        known.update(chunk.metadata)
    parts = []
    for name in missing:
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (
        f"no chunk in the index has the field {', '.join(parts)}; "
        f"the fields it has: {', '.join(sorted(known))}"
    )
