from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragwright.answers.extractive import NOT_FOUND, ExtractiveAnswerer, ExtractiveOptions
from ragwright.models import Arm, Document, Hit, Scale
from ragwright.terms import names
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document


def hits_for(*documents: tuple[str, list[str]]) -> list[Hit]:
    hits = []
    for source, texts in documents:
        _, chunks = make_document(source, texts)
        hits += [Hit(c, 1.0, Scale.RANK, frozenset({Arm.BM25}), source=source) for c in chunks]
    return hits


def test_quotes_best_sentences_with_numbered_exact_citations() -> None:
    hits = hits_for(
        ("a.md", ["Intro words here. The parrot eats seeds every morning. Unrelated tail."]),
        ("b.md", ["Parrots eat seeds and fruit in the wild."]),
    )
    options = ExtractiveOptions(min_similarity=0.1, max_gap=0.5, max_sentences=2)
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer("parrots eat seeds", hits)
    assert answer.found
    assert {c.source: c.quote for c in answer.citations} == {
        "a.md": "The parrot eats seeds every morning.",
        "b.md": "Parrots eat seeds and fruit in the wild.",
    }
    assert sorted(c.number for c in answer.citations) == [1, 2]
    for citation in answer.citations:
        chunk = next(h.chunk for h in hits if h.chunk.id == citation.chunk_id)
        offset = citation.char_start - chunk.char_start
        assert chunk.text[offset : offset + len(citation.quote)] == citation.quote
        assert f"{citation.quote} [{citation.number}]" in answer.text
    assert "Unrelated tail." not in answer.text


def test_a_sentence_repeated_in_two_sources_is_quoted_once() -> None:
    same = "The library stores vectors in SQLite."
    hits = hits_for(("a.md", [same]), ("b.md", [same]), ("c.md", ["Vectors live elsewhere."]))
    options = ExtractiveOptions(min_similarity=0.1, max_gap=1.0)
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer("where are vectors stored", hits)
    assert [c.quote for c in answer.citations].count(same) == 1


def test_says_not_found_below_the_threshold_or_without_hits() -> None:
    hits = hits_for(("a.md", ["Cats sleep all day long."]))
    answerer = ExtractiveAnswerer(HashingEmbedder())
    assert answerer.answer("quantum chromodynamics", hits).text == NOT_FOUND
    empty = answerer.answer("anything", [])
    assert not empty.found and empty.citations == ()


def test_ask_stream_yields_text_pieces_then_the_answer(tmp_path) -> None:
    from ragwright import Index
    from ragwright.models import Answer
    from ragwright.testing import HashingEmbedder

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Tea\n\nGreen tea is steamed to stop oxidation.\n")
    with Index(tmp_path / "idx", embedder=HashingEmbedder()) as kb:
        kb.ingest([tmp_path / "docs"])
        events = list(kb.ask_stream("How is green tea processed?"))
        expected = kb.ask("How is green tea processed?")
    *pieces, final = events
    assert isinstance(final, Answer)
    assert all(isinstance(piece, str) for piece in pieces)
    assert "".join(pieces) == final.text == expected.text
    assert final.citations == expected.citations


def test_a_table_row_is_quoted_with_its_column_names_and_cited_exactly(tmp_path) -> None:
    """A row deep in a CSV sits in a chunk that only carries its header (table_header): the
    answer reads it with the column names, the citation quotes the exact row, whole although
    a cell holds a full stop."""
    from ragwright import ChunkingConfig, Index
    from ragwright.models import TABLE_HEADER

    (tmp_path / "docs").mkdir()
    towns = "\n".join(f"Town{index},{1000 + index},{index % 7} harbours" for index in range(60))
    (tmp_path / "docs" / "towns.csv").write_text(
        f"City,Population,Ports\n{towns}\nHamlet,4711,Quiet. No ferry\n"
    )
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest([tmp_path / "docs"], chunking=ChunkingConfig("recursive", {"size": 200}))
        hits = index.search("Hamlet population", mode="bm25", top_k=3)
        document = index.documents.get(hits[0].source)
    assert document is not None and TABLE_HEADER in hits[0].chunk.metadata
    options = ExtractiveOptions(min_similarity=0.1, max_sentences=1)
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer("Hamlet population", hits)
    assert answer.text == "City: Hamlet; Population: 4711; Ports: Quiet. No ferry [1]"
    (citation,) = answer.citations
    assert citation.quote == "| Hamlet | 4711 | Quiet. No ferry |"
    assert document.content[citation.char_start : citation.char_end] == citation.quote


def test_rows_under_a_header_in_the_chunk_are_read_with_it_and_headers_never_quoted() -> None:
    text = (
        "Prices changed this spring.\n\n| Item | Price \\| EUR |\n| --- | --- |\n"
        "| Kettle | 30 |\n| Teapot | 45 |\n\nPrices include tax."
    )
    hits = hits_for(("prices.md", [text]))
    # Every sentence quotable (a price question would otherwise quote only those with a number).
    options = ExtractiveOptions(
        min_similarity=0.0, max_gap=2.0, max_sentences=10, require_quantity=False
    )
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer("teapot price", hits)
    shown = {citation.quote: citation for citation in answer.citations}
    assert set(shown) == {
        "Prices changed this spring.",
        "| Kettle | 30 |",
        "| Teapot | 45 |",
        "Prices include tax.",
    }
    assert f"Item: Teapot; Price | EUR: 45 [{shown['| Teapot | 45 |'].number}]" in answer.text


LOOSE = ExtractiveOptions(min_similarity=0.0, max_gap=2.0, max_sentences=10)


def quotes(question: str, *documents: tuple[str, list[str]]) -> list[str]:
    answer = ExtractiveAnswerer(HashingEmbedder(), LOOSE).answer(question, hits_for(*documents))
    return [citation.quote for citation in answer.citations]


def test_only_whole_prose_sentences_are_quoted_never_code_lists_or_headings() -> None:
    """Issue 18, item 2: a code block's shell line matches a question best, word for word; a
    sentence introducing a list ends in ':'; a question answers nothing; a line of a wrapped
    paragraph is no sentence."""
    text = (
        "## Chunk ids\n\n"
        "Examples:\n\n"
        '```bash\nragwright ask "How are chunk ids computed?"   # extractive\n```\n\n'
        "A chunk id is computed from the document id,\nits start offset and its text.\n\n"
        "How are chunk ids computed?\n\n"
        "The id is stable when:\n\n- the content is unchanged\n- the offset is the same"
    )
    quoted = quotes("How are chunk ids computed?", ("concepts.md", [text]))
    assert quoted == [
        "A chunk id is computed from the document id,\nits start offset and its text."
    ]


def test_a_sentence_cut_inside_inline_code_is_never_quoted() -> None:
    """Issue 32: "What does ragwright check do?" was answered with a fragment ending in a
    backtick: the splitter cut at a full stop inside a code span."""
    text = (
        "A damaged index is a clear error: `error: the index is damaged (REASON). Run "
        "ragwright check to see what.` Over HTTP it is a 503 with the same message.\n\n"
        "The `check` command of ragwright reports each damaged part of an index."
    )
    quoted = quotes("what does ragwright check do", ("cli.md", [text]))
    assert quoted == ["The `check` command of ragwright reports each damaged part of an index."]


def test_a_chunk_that_starts_inside_a_sentence_or_a_code_block_quotes_neither() -> None:
    first = "Ids are stable. The parser reads every file and"
    second = "then writes chunk ids to the index.\n```\n\nChunk ids never change for the same text."
    quoted = quotes("chunk ids", ("a.md", [first, second]))
    assert "then writes chunk ids to the index." not in quoted
    assert "Chunk ids never change for the same text." in quoted


def test_the_section_whose_heading_matches_the_question_is_preferred() -> None:
    from dataclasses import replace

    hits = hits_for(
        ("extras.md", ["Install the ragwright extra with pip."]),
        ("quickstart.md", ["Run make to install ragwright from a checkout."]),
    )
    headings = [["rag-connector interop"], ["Quick start", "Install"]]
    hits = [
        replace(hit, chunk=replace(hit.chunk, metadata={"heading_path": path}))
        for hit, path in zip(hits, headings, strict=True)
    ]
    options = ExtractiveOptions(min_similarity=0.0, max_sentences=1)
    plain = ExtractiveAnswerer(HashingEmbedder(), replace(options, heading_weight=0.0))
    assert plain.answer("How do I install ragwright?", hits).citations[0].source == "extras.md"
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer(
        "How do I install ragwright?", hits
    )
    assert answer.citations[0].source == "quickstart.md"


def test_a_list_introduction_is_quoted_with_its_whole_list_as_one_exact_span() -> None:
    intro = "Supported platforms are:\n\n- Debian 12 on x86-64\n- Ubuntu 24.04 on x86-64"
    text = f"## Platforms\n\n{intro}\n\nOlder releases get no fixes.\n\n```bash\nuname -a\n```"
    hits = hits_for(("support.md", [text]))
    answer = ExtractiveAnswerer(HashingEmbedder(), LOOSE).answer(
        "Which platforms are supported?", hits
    )
    quoted = [citation.quote for citation in answer.citations]
    assert intro in quoted
    assert "Supported platforms are:" not in quoted  # never the introduction alone
    assert not any("uname" in quote for quote in quoted)  # nor a line of code
    citation = next(c for c in answer.citations if c.quote == intro)
    assert text[citation.char_start : citation.char_end] == intro  # the chunk starts at 0
    assert "Debian 12 on x86-64 - Ubuntu 24.04 on x86-64" in answer.text  # read as one line


def test_a_list_that_may_go_on_in_the_next_chunk_is_not_quoted() -> None:
    """A list running to the end of the chunk may be cut off: its introduction would then
    quote part of what it lists."""
    quoted = quotes(
        "Which platforms are supported?",
        ("support.md", ["Supported platforms are:\n\n- Debian 12 on x86-64", "- Ubuntu 24.04"]),
    )
    assert not any(quote.startswith("Supported platforms") for quote in quoted)


def test_lists_are_never_quoted_whole_with_max_list_chars_zero() -> None:
    text = "Supported platforms are:\n\n- Debian 12\n- Ubuntu 24.04\n\nThat is all."
    options = ExtractiveOptions(min_similarity=0.0, max_gap=2.0, max_sentences=10, max_list_chars=0)
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer(
        "Which platforms are supported?", hits_for(("support.md", [text]))
    )
    assert [c.quote for c in answer.citations] == ["That is all."]


def test_a_list_at_the_end_of_a_chunk_is_quoted_when_its_document_shows_it_ends_there() -> None:
    from ragwright.testing.store_contract import make_document

    texts = [
        "Supported platforms are:\n\n- Debian 12 on x86-64\n- Ubuntu 24.04",
        "## Contact\n\nWrite.",
    ]
    document, chunks = make_document("support.md", texts)
    hits = [Hit(c, 1.0, Scale.RANK, frozenset({Arm.BM25}), source="support.md") for c in chunks]

    class Documents:
        def get_document(self, document_id: str) -> Document | None:
            return document if document_id == document.id else None

    answer = ExtractiveAnswerer(HashingEmbedder(), LOOSE, Documents()).answer(
        "Which platforms are supported?", hits[:1]
    )
    assert [c.quote for c in answer.citations] == [texts[0]]


def test_abstains_when_no_sentence_to_quote_mentions_the_questions_names() -> None:
    question = "How do I install ragwright as a Windows service?"
    elsewhere = hits_for(
        ("install.md", ["Install ragwright with pip as a service. Run it as a service."]),
        ("notes.md", ["On Windows."]),  # too short to quote: the name is retrieved, never quoted
    )
    anything = ExtractiveOptions(min_similarity=-1.0, max_gap=2.0)
    answer = ExtractiveAnswerer(HashingEmbedder(), anything).answer(question, elsewhere)
    assert answer.text == NOT_FOUND and not answer.found
    lenient = ExtractiveOptions(min_similarity=-1.0, max_gap=2.0, require_quoted_names=False)
    quoted = ExtractiveAnswerer(HashingEmbedder(), lenient).answer(question, elsewhere)
    assert quoted.found and "pip" in quoted.text

    named = hits_for(("windows.md", ["Install ragwright as a Windows service with nssm."]))
    answer = ExtractiveAnswerer(HashingEmbedder(), anything).answer(question, named)
    assert answer.found and "nssm" in answer.text
    # The quoted sentence's own passage naming Windows is enough.
    passage = hits_for(("windows.md", ["On Windows. Install ragwright with pip as a service."]))
    answer = ExtractiveAnswerer(HashingEmbedder(), anything).answer(question, passage)
    assert answer.found and answer.citations[0].quote.startswith("Install ragwright with pip")


class ScriptedScorer:
    """A `PassageScorer` fake: a logit for each sentence holding one of its keys (the first
    that matches), ``low`` for the rest; it records what it was asked to read."""

    def __init__(self, logits: dict[str, float], low: float = -10.0) -> None:
        self.logits, self.low = logits, low
        self.read: list[str] = []

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        self.read += passages
        found = [next((v for k, v in self.logits.items() if k in p), self.low) for p in passages]
        return np.array(found, np.float32)


def test_the_model_quotes_a_sentence_sharing_no_word_with_the_question() -> None:
    """Issue 32: "how long is a day at the colony" of "a 24-hour-40-minute sol" shares no
    word; the word-overlap rules refused it, the cross-encoder's score quotes it."""
    question = "How long is a day at the colony?"
    text = "The settlement runs on a 24-hour-40-minute sol. Supply ships land twice a year."
    (hit,) = hits_for(("mars.md", [text]))
    chunk = dataclasses.replace(hit.chunk, metadata={"heading_path": ["Settlement", "Time"]})
    hits = [dataclasses.replace(hit, chunk=chunk)]
    scorer = ScriptedScorer({"24-hour": 3.0, "Supply": -4.0})
    by_words = ExtractiveAnswerer(HashingEmbedder(), ExtractiveOptions(cross_encoder=False))
    assert not by_words.answer(question, hits).found
    answer = ExtractiveAnswerer(HashingEmbedder(), scorer=scorer).answer(question, hits)
    assert answer.found
    assert [c.quote for c in answer.citations] == [
        "The settlement runs on a 24-hour-40-minute sol."
    ]  # the other sentence is more than relevance_gap logits below
    assert "Settlement > Time: The settlement runs on a 24-hour-40-minute sol." in scorer.read


def test_with_the_model_a_name_no_passage_mentions_still_abstains() -> None:
    """The cross-encoder is sure of a sentence about another product ("Oracle" of a
    PostgreSQL page: logit 5.1 with the shipped model), so the name rule stays with it; "I'm"
    is no name, so a question saying it is answered."""
    sure = ScriptedScorer({"kept in": 5.0, "unwell": 1.0})
    postgres = hits_for(("db.md", ["The index can be kept in a PostgreSQL database."]))
    answerer = ExtractiveAnswerer(HashingEmbedder(), scorer=sure)
    assert not answerer.answer("Can the index be kept in an Oracle database?", postgres).found
    sick = hits_for(("leave.md", ["If you are unwell, tell your line manager before 10:00."]))
    answer = answerer.answer("By what time must I let my boss know I'm ill?", sick)
    assert answer.found and "10:00" in answer.text


def test_the_model_abstains_below_the_calibrated_threshold() -> None:
    question = "Which cloud regions host the production deployments?"
    hits = hits_for(("release.md", ["The production deployments are upgraded on a schedule."]))
    unsure = ScriptedScorer({"upgraded": -6.5})  # logistic(-6.5) = 0.0015 < 0.0025
    answer = ExtractiveAnswerer(HashingEmbedder(), scorer=unsure).answer(question, hits)
    assert answer.text == NOT_FOUND and not answer.found
    sure = ScriptedScorer({"upgraded": -5.0})  # 0.0067
    assert ExtractiveAnswerer(HashingEmbedder(), scorer=sure).answer(question, hits).found
    stricter = ExtractiveOptions(min_relevance=0.5)
    assert (
        not ExtractiveAnswerer(HashingEmbedder(), stricter, scorer=sure)
        .answer(question, hits)
        .found
    )


def test_the_model_quotes_the_sentences_near_the_best_one() -> None:
    hits = hits_for(("a.md", ["Alpha is first. Beta is second. Gamma is third."]))
    # Gamma stays under the second hop's probability (0.5: logit 0) whatever it reads.
    scorer = ScriptedScorer({"Alpha": 4.0, "Beta": 2.5, "Gamma": -1.0})
    answer = ExtractiveAnswerer(HashingEmbedder(), scorer=scorer).answer("which one?", hits)
    assert [c.quote for c in answer.citations] == ["Alpha is first.", "Beta is second."]
    off = ExtractiveOptions(cross_encoder=False, min_similarity=-1.0, max_gap=9.0)
    scorer.read.clear()
    assert ExtractiveAnswerer(HashingEmbedder(), off, scorer=scorer).answer("which?", hits).found
    assert scorer.read == []  # cross_encoder=false: by embedding, the scorer unused


class HopScorer:
    """A `PassageScorer` fake that reads the query too: ``logits`` maps (a text the query
    holds, a text the passage holds) to a logit; ``low`` for the rest."""

    def __init__(self, logits: dict[tuple[str, str], float], low: float = -10.0) -> None:
        self.logits, self.low = logits, low

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        found = [
            next((v for (q, k), v in self.logits.items() if q in query and k in p), self.low)
            for p in passages
        ]
        return np.array(found, np.float32)


def test_the_first_quote_leads_to_the_sentence_that_answers_a_two_hop_question() -> None:
    """HotpotQA's bridge questions: the county is named by one document, its seat by another,
    which the question alone does not make relevant."""
    question = "What is the county seat of the county where East Lempster is located?"
    hits = hits_for(
        ("lempster.md", ["East Lempster is a community in Sullivan County, New Hampshire."]),
        ("sullivan.md", ["Sullivan County lies in New Hampshire. Its county seat is Newport."]),
    )
    scorer = HopScorer(
        {
            ("East Lempster", "East Lempster is"): 6.0,
            ("East Lempster", "Sullivan County lies"): 1.0,
            ("Sullivan County, New", "Its county seat"): 3.0,  # after the first quote only
        }
    )
    answer = ExtractiveAnswerer(HashingEmbedder(), scorer=scorer).answer(question, hits)
    assert [c.quote for c in answer.citations] == [
        "East Lempster is a community in Sullivan County, New Hampshire.",
        "Its county seat is Newport.",
    ]
    for one_hop in (ExtractiveOptions(bridge_relevance=1.0), ExtractiveOptions(max_sentences=1)):
        answerer = ExtractiveAnswerer(HashingEmbedder(), one_hop, scorer=scorer)
        assert [c.quote for c in answerer.answer(question, hits).citations] == [
            "East Lempster is a community in Sullivan County, New Hampshire."
        ]
    # A sentence as relevant alone as after the first quote was not found through it.
    flat = HopScorer({("East Lempster", "East Lempster is"): 6.0, ("", "Its county"): 1.0})
    answer = ExtractiveAnswerer(HashingEmbedder(), scorer=flat).answer(question, hits)
    assert "Newport" not in answer.text


class SameMeaning:
    """Every text the same vector: only the bonuses tell sentences apart."""

    space = HashingEmbedder().space

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.full((len(texts), self.space.dimension), self.space.dimension**-0.5, np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def test_of_two_sentences_alike_in_meaning_the_one_holding_the_questions_words_is_quoted() -> None:
    hits = hits_for(
        ("watch.md", ["The watch command keeps folders current. Its default debounce is 500 ms."])
    )
    question = "What is the default debounce of watch?"  # 2 of its 3 words in the second
    plain = ExtractiveOptions(max_sentences=1, word_weight=0.0, heading_weight=0.0)
    first = ExtractiveAnswerer(SameMeaning(), plain).answer(question, hits)
    assert first.citations[0].quote == "The watch command keeps folders current."
    worded = dataclasses.replace(plain, word_weight=0.1)
    answer = ExtractiveAnswerer(SameMeaning(), worded).answer(question, hits)
    assert answer.citations[0].quote == "Its default debounce is 500 ms."


def test_a_sentence_stating_the_kind_of_answer_asked_ranks_above_one_about_the_subject() -> None:
    """Issue 32, HotpotQA: the model ranks the sentence *about* the question's subject first;
    a "who" question is answered by the one naming someone the question does not."""
    question = "Who portrayed Corliss Archer in the film Kiss and Tell?"
    hits = hits_for(
        ("kiss.md", ["Kiss and Tell is a comedy film about the teenager Corliss Archer."]),
        ("temple.md", ["As a teenager, Shirley Temple portrayed Corliss Archer in it."]),
    )
    scorer = ScriptedScorer({"Kiss and Tell is": 3.0, "As a teenager": 2.0})
    one = ExtractiveOptions(max_sentences=1)
    answer = ExtractiveAnswerer(HashingEmbedder(), one, scorer=scorer).answer(question, hits)
    assert "Shirley Temple" not in answer.text  # the model's order alone
    typed = dataclasses.replace(one, answer_type_weight=1.5)
    answer = ExtractiveAnswerer(HashingEmbedder(), typed, scorer=scorer).answer(question, hits)
    assert [c.quote for c in answer.citations] == [
        "As a teenager, Shirley Temple portrayed Corliss Archer in it."
    ]
    # The bonus orders; it does not pass a sentence the model finds irrelevant.
    unsure = ScriptedScorer({"Kiss and Tell is": 3.0, "As a teenager": -7.0})
    answer = ExtractiveAnswerer(HashingEmbedder(), typed, scorer=unsure).answer(question, hits)
    assert "Shirley Temple" not in answer.text


def test_a_sentence_outside_any_heading_is_read_after_its_passage_title() -> None:
    """A plain-text passage opening with its title: "It aired on ABC" is about the title's
    subject, which the sentence alone does not name."""
    hits = hits_for(("archer.txt", ["Meet Corliss Archer\n\nIt aired on ABC from 1952 to 1953."]))
    question = "Which network aired Meet Corliss Archer in 1952?"
    scorer = ScriptedScorer({"Meet Corliss Archer: It aired": 2.0}, low=-8.0)
    titled = ExtractiveOptions(title_context=True)
    answer = ExtractiveAnswerer(HashingEmbedder(), titled, scorer=scorer).answer(question, hits)
    assert [c.quote for c in answer.citations] == ["It aired on ABC from 1952 to 1953."]
    assert scorer.read == ["Meet Corliss Archer: It aired on ABC from 1952 to 1953."]
    scorer.read.clear()
    plain = ExtractiveOptions(title_context=False)
    answerer = ExtractiveAnswerer(HashingEmbedder(), plain, scorer=scorer)
    assert not answerer.answer(question, hits).found
    assert scorer.read == ["It aired on ABC from 1952 to 1953."]


def test_the_one_asking_is_no_name() -> None:
    """ "I'm", "I've", "I'd" begin with a capital but name nothing; a real name still does."""
    assert names("By what time must I let my boss know I'm ill?") == []
    assert names("If I've lost it, can Helena Visser help, or I'd ask Joost's team?") == [
        "Helena",
        "Visser",
        "Joost",
    ]
