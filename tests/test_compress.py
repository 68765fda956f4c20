from __future__ import annotations

import pytest

from ragwright.errors import ConfigError
from ragwright.models import Arm, Document, Hit, Scale
from ragwright.processors import ContextCompressor, ResultChain, create_result_processor
from ragwright.processors.compress import COMPRESSED_FROM
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

TEXT = (
    "The museum opened in 1902. Its roof was rebuilt after a storm. "
    "The museum holds 40,000 paintings by Dutch masters. Tickets cost 12 EUR. "
    "Parking is free on Sundays."
)


def _hits() -> tuple[Document, list[Hit]]:
    document, chunks = make_document("museum.md", ["Intro words.", TEXT])
    hits = [Hit(c, 0.5, Scale.SIMILARITY, frozenset({Arm.VECTOR}), "museum.md") for c in chunks]
    return document, hits


def test_each_hit_is_trimmed_to_the_exact_span_of_its_relevant_sentences() -> None:
    document, hits = _hits()
    compressor = ContextCompressor(HashingEmbedder(), max_sentences=1)
    out = compressor.process("How many paintings does the museum hold?", hits)
    assert [h.chunk.text for h in out] == [
        "Intro words.",  # one sentence: nothing to trim
        "The museum holds 40,000 paintings by Dutch masters.",
    ]
    trimmed = out[1].chunk
    assert document.content[trimmed.char_start : trimmed.char_end] == trimmed.text
    assert trimmed.metadata[COMPRESSED_FROM] == hits[1].chunk.id
    assert trimmed.id != hits[1].chunk.id
    assert (out[1].score, out[1].scale, out[1].arms) == (
        hits[1].score,
        Scale.SIMILARITY,
        hits[1].arms,
    )


def test_the_span_runs_from_the_first_to_the_last_kept_sentence() -> None:
    document, hits = _hits()
    compressor = ContextCompressor(HashingEmbedder(), max_sentences=2, min_similarity=-1.0)
    out = compressor.process("When did the museum open and how many paintings does it hold?", hits)
    text = out[1].chunk.text
    assert text.startswith("The museum opened in 1902.")
    assert text.endswith("by Dutch masters.")  # the roof sentence between them stays in
    assert "Parking" not in text
    assert document.content[out[1].chunk.char_start : out[1].chunk.char_end] == text


def test_the_best_sentence_is_kept_even_below_the_threshold() -> None:
    _, hits = _hits()
    out = ContextCompressor(HashingEmbedder(), min_similarity=0.99).process("parking", hits)
    assert len(out) == 2 and out[1].chunk.text == "Parking is free on Sundays."


def test_it_is_built_by_name_and_checks_its_options() -> None:
    compressor = create_result_processor("compress", embedder=HashingEmbedder(), max_sentences=3)
    assert isinstance(compressor, ContextCompressor) and compressor.max_sentences == 3
    ResultChain([compressor])  # a processor the chain accepts
    with pytest.raises(ConfigError):
        ContextCompressor(HashingEmbedder(), max_sentences=0)
    with pytest.raises(ConfigError):
        create_result_processor("compress", embedder="minilm")
