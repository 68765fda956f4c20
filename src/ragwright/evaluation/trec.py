"""TREC run files: ``qid Q0 docid rank score run_name``, one line per ranked document."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.evaluation.scoring import QueryRun


def trec_lines(runs: Iterable[QueryRun], run_name: str) -> Iterator[str]:
    """``qid Q0 docid rank score run_name`` lines, ranks from 1. Identifiers with
    whitespace cannot be written in this format and are refused."""
    for run in runs:
        for rank, document in enumerate(run.documents, start=1):
            for identifier in (run.query_id, document.document_id):
                if not identifier or any(c.isspace() for c in identifier):
                    raise ConfigError(
                        f"the id {identifier!r} is empty or contains whitespace; a TREC run "
                        "file cannot hold it"
                    )
            score = repr(float(document.score))
            yield f"{run.query_id} Q0 {document.document_id} {rank} {score} {run_name}"


def write_run_file(path: str | Path, runs: Iterable[QueryRun], run_name: str) -> Path:
    """Write a TREC run file; returns its path."""
    path = Path(path)
    text = "".join(line + "\n" for line in trec_lines(runs, run_name))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write the run file {path}: {error.strerror}") from None
    return path


def run_file_paths(path: str | Path, names: Sequence[str]) -> list[Path]:
    """Where each configuration's run file goes: ``path`` itself for one configuration,
    else ``STEM.NAME.SUFFIX`` beside it (``runs.trec`` → ``runs.bm25.trec``)."""
    path = Path(path)
    if len(names) == 1:
        return [path]
    return [path.with_name(f"{path.stem}.{name}{path.suffix}") for name in names]
