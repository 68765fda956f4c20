"""Community reports, offline: what a community is about, told by its own most central text.

An `ExtractiveReporter` report has

- a **title**: the name of its most central entity (what the community is about), not a
  list of names;
- a **summary**: 3 to ``max_points`` whole sentences of its member chunks (also its
  **points**, each an exact span: ``chunk.text[start:end] == point.text``, at most
  ``per_chunk`` from one chunk), chosen greedily for coverage and centrality: each next
  sentence is the one naming the most central members no chosen sentence named yet. Only
  prose is a candidate (`readable`): no code, table row, heading or fragment (an unpaired
  quotation mark too: the splitter cut inside a quotation), no sentence that leans on the one
  before it ("It was…", "Without it, …"), and none that says again what a chosen one said
  (`_repeats`: half its word pairs, four or more, in a chosen sentence); the summary reads
  the chosen sentences chunk by chunk, each chunk's in their order there. A community whose
  members no readable sentence names (names met only in lists, tables or code) has an empty
  summary: other sentences of its chunks would tell of something else under its title, and
  global search would quote them as a theme;
- **key terms**: the words its chosen sentences use most (its members' names aside);
- **facts**: at most `MAX_FACTS` key typed facts (subject, predicate, object) between its
  members, one per pair: the best supported (the pair's edge weight, i.e. its evidence)
  first, then those between the most central members. A predicate that is not a few plain
  words (`plain_predicate`: "in in", "reads text see [") is never a key fact, nor a bare
  copula between two names ("LangChain is LlamaIndex": a parse of "LangChain and
  LlamaIndex retrievers are…", an identity nobody states), nor one that does not read in the
  report's sentences as written (`ragwright.graph.fact_reading`: a predicate stitched from two
  clauses, a modifier taken for an argument).

Centrality is an entity's weighted degree inside its community (the capped edge weights to
other members), plus its mentions as a tie-break; a chunk scores the centrality of the
members it mentions.

The input hash covers what the report is made from: the reporter's version and settings, the
members, and the (content-addressed) ids of the chunks that mention them. Equal inputs give
equal hashes, so an unchanged community's report is kept, never made again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ragwright.errors import ConfigError
from ragwright.graph.extractors.predicate_quality import plain_predicate
from ragwright.graph.fact_reading import reads_in, words
from ragwright.models import Chunk
from ragwright.models.communities import Community, CommunityReport, ReportPoint
from ragwright.models.graph import GraphSnapshot, TypedFact
from ragwright.prose import prose_sentences

__all__ = ["CommunityInput", "ExtractiveReporter", "community_inputs", "recipe"]

#: Bumped when the reports an unchanged input gives change.
REPORTER_VERSION = "7"
#: Fewest sentences a summary has when its chunks hold that many readable ones.
MIN_SENTENCES = 3
#: Key facts a report lists at most.
MAX_FACTS = 3
#: A predicate that only links two names: no key fact.
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "being"})
#: A sentence a summary may quote: starts like one and ends like one.
_SENTENCE_SHAPE = re.compile(r"^[\"“'(]?[A-Z0-9][\s\S]*[.!?][\"”')]?$")
_CODE_MARKS = re.compile(r"```|^\s*(?:[|#>$]|[-*+] |\d+\. )|\|\s*-{3}", re.MULTILINE)
_COMMANDS = re.compile(r"^(?:ragwright|pip|python|\.venv|nice|cd|export|curl|sqlite3)\b")
#: A sentence opening on a pronoun, or a preposition and a pronoun, whose referent is in the
#: sentence before: quoted alone, nobody can tell what "it" is.
_ANAPHOR = re.compile(
    r"^[\"“'(]?(?:(?:without|with|unlike|like|in|on|for|from|by|after|before|of)\s+)?"
    r"(?:it|its|this|that|these|those|they|their|them|he|she|his|her|him)\b",
    re.IGNORECASE,
)

#: A sentence sharing this share of its word pairs with a chosen one, and at least
#: `_REPEATED_MIN` of them, says it again (two short sentences naming the same two people
#: share a pair or two and say different things).
_REPEATED_PAIRS = 0.5
_REPEATED_MIN = 4

_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]{2,}")
_STOP = frozenset(
    "about after also among and are been before being between both but can could did does "
    "during each from had has have having her here hers him his how into its itself more most "
    "not now off once only other our ours out over own same she should some such than that "
    "the their theirs them then there these they this those through too under until very was "
    "were what when where which while who whom why will with would you your yours".split()
)


@dataclass(frozen=True, slots=True)
class CommunityInput:
    """What a report of one community is made from: its members, most central first (with
    their display names and centralities), and its member chunks, most central first."""

    community: Community
    members: tuple[tuple[str, str, float], ...]
    chunk_ids: tuple[str, ...]
    chunk_scores: tuple[float, ...]
    #: The typed facts between its members with a plain predicate, best supported first.
    facts: tuple[TypedFact, ...] = ()
    #: Each fact's support: its pair's edge weight in the graph (the evidence for it).
    fact_support: tuple[float, ...] = ()

    def digest(self, kind: str, settings: Mapping[str, object]) -> str:
        payload = [
            recipe(kind, settings),
            sorted(self.community.members),
            sorted(self.chunk_ids),
            sorted([f.source, f.predicate, f.target] for f in self.facts),
        ]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def recipe(kind: str, settings: Mapping[str, object]) -> str:
    """How a reporter of ``kind`` with ``settings`` makes reports, as a short hash (with
    `REPORTER_VERSION`): stored reports of another recipe are made again."""
    payload = [kind, REPORTER_VERSION, dict(sorted(settings.items()))]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def community_inputs(
    snapshot: GraphSnapshot, communities: Sequence[Community], facts: Sequence[TypedFact] = ()
) -> list[CommunityInput]:
    """Each community's ranked members and chunks, read from one snapshot, and the
    ``facts`` between its members whose predicate is plain, best supported first. A member
    no longer in the graph (its documents were deleted) is left out."""
    index = {key: i for i, key in enumerate(snapshot.entity_keys)}
    mentions = np.zeros(snapshot.entity_count, dtype=np.float64)
    np.add.at(mentions, snapshot.mention_entity, snapshot.mention_count)
    chunks_of: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for entity, chunk, count in zip(
        snapshot.mention_entity.tolist(),
        snapshot.mention_chunk.tolist(),
        snapshot.mention_count.tolist(),
        strict=True,
    ):
        chunks_of[entity].append((chunk, count))
    neighbours: dict[int, list[tuple[int, float]]] = defaultdict(list)
    keys = snapshot.entity_keys
    pair_weight: dict[frozenset[str], float] = defaultdict(float)  # a fact's support
    for source, target, weight in zip(
        snapshot.edge_source.tolist(),
        snapshot.edge_target.tolist(),
        snapshot.edge_weight.tolist(),
        strict=True,
    ):
        neighbours[source].append((target, weight))
        neighbours[target].append((source, weight))
        pair_weight[frozenset(keys[i] for i in (source, target))] += weight
    plain = [
        f
        for f in facts
        if f.source != f.target
        and plain_predicate(f.predicate)
        and f.predicate.casefold() not in _COPULAS
    ]
    made = []
    for community in communities:
        present = [index[key] for key in community.members if key in index]
        inside = set(present)
        centrality = {
            e: sum(w for other, w in neighbours[e] if other in inside) + 1e-3 * float(mentions[e])
            for e in present
        }
        ranked = sorted(present, key=lambda e: (-centrality[e], snapshot.entity_keys[e]))
        chunk_score: dict[int, float] = defaultdict(float)
        for entity in present:
            for chunk, count in chunks_of[entity]:
                chunk_score[chunk] += centrality[entity] * count
        chunks = sorted(chunk_score, key=lambda c: (-chunk_score[c], snapshot.chunk_ids[c]))
        members = community.members
        inner = [f for f in plain if f.source in members and f.target in members]
        support = [pair_weight.get(frozenset((f.source, f.target)), 0.0) for f in inner]
        order = sorted(range(len(inner)), key=lambda i: -support[i])  # stable: input order
        made.append(
            CommunityInput(
                community=community,
                members=tuple(
                    (snapshot.entity_keys[e], snapshot.entity_names[e], centrality[e])
                    for e in ranked
                ),
                chunk_ids=tuple(snapshot.chunk_ids[c] for c in chunks),
                chunk_scores=tuple(chunk_score[c] for c in chunks),
                facts=tuple(inner[i] for i in order),
                fact_support=tuple(support[i] for i in order),
            )
        )
    return made


@dataclass(frozen=True, slots=True)
class ExtractiveReporter:
    """Reports from a community's own sentences (no model, deterministic)."""

    max_chunks: int = 8
    max_points: int = 6
    per_chunk: int = 2
    max_terms: int = 8
    #: Chunks read back for key facts (the most central; the summary quotes the first
    #: ``max_chunks``): a fact stated outside the summary's chunks is still checked.
    fact_chunks: int = 32

    kind = "extractive"

    def __post_init__(self) -> None:
        for name in ("max_chunks", "max_points", "per_chunk", "max_terms", "fact_chunks"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"report {name} must be a positive integer, got {value!r}")

    @property
    def settings(self) -> dict[str, object]:
        return {
            "max_chunks": self.max_chunks,
            "max_points": self.max_points,
            "per_chunk": self.per_chunk,
            "max_terms": self.max_terms,
            "fact_chunks": self.fact_chunks,
        }

    def digest(self, item: CommunityInput) -> str:
        return item.digest(self.kind, self.settings)

    @property
    def recipe(self) -> str:
        return recipe(self.kind, self.settings)

    def wanted_chunks(self, item: CommunityInput) -> tuple[str, ...]:
        """The chunks `report` reads: the most central ones."""
        return item.chunk_ids[: max(self.max_chunks, self.fact_chunks)]

    def report(self, item: CommunityInput, chunks: Mapping[str, Chunk]) -> CommunityReport:
        """The report of ``item`` from its chunks' stored text (``chunks`` by id; a chunk
        missing from it, deleted meanwhile, is skipped)."""
        weight = {key: w for key, _, w in item.members}
        names = [(name.casefold(), key) for key, name, _ in item.members]
        candidates: list[tuple[ReportPoint, frozenset[str], int]] = []
        sentences: list[tuple[str, ...]] = []  # every sentence read, for the key facts
        for rank, chunk_id in enumerate(self.wanted_chunks(item)):
            chunk = chunks.get(chunk_id)
            if chunk is None:
                continue
            # Whole prose sentences (a hard-wrapped one found whole, no code, heading or
            # table line); a later chunk's first words may end a sentence it does not hold.
            for start, end in prose_sentences(
                chunk.text, cut=chunk.char_start > 0, max_list_chars=0
            ):
                text = chunk.text[start:end]
                sentences.append(words(text))
                if rank >= self.max_chunks or not readable(text):
                    continue
                folded = text.casefold()
                named = frozenset(key for name, key in names if name in folded or key in folded)
                if named:
                    score = sum(weight[key] for key in named)
                    candidates.append((ReportPoint(text, chunk_id, start, end, score), named, rank))
        points = _reading_order(self._chosen(candidates, weight))
        title = item.members[0][1] if item.members else f"community {item.community.id}"
        return CommunityReport(
            community=item.community.id,
            kind=self.kind,
            title=title,
            terms=_terms(points, [name for _, name, _ in item.members], self.max_terms),
            points=points,
            input_hash=self.digest(item),
            summary=" ".join(" ".join(point.text.split()) for point in points),
            chunk_ids=tuple(dict.fromkeys(p.chunk_id for p in points)),
            facts=_key_facts(item, weight, sentences),
            recipe=self.recipe,
        )

    def _chosen(
        self,
        candidates: Sequence[tuple[ReportPoint, frozenset[str], int]],
        weight: Mapping[str, float],
    ) -> tuple[ReportPoint, ...]:
        """Greedy coverage: the sentence naming the most central members not named yet
        (ties: the more central, then the earlier chunk); after every member is named, the
        most central ones up to `MIN_SENTENCES`. Returned in the order chosen."""
        chosen: list[tuple[ReportPoint, frozenset[str], int]] = []
        covered: set[str] = set()
        per_chunk: Counter[str] = Counter()
        said: list[frozenset[tuple[str, str]]] = []  # the chosen sentences' word pairs
        while len(chosen) < self.max_points:
            best, best_key = None, None
            for candidate in candidates:
                point, named, rank = candidate
                if per_chunk[point.chunk_id] >= self.per_chunk or _repeats(point.text, said):
                    continue
                gain = sum(weight[k] for k in named - covered)
                key = (gain, point.score, -rank, -point.start)
                if best_key is None or key > best_key:
                    best, best_key = candidate, key
            if (
                best is None
                or best_key is None
                or (best_key[0] <= 0 and len(chosen) >= MIN_SENTENCES)
            ):
                break
            chosen.append(best)
            covered |= best[1]
            per_chunk[best[0].chunk_id] += 1
            said.append(_word_pairs(best[0].text))
        return tuple(point for point, _, _ in chosen)


def readable(sentence: str) -> bool:
    """Whether a summary may quote ``sentence``: a whole prose sentence (a capital first,
    end punctuation last, 4 to 80 words), not code, a shell command, a table row, a heading
    or a list item, and mostly outside inline code."""
    text = sentence.strip()
    words = text.split()
    if not 4 <= len(words) <= 80 or not _SENTENCE_SHAPE.match(text):
        return False
    if _CODE_MARKS.search(text) or _COMMANDS.match(text) or _ANAPHOR.match(text):
        return False
    if text.count('"') % 2 or text.count("“") != text.count("”"):
        return False  # a quotation cut in two by the sentence splitter
    in_code = sum(len(part) for part in text.split("`")[1::2])
    return in_code * 3 < len(text)


def _word_pairs(text: str) -> frozenset[tuple[str, str]]:
    folded = [word.casefold() for word in _WORD.findall(text)]
    return frozenset(pairwise(folded))


def _repeats(text: str, said: Sequence[frozenset[tuple[str, str]]]) -> bool:
    """Whether ``text`` says again what one of the ``said`` sentences (their word pairs) said:
    half its word pairs are in one ("The drawing is the page's own SVG and script" after "The
    drawing is the page's own SVG and JavaScript (…)"); a sentence that only names the same
    members shares a pair or two."""
    pairs = _word_pairs(text)
    least = max(_REPEATED_MIN, _REPEATED_PAIRS * len(pairs))
    return any(len(pairs & other) >= least for other in said)


def _reading_order(points: Sequence[ReportPoint]) -> tuple[ReportPoint, ...]:
    """``points`` chunk by chunk (in the order each chunk was first chosen), each chunk's in
    their order in it: two sentences of one passage read as they were written."""
    first: dict[str, int] = {}
    for position, point in enumerate(points):
        first.setdefault(point.chunk_id, position)
    return tuple(sorted(points, key=lambda point: (first[point.chunk_id], point.start)))


def _key_facts(
    item: CommunityInput, weight: Mapping[str, float], sentences: Sequence[tuple[str, ...]]
) -> tuple[tuple[str, str, str], ...]:
    """One fact per pair, the best supported first (ties: the most central members), by
    display name; only a fact that reads in one of the report's ``sentences`` as written."""
    names = {key: name for key, name, _ in item.members}
    support = item.fact_support or (0.0,) * len(item.facts)
    ranked = sorted(
        zip(item.facts, support, strict=True),
        key=lambda pair: (-pair[1],
                          -(weight.get(pair[0].source, 0.0) + weight.get(pair[0].target, 0.0)),
                          pair[0].source, pair[0].predicate, pair[0].target),
    )  # fmt: skip
    chosen: list[tuple[str, str, str]] = []
    pairs: set[frozenset[str]] = set()
    for fact, _ in ranked:
        pair = frozenset((fact.source, fact.target))
        if pair in pairs or fact.source not in names or fact.target not in names:
            continue
        named = (names[fact.source], fact.predicate, names[fact.target])
        if reads_in(*named, sentences):
            pairs.add(pair)
            chosen.append(named)
    return tuple(chosen[:MAX_FACTS])


def _terms(points: Sequence[ReportPoint], title: Sequence[str], limit: int) -> tuple[str, ...]:
    """The words the points use most (ties: the first used), title words and stop words
    aside."""
    skip = {word.casefold() for name in title for word in _WORD.findall(name)}
    counts: Counter[str] = Counter()
    for point in points:
        for word in _WORD.findall(point.text):
            folded = word.casefold()
            if len(folded) > 3 and folded not in _STOP and folded not in skip:
                counts[folded] += 1
    return tuple(word for word, _ in counts.most_common(limit))
