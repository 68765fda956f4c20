from __future__ import annotations

from ragwright.models import Arm, Hit, Scale
from ragwright.pipeline.extractive import NOT_FOUND, ExtractiveAnswerer, ExtractiveOptions
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
