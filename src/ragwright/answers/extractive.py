"""The extractive answer engine: the offline default, no LLM needed.

It quotes the retrieved sentences that best answer the question and cites each one with
``[n]``: each quoted sentence has its own number, so every marker names exactly one span, and
every citation carries the exact character span of its sentence in the stored document.

Which sentences, and whether any: a cross-encoder (``scorer``, a `PassageScorer`; ``Index.ask``
gives it the shipped one) reads the question with each sentence in its section (see
`ragwright.answers.relevance`); the best ones within ``relevance_gap`` logits are quoted, and
when the best one's probability is under ``min_relevance`` the answer says the sources do not
answer instead of quoting something loosely related. A model, not word overlap: users ask in
their own words ("how long is a day at the colony" of "a 24-hour-40-minute sol"), and rules
asking for the question's words in the quote refused half of such questions (issue 32).
Without a scorer (or with ``cross_encoder`` false) it ranks by embedding similarity, heading
and word bonuses, and abstains when the retrieved chunks lack too many of the question's
content words (``min_coverage``).

Only whole prose sentences are quoted (see `ragwright.prose`): never a line of a code
block, a heading, a list introduction ending in ``:``, a question, a fragment of a wrapped
line or a sentence cut inside inline markup. It abstains, too, when the question names
something ("a Windows service") that no retrieved passage (``require_names``), or none of the
passages of the sentences it would quote (``require_quoted_names``), mentions, and when a
question asking for a number or a price finds no sentence stating one (``require_quantity``,
``require_money``).

When two quoted sentences from different documents say the same kind of thing and one document
supersedes the other (it says so by title, or its metadata date is later: see
`ragwright.answers.recency`), the newer one's sentence is quoted instead of the older's, and
the answer says which source it preferred and why.

A table row is quoted with its column names (``Region: East; Revenue: 87.75``), read from the
table's header in the chunk or the header the chunk carries (``table_header``), and is scored
that way too: a row alone says nothing, and a question names columns. Its citation still
quotes the exact row (``document.content[char_start:char_end] == quote``).

What an answer shows of a document is `neutralised`: a ``[1]`` of the document's is written
``(1)``, never read as the answer's own citation, and invisible characters (Unicode tag
characters among them) are dropped; the citations keep the exact text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.answers.answer_types import states_type, type_asked
from ragwright.answers.citations import neutralised
from ragwright.answers.quantities import asks_for_quantity, states_quantity
from ragwright.answers.recency import SourceFacts, Strength, overrides
from ragwright.answers.relevance import in_context, logit_of, logits
from ragwright.chunkers._tables import row_with_header, rows_with_headers
from ragwright.models import TABLE_HEADER, Answer, Chunk, Citation, Document, Hit
from ragwright.ports import DocumentLookup, Embedder, PassageScorer
from ragwright.prose import MAX_LIST_CHARS, prose_sentences
from ragwright.terms import content_words, dice, headings, held_by_each, names

NOT_FOUND = "Not found in the sources."
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class _Candidate:
    hit: Hit
    hit_rank: int
    start: int  # offset in the document
    end: int
    text: str  # the exact span
    shown: str  # what the answer says: the text, or a table row with its column names


@dataclass(frozen=True, slots=True)
class ExtractiveOptions:
    max_sentences: int = 3
    #: Cosine similarity a sentence needs to be quoted at all.
    min_similarity: float = 0.3
    #: Sentences this far below the best one are not quoted alongside it.
    max_gap: float = 0.15
    min_sentence_chars: int = 12
    #: A list introduction ("Supported platforms are:") is quoted with its list as one span
    #: when both together are at most this long (0: lists are never quoted whole).
    max_list_chars: int = MAX_LIST_CHARS
    #: A sentence this similar to one already quoted adds nothing and is left out.
    max_redundancy: float = 0.9
    #: Added to a sentence's score when its section heading has all the question's words
    #: (in proportion when it has some): the section a question names is the place to quote.
    heading_weight: float = 0.15
    #: Added to a sentence's score in proportion to the share of the question's content words
    #: it holds itself: of two sentences alike in meaning, the one saying what was asked
    #: ("the default debounce") wins over the page's introduction.
    word_weight: float = 0.1
    #: Share of the question's content words the retrieved chunks (with their headings) must
    #: hold, else the answer is "not found": they are about something else.
    min_coverage: float = 0.6
    #: Abstain, too, when the question names something (a capitalized word after its first:
    #: "Oracle", "Milvus") that none of the retrieved chunks mentions: they are about
    #: something else, however many of the other words they share. Kept with the
    #: cross-encoder: it is sure of a sentence about another product ("Oracle" of a PostgreSQL
    #: page scores as high as the right one).
    require_names: bool = True
    #: For a question that asks for a number ("how many", "cost", "phone number"; see
    #: `ragwright.answers.quantities`), quote only sentences stating one, and abstain when
    #: no retrieved sentence does.
    require_quantity: bool = True
    #: With ``require_quantity``, a question that asks for a price ("cost", "fee") needs a
    #: sum of money (a currency beside a number, or "free"), not any number.
    require_money: bool = True
    #: Abstain, too, when the question names something and none of the passages the chosen
    #: sentences come from (their chunks, with their headings) mentions any of its names:
    #: passages that mention it were retrieved, but what would be quoted is about another.
    require_quoted_names: bool = True
    #: Choose and refuse quotes with the shipped cross-encoder where the engine is given one
    #: (``Index.ask`` gives it); false: by embedding similarity and word overlap, as before.
    cross_encoder: bool = True
    #: With a cross-encoder (``scorer``): the probability (the logistic of its logit, see
    #: `ragwright.answers.relevance`) that a sentence answers, which the best one needs, else
    #: the answer is "not found". It replaces the word-overlap rules (``min_coverage``,
    #: ``min_similarity``, the heading and word bonuses), which only the embedder path uses.
    #: Low, because an ms-marco model is sure only of questions in the passage's own words;
    #: chosen on the paraphrased dev halves (see docs/ablation.md).
    min_relevance: float = 0.0025
    #: With a cross-encoder: sentences more than this many logits below the best one are not
    #: quoted alongside it.
    relevance_gap: float = 2.0
    #: With a cross-encoder: the second hop. The sentence that best answers the question read
    #: with the first quote after it ("the county seat of the county where East Lempster is"
    #: + "East Lempster is ... in Sullivan County" finds "Its county seat is Newport") is
    #: quoted too when its probability that way is at least this and higher than alone: the
    #: first quote is what made it relevant. It takes the last of ``max_sentences`` when all
    #: are taken (never the first: none with one sentence). 1: no second hop. HotpotQA
    #: dev500's non-yes/no questions 0-99 (dev) / 100-199 (held out): the answer holds the
    #: gold answer 0.36 -> 0.43 / 0.28 -> 0.40 (docs/ablation.md).
    bridge_relevance: float = 0.5
    #: With a cross-encoder, in ``ask``: the search's first this many hits are read by the
    #: cross-encoder, passage by passage, and the engine reads the best ``top_k`` of them in
    #: its order, not the search's (where the search request has no reranker of its own). 0:
    #: the search's first ``top_k``. Paraphrased dev halves: the passage that answers is
    #: first more often (docs/ablation.md, "What ask reads").
    rerank_depth: int = 20
    #: With a cross-encoder: logits added to the rank (not to the probability that must pass
    #: ``min_relevance``) of a sentence stating what kind of thing the question asks for that
    #: the question does not say: a date for "when", a name for "who" or "where" (see
    #: `ragwright.answers.answer_types`). 0: the model's order alone.
    answer_type_weight: float = 0.0
    #: With a cross-encoder: a sentence outside any heading is read after its passage's title
    #: line (a short first line standing alone, as a plain-text document's title), so "It
    #: aired on ABC" is read as about the title's subject. False: the sentence alone.
    title_context: bool = False
    #: Two sentences of different documents this similar say the same kind of thing; where
    #: one document says it supersedes the other (or the newer sentence says what changed),
    #: only the newer one's is quoted.
    conflict_similarity: float = 0.5
    #: As similar as this, a sentence of a document with a later date alone replaces the
    #: older's (a near paraphrase with other values: a revised copy).
    paraphrase_similarity: float = 0.8


class ExtractiveAnswerer:
    """``documents`` (optional) looks up the documents of the hits for their dates and what
    they say they supersede; without it, disagreeing sources are quoted side by side."""

    def __init__(
        self,
        embedder: Embedder,
        options: ExtractiveOptions | None = None,
        documents: DocumentLookup | None = None,
        scorer: PassageScorer | None = None,
    ) -> None:
        self.embedder = embedder
        self.options = options or ExtractiveOptions()
        self.documents = documents
        self.scorer = scorer if self.options.cross_encoder else None

    def answer(self, question: str, hits: list[Hit]) -> Answer:
        candidates = self._candidates(hits)
        if self.options.require_quantity and asks_for_quantity(question):
            money = self.options.require_money
            candidates = [c for c in candidates if states_quantity(c.shown, question, money=money)]
        if not candidates or (self.options.require_names and missing_names(question, hits)):
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        if self.scorer is None:
            words = content_words(question)
            if _coverage(words, hits) < self.options.min_coverage:
                return Answer(NOT_FOUND, (), tuple(hits), found=False)
            vectors, scores, ranking = self._by_embedding(question, words, candidates)
            floor, gap = self.options.min_similarity, self.options.max_gap
        else:
            scores = self._by_model(question, candidates)  # logits
            ranking = scores + self._type_bonus(question, candidates)
            floor, gap = logit_of(self.options.min_relevance), self.options.relevance_gap
            # Only sentences near the best may be quoted or replace a quote (within two gaps):
            # those alone are embedded, for the redundancy and newer-source checks.
            vectors = self._vectors(candidates, ranking >= float(ranking.max()) - 2 * gap)
        chosen = self._choose(candidates, scores, ranking, vectors, floor, gap)
        if not chosen or (
            self.options.require_quoted_names
            and not _names_said(names(question), _passages_text([candidates[i] for i in chosen]))
        ):
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        chosen, notes = self._prefer_newer(chosen, candidates, scores, ranking, vectors, gap)
        before_hop = self.options.max_sentences - 1
        if self.scorer is not None and self.options.bridge_relevance < 1 and before_hop > 0:
            hop = self._second_hop(question, candidates, chosen, scores)
            chosen = chosen[:before_hop] + hop if hop else chosen
        return _compose([candidates[i] for i in chosen], hits, notes)

    def _by_embedding(
        self, question: str, words: set[str], candidates: list[_Candidate]
    ) -> tuple[Floats, Floats, Floats]:
        """Without a cross-encoder: each sentence's cosine similarity to the question, and its
        ranking: the similarity plus the heading and word bonuses."""
        query = self.embedder.embed_query(question).reshape(-1)
        vectors = self.embedder.embed_documents([c.shown for c in candidates])
        scores = vectors @ query
        bonus = [self.options.heading_weight * _heading_match(words, c.hit) for c in candidates]
        if self.options.word_weight and words:
            held = held_by_each(words, [c.shown for c in candidates])
            weight = self.options.word_weight / len(words)
            bonus = [b + weight * len(h) for b, h in zip(bonus, held, strict=True)]
        return vectors, scores, scores + np.array(bonus, np.float32)

    def _by_model(self, question: str, candidates: list[_Candidate]) -> Floats:
        """Each sentence's relevance logit to the question, read in its section."""
        assert self.scorer is not None
        titled = self.options.title_context
        texts = [in_context(self._context(c.hit.chunk, titled), c.shown) for c in candidates]
        return logits(self.scorer, question, texts)

    @staticmethod
    def _context(chunk: Chunk, titled: bool) -> list[str]:
        """What a sentence of ``chunk`` is read after: its headings, else its title line."""
        return headings(chunk) or (_title_line(chunk) if titled else [])

    def _type_bonus(self, question: str, candidates: list[_Candidate]) -> Floats:
        """``answer_type_weight`` for each sentence stating the kind of answer asked, else 0."""
        weight, kind = self.options.answer_type_weight, type_asked(question)
        bonus = np.zeros(len(candidates), np.float32)
        if weight and kind is not None:
            bonus += [weight * states_type(c.shown, question, kind) for c in candidates]
        return bonus

    def _second_hop(
        self, question: str, candidates: list[_Candidate], chosen: list[int], alone: Floats
    ) -> list[int]:
        """The sentence the first quote makes answer the question (see ``bridge_relevance``),
        as a list of none or one index."""
        assert self.scorer is not None
        rest = [i for i in range(len(candidates)) if i not in chosen]
        if not rest:
            return []
        asked = f"{question} {candidates[chosen[0]].shown}"
        after = self._by_model(asked, [candidates[i] for i in rest])
        best = int((after + self._type_bonus(question, [candidates[i] for i in rest])).argmax())
        relevant = float(after[best]) >= logit_of(self.options.bridge_relevance)
        return [rest[best]] if relevant and after[best] > alone[rest[best]] else []

    def _vectors(self, candidates: list[_Candidate], wanted: npt.NDArray[np.bool_]) -> Floats:
        """The embeddings of the ``wanted`` candidates; zero rows (similar to nothing) for the
        rest."""
        rows = [i for i in range(len(candidates)) if wanted[i]]
        if not rows:
            return np.zeros((len(candidates), 1), np.float32)
        made = self.embedder.embed_documents([candidates[i].shown for i in rows])
        vectors = np.zeros((len(candidates), made.shape[1]), np.float32)
        vectors[rows] = made
        return vectors

    def _candidates(self, hits: list[Hit]) -> list[_Candidate]:
        candidates, seen = [], set()
        documents: dict[str, Document | None] = {}
        for rank, hit in enumerate(hits):
            chunk = hit.chunk
            header = chunk.metadata.get(TABLE_HEADER)
            carried = header if isinstance(header, str) else None
            headers, header_blocks = rows_with_headers(chunk.text, carried)
            cut = chunk.char_start > 0  # a later chunk may start inside a sentence
            lists = self.options.max_list_chars
            following = self._following(chunk, documents) if lists else None
            for start, end in _spans(chunk.text, headers, header_blocks, cut, lists, following):
                key = (chunk.document_id, chunk.char_start + start, chunk.char_start + end)
                text = chunk.text[start:end]
                if key in seen or len(text) < self.options.min_sentence_chars:
                    continue  # overlapping chunks repeat sentences; quote each once
                seen.add(key)
                row_header = headers.get((start, end))
                shown = row_with_header(text, row_header) if row_header else " ".join(text.split())
                # Scored as shown, too: hidden characters must not make a sentence relevant.
                shown = neutralised(shown).strip()
                if shown:
                    candidates.append(_Candidate(hit, rank, *key[1:], text, shown))
        return candidates

    def _following(self, chunk: Chunk, documents: dict[str, Document | None]) -> str | None:
        """The start of the document text after ``chunk`` (None without a document lookup):
        whether a list at the chunk's end goes on."""
        if self.documents is None:
            return None
        if chunk.document_id not in documents:
            documents[chunk.document_id] = self.documents.get_document(chunk.document_id)
        document = documents[chunk.document_id]
        return document.content[chunk.char_end : chunk.char_end + 200] if document else None

    def _choose(
        self,
        candidates: list[_Candidate],
        scores: Floats,
        ranking: Floats,
        vectors: Floats,
        threshold: float,
        gap: float,
    ) -> list[int]:
        """The best sentences by ``ranking`` within ``gap`` of the best, each scoring at least
        ``threshold`` itself, skipping near-repeats."""
        options = self.options
        order = sorted(range(len(candidates)), key=lambda i: (-float(ranking[i]), i))
        relevant = [i for i in order if scores[i] >= threshold]
        if not relevant:
            return []
        floor = float(ranking[relevant[0]]) - gap
        chosen: list[int] = []
        for i in relevant:
            if len(chosen) == options.max_sentences or ranking[i] < floor:
                break
            if all(float(vectors[i] @ vectors[j]) < options.max_redundancy for j in chosen):
                chosen.append(i)
        return chosen

    def _prefer_newer(
        self,
        chosen: list[int],
        candidates: list[_Candidate],
        scores: Floats,
        ranking: Floats,
        vectors: Floats,
        gap: float,
    ) -> tuple[list[int], list[str]]:
        """``chosen`` with each sentence that a superseding document contradicts replaced by
        that document's closest relevant sentence (dropped when that one is already quoted),
        and a note for each source preferred."""
        documents = {c.hit.chunk.document_id for c in candidates}
        if self.documents is None or len(documents) < 2:
            return chosen, []
        facts = self._facts(documents)
        result: list[int] = []
        notes: dict[tuple[str, str], str] = {}
        for i in chosen:
            for _ in range(len(documents)):  # newer, then newer still: each step a new source
                newer = self._newer_rival(i, candidates, ranking, vectors, facts, gap)
                if newer is None:
                    break
                j, why = newer
                pair = (candidates[j].hit.chunk.document_id, candidates[i].hit.chunk.document_id)
                notes.setdefault(pair, why)
                i = j
            if i not in result:
                result.append(i)
        return result, [f"The sources disagree; this quotes {why}." for why in notes.values()]

    def _newer_rival(
        self,
        i: int,
        candidates: list[_Candidate],
        ranking: Floats,
        vectors: Floats,
        facts: dict[str, SourceFacts],
        gap: float,
    ) -> tuple[int, str] | None:
        """The best-ranked sentence, about as relevant, of a document superseding candidate
        ``i``'s that says the same kind of thing, with the reason; None if there is none."""
        options, own = self.options, candidates[i].hit.chunk.document_id
        best: tuple[int, str] | None = None
        for j, rival in enumerate(candidates):
            other = rival.hit.chunk.document_id
            # The rival must answer the question about as well: within the gap of the quote.
            if other == own or ranking[j] < ranking[i] - gap:
                continue
            similarity = float(vectors[i] @ vectors[j])
            if similarity < options.conflict_similarity or other not in facts or own not in facts:
                continue
            precedence = overrides(facts[other], facts[own], rival.text)
            if precedence is None or (
                precedence.strength is Strength.DATED and similarity < options.paraphrase_similarity
            ):
                continue
            if best is None or ranking[j] > ranking[best[0]]:
                best = (j, precedence.reason)
        return best

    def _facts(self, document_ids: set[str]) -> dict[str, SourceFacts]:
        assert self.documents is not None
        found = {d: self.documents.get_document(d) for d in sorted(document_ids)}
        return {d: SourceFacts.of(document) for d, document in found.items() if document}


def _spans(
    text: str,
    rows: dict[tuple[int, int], str],
    header_blocks: list[tuple[int, int]],
    cut: bool,
    max_list_chars: int,
    following: str | None,
) -> list[tuple[int, int]]:
    """What may be quoted, in order: each table row whole (a cell's full stop does not split
    it), and the prose sentences outside the tables (a header alone answers nothing)."""
    tables = [*rows, *header_blocks]
    prose = [
        (start, end)
        for start, end in prose_sentences(
            text, cut=cut, max_list_chars=max_list_chars, following=following
        )
        if not any(start < table_end and table_start < end for table_start, table_end in tables)
    ]
    return sorted([*rows, *prose])


def _title_line(chunk: Chunk) -> list[str]:
    """The chunk's first line as a title: when it opens the document, stands alone above a
    blank line, is short and does not end a sentence; else none."""
    if chunk.char_start > 0:
        return []
    first, blank, _ = chunk.text.lstrip().partition("\n\n")
    title = first.strip()
    if not blank or "\n" in title or not 0 < len(title) <= 120 or title[-1] in ".!?:":
        return []
    return [title]


def _coverage(question: set[str], hits: list[Hit]) -> float:
    """The share of the question's content words found in the hits' text and headings."""
    if not question:
        return 1.0
    found: set[str] = set()
    for hit in hits:
        found |= content_words(" ".join([hit.chunk.indexed_text, *headings(hit.chunk)]))
    return len(question & found) / len(question)


def missing_names(question: str, hits: list[Hit]) -> list[str]:
    """The names of the question that no hit's text or headings mention (case-folded)."""
    said = " ".join(" ".join([h.chunk.indexed_text, *headings(h.chunk)]) for h in hits).lower()
    return [name for name in names(question) if name.lower() not in said]


def _passages_text(chosen: list[_Candidate]) -> str:
    """The chunks the chosen sentences come from, each once, with their headings, lowered."""
    chunks = {c.hit.chunk.id: c.hit.chunk for c in chosen}.values()
    return " ".join(" ".join([chunk.text, *headings(chunk)]) for chunk in chunks).lower()


def _names_said(asked: list[str], said: str) -> bool:
    """Whether ``said`` (lowered) mentions one of the names ``asked``, or nothing is asked."""
    return not asked or any(name.lower() in said for name in asked)


def _heading_match(question: set[str], hit: Hit) -> float:
    """How well the hit's own section heading matches the question's words (Dice, 0 to 1)."""
    path = headings(hit.chunk)
    return dice(question, content_words(path[-1])) if path else 0.0


def _compose(chosen: list[_Candidate], hits: list[Hit], notes: list[str]) -> Answer:
    parts, citations = [], []
    for number, candidate in enumerate(chosen, start=1):  # one number per quoted span
        chunk = candidate.hit.chunk
        parts.append(f"{candidate.shown} [{number}]")
        citations.append(
            Citation(
                number=number,
                chunk_id=chunk.id,
                document_id=chunk.document_id,
                source=candidate.hit.source,
                char_start=candidate.start,
                char_end=candidate.end,
                quote=candidate.text,
                index=candidate.hit.index,
            )
        )
    notes = [neutralised(note) for note in notes]  # they name documents by their titles
    return Answer(" ".join([*parts, *notes]), tuple(citations), tuple(hits), found=True)


class ExtractiveEngine:
    """`ExtractiveAnswerer` as an `AnswerEngine`: the answer arrives as one piece."""

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        options: ExtractiveOptions | None = None,
        documents: DocumentLookup | None = None,
        scorer: PassageScorer | None = None,
    ) -> None:
        self.answerer = ExtractiveAnswerer(embedder, options, documents, scorer)

    def stream(self, question: str, hits: Sequence[Hit]) -> Iterator[str | Answer]:
        answer = self.answerer.answer(question, list(hits))
        yield answer.text
        yield answer
