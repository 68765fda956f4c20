"""Which of two disagreeing sources wins: the one that says it supersedes the other, else the
newer one.

A document supersedes another when one of its sentences says it supersedes or replaces it by
the other's title ("This policy supersedes the backup policy of February 2023."). Otherwise
the dates in the documents' metadata decide (``updated``, ``last_updated``, ``modified``,
``date``, ``published``, ``created``, first found; Markdown front matter and Office
properties fill them). A document with neither loses to nothing and wins over nothing: no
order is guessed.

How sure the precedence is matters to the caller (`Precedence`): a document that names the
one it supersedes, or a newer sentence that says what changed ("is now 5 GB, up from 2 GB",
"changed from 8080 to 8443"), overrides whatever of the older document says the same kind of
thing; a later date alone only overrides a near paraphrase, since two documents of different
dates mostly just speak of different things.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath

from ragwright.models import Document
from ragwright.sentences import sentence_spans

#: Metadata keys read for a document's date, the most specific first.
DATE_KEYS = ("updated", "last_updated", "modified", "date", "published", "created")
_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})")
_SUPERSEDES = re.compile(r"\b(?:supersed|replac)\w*", re.IGNORECASE)
#: A sentence that says something changed (a release note, a revised value).
_CHANGE = re.compile(
    r"\b(?:now|changed|no longer|instead of|(?:up|down) from|as of|starting with|replaced)\b",
    re.IGNORECASE,
)
#: How much of a document is read for sentences saying what it supersedes (it says so early).
_HEAD_CHARS = 4000


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """What decides a document's precedence: its name, title, date and the (case-folded)
    sentences in which it says it supersedes or replaces something."""

    source: str
    title: str
    date: dt.date | None
    supersedes: tuple[str, ...] = ()

    @classmethod
    def of(cls, document: Document) -> SourceFacts:
        title = document.metadata.get("title")
        head = document.content[:_HEAD_CHARS]
        claims = tuple(
            " ".join(head[start:end].lower().split())
            for start, end in sentence_spans(head)
            if _SUPERSEDES.search(head, start, end)
        )
        name = title.strip() if isinstance(title, str) and title.strip() else ""
        return cls(document.source, name or _stem(document.source), _date(document), claims)

    @property
    def name(self) -> str:
        """The file name of the source (a path's last part), as an answer mentions it."""
        return PurePosixPath(self.source.replace("\\", "/")).name or self.source

    @property
    def label(self) -> str:
        return f"{self.name} ({self.date.isoformat()})" if self.date else self.name


class Strength(Enum):
    """How a precedence was established, the surest first."""

    STATED = "stated"  # the newer document names the older, or its sentence says what changed
    DATED = "dated"  # only the metadata dates say which is newer


@dataclass(frozen=True, slots=True)
class Precedence:
    strength: Strength
    reason: str


def overrides(newer: SourceFacts, older: SourceFacts, sentence: str) -> Precedence | None:
    """Whether ``newer``'s ``sentence`` takes precedence over what ``older`` says, and why."""
    if _names(newer, older):
        return Precedence(Strength.STATED, f"{newer.name}, which says it supersedes {older.name}")
    if _names(older, newer) or newer.date is None or older.date is None:
        return None
    if newer.date <= older.date:
        return None
    strength = Strength.STATED if _CHANGE.search(sentence) else Strength.DATED
    return Precedence(strength, f"the newer {newer.label} over {older.label}")


def _names(document: SourceFacts, other: SourceFacts) -> bool:
    """Whether ``document`` says it supersedes ``other`` by its title."""
    title = " ".join(other.title.lower().split())
    return bool(title) and any(title in claim for claim in document.supersedes)


def _date(document: Document) -> dt.date | None:
    for key in DATE_KEYS:
        value = document.metadata.get(key)
        if isinstance(value, str) and (match := _ISO_DATE.match(value)):
            try:
                return dt.date(*(int(part) for part in match.groups()))
            except ValueError:
                continue  # 2024-13-45 is no date
    return None


def _stem(source: str) -> str:
    return PurePosixPath(source.replace("\\", "/")).stem.replace("-", " ").replace("_", " ")
