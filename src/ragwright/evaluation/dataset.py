"""The dataset: a BEIR-layout folder read once, its judged queries and its corpus hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.evaluation.metrics import BeirDataset, Qrels, document_text, load_beir
from ragwright.models import Document


@dataclass(frozen=True)
class EvalDataset:
    """A BEIR dataset with the queries to evaluate: those of the split with a relevant
    judgement and a text, in ``queries.jsonl`` order."""

    path: Path
    split: str
    data: BeirDataset
    corpus_sha256: str
    query_ids: tuple[str, ...]
    #: Judged queries of the split missing from ``queries.jsonl`` (so not evaluated).
    judged_without_text: int = 0

    @property
    def queries(self) -> dict[str, str]:
        return {query_id: self.data.queries[query_id] for query_id in self.query_ids}

    @property
    def qrels(self) -> Qrels:
        return {query_id: self.data.qrels[query_id] for query_id in self.query_ids}


def load_dataset(path: str | Path, split: str = "test", limit: int | None = None) -> EvalDataset:
    """Read a BEIR-layout folder. ``limit`` keeps the first N evaluated queries."""
    root = Path(path)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be at least 1; got {limit}")
    _check_layout(root, split)
    try:
        data = load_beir(root, split)
    except (ValueError, KeyError, TypeError) as error:
        reason = f"{type(error).__name__}: {error}"
        raise ConfigError(f"{root} is not a readable BEIR dataset ({reason})") from None
    judged = {q for q, grades in data.qrels.items() if any(g > 0 for g in grades.values())}
    query_ids = [q for q in data.queries if q in judged]
    if limit is not None:
        query_ids = query_ids[:limit]
    if not query_ids:
        raise ConfigError(
            f"no query of split {split!r} has both a relevant judgement in "
            f"qrels/{split}.tsv and a text in queries.jsonl"
        )
    return EvalDataset(
        path=root,
        split=split,
        data=data,
        corpus_sha256=_file_sha256(root / "corpus.jsonl"),
        query_ids=tuple(query_ids),
        judged_without_text=sum(1 for q in judged if q not in data.queries),
    )


def _check_layout(root: Path, split: str) -> None:
    if not root.is_dir():
        raise ConfigError(f"dataset {root} is not a folder")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise ConfigError(f"dataset {root} has no {name} (expected the BEIR layout)")
    if not (root / "qrels" / f"{split}.tsv").is_file():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        found = f"available splits: {', '.join(splits)}" if splits else "it has no qrels"
        raise ConfigError(f"dataset {root} has no qrels/{split}.tsv; {found}")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def corpus_documents(data: BeirDataset) -> Iterator[Document]:
    """The corpus as documents: source = the BEIR id, content = title, blank line, text."""
    for doc_id, (title, text) in data.corpus.items():
        yield Document.from_text(doc_id, document_text(title, text), {"title": title})
