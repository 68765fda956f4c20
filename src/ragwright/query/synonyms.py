"""Synonym expansion from a user dictionary, for the keyword (BM25) arm.

The dictionary is directional: ``car: automobile`` expands "car" but not "automobile"; write
both entries for a symmetric pair. Keys match whole words (or whole phrases), ignoring case.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.query.model import ProcessedQuery, QueryKind


class Synonyms:
    """Appends the synonyms of every dictionary word found in the query to the BM25 text
    (`ProcessedQuery.expansions`); the vector arm still embeds the query alone.

    Terms already in the query or already added are not repeated. The note names each word
    that expanded and what it added. ``name`` tells two dictionaries apart in one chain.
    """

    kind: str = QueryKind.EXPAND

    def __init__(self, mapping: Mapping[str, Sequence[str]], *, name: str = "synonyms") -> None:
        self.name = name
        self.mapping: dict[str, tuple[str, ...]] = {}
        for word, synonyms in mapping.items():
            key = _term(word, "a dictionary word")
            if isinstance(synonyms, str) or not isinstance(synonyms, Sequence):
                raise ConfigError(
                    f"synonyms of {word!r} must be a list of strings; got {synonyms!r}"
                )
            terms = tuple(_term(s, f"a synonym of {word!r}") for s in synonyms)
            merged = dict.fromkeys((*self.mapping.get(key, ()), *terms))
            self.mapping[key] = tuple(merged)
        # Longest keys first, so "machine learning" wins over "machine".
        keys = sorted(self.mapping, key=lambda k: (-len(k), k))
        self._pattern = (
            re.compile("|".join(_whole(key) for key in keys), re.IGNORECASE) if keys else None
        )

    @classmethod
    def from_file(cls, path: str | Path, *, name: str = "synonyms") -> Synonyms:
        """Load a dictionary: ``.toml`` files hold ``word = ["syn1", "syn2"]`` pairs (at the
        top level or under ``[synonyms]``); any other file holds ``word: syn1, syn2`` lines,
        with ``#`` comments and blank lines ignored."""
        path = Path(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read the synonym dictionary {path}: {error}") from None
        if path.suffix.lower() == ".toml":
            return cls(_from_toml(path, raw), name=name)
        return cls(_from_lines(path, raw), name=name)

    def process(self, query: ProcessedQuery) -> ProcessedQuery:
        if self._pattern is None:
            return query.noted(self.name, False, "the dictionary is empty")
        present = {term.casefold() for term in query.expansions}
        added: list[str] = []
        expanded: list[str] = []
        for match in self._pattern.finditer(query.query):
            word = match.group(0).casefold()
            if word in present:
                continue
            present.add(word)
            new = [
                term
                for term in self.mapping.get(word, ())
                if term.casefold() not in present and not _contains(query.query, term)
            ]
            present.update(term.casefold() for term in new)
            if new:
                added.extend(new)
                expanded.append(f"{word} → {', '.join(new)}")
        if not added:
            reason = "no dictionary word in the query"
            if self._pattern.search(query.query):
                reason = "every synonym is already in the query"
            return query.noted(self.name, False, reason)
        expanded_query = replace(query, expansions=(*query.expansions, *added))
        return expanded_query.noted(self.name, True, "expanded " + "; ".join(expanded))

    def __repr__(self) -> str:
        return f"Synonyms({len(self.mapping)} words, name={self.name!r})"


def _whole(term: str) -> str:
    return rf"(?<!\w){re.escape(term)}(?!\w)"


def _contains(text: str, term: str) -> bool:
    return re.search(_whole(term), text, re.IGNORECASE) is not None


def _term(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty string; got {value!r}")
    return " ".join(value.split()).casefold()


def _from_toml(path: Path, raw: str) -> dict[str, list[str]]:
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    table = data.get("synonyms", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [synonyms] must be a table of word = [synonyms]")
    return table


def _from_lines(path: Path, raw: str) -> dict[str, list[str]]:
    mapping: dict[str, list[str]] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, colon, rest = line.partition(":")
        synonyms = [s.strip() for s in rest.split(",") if s.strip()]
        if not colon or not word.strip() or not synonyms:
            raise ConfigError(f"{path}:{number}: expected 'word: synonym, synonym'; got {line!r}")
        mapping.setdefault(word.strip(), []).extend(synonyms)
    return mapping
