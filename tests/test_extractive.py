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
        document = index.document(hits[0].source)
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
    options = ExtractiveOptions(min_similarity=0.0, max_gap=2.0, max_sentences=10)
    answer = ExtractiveAnswerer(HashingEmbedder(), options).answer("teapot price", hits)
    shown = {citation.quote: citation for citation in answer.citations}
    assert set(shown) == {
        "Prices changed this spring.",
        "| Kettle | 30 |",
        "| Teapot | 45 |",
        "Prices include tax.",
    }
    assert f"Item: Teapot; Price | EUR: 45 [{shown['| Teapot | 45 |'].number}]" in answer.text
