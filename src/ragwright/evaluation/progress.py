"""Progress of an evaluation: documents indexed and queries run, reported to a callback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Stage(StrEnum):
    INDEX = "index"
    QUERY = "query"


@dataclass(frozen=True, slots=True)
class EvalProgress:
    """``done`` of ``total`` documents indexed or queries run; ``label`` names the index
    (chunking/embedder) or the configuration."""

    stage: Stage
    label: str
    done: int
    total: int


ProgressCallback = Callable[[EvalProgress], None]


def _report(progress: ProgressCallback | None, *args: Any) -> None:
    if progress is not None:
        progress(EvalProgress(*args))
