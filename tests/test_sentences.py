from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragwright.sentences import sentence_spans


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


def test_splits_on_terminal_punctuation_before_a_capital() -> None:
    text = "First one. Second one? Third! fourth stays."
    assert sentences(text) == ["First one.", "Second one?", "Third! fourth stays."]


def test_abbreviations_initials_and_decimals_do_not_split() -> None:
    text = "See e.g. Fig. 3 by Dr. Smith and J. Doe. Values rose 3.5 percent. Done."
    assert sentences(text) == [
        "See e.g. Fig. 3 by Dr. Smith and J. Doe.",
        "Values rose 3.5 percent.",
        "Done.",
    ]


def test_line_breaks_end_sentences_and_spans_shift_by_offset() -> None:
    text = "# Title\n\nBody text here.\n- item"
    spans = sentence_spans(text, offset=100)
    assert [text[s - 100 : e - 100] for s, e in spans] == ["# Title", "Body text here.", "- item"]


@given(st.text(alphabet=st.sampled_from(list("ab .?!\n\"')A1")), max_size=200))
def test_spans_are_trimmed_ordered_non_empty_slices(text: str) -> None:
    spans = sentence_spans(text)
    previous_end = 0
    for start, end in spans:
        piece = text[start:end]
        assert piece and piece == piece.strip()
        assert start >= previous_end
        previous_end = end
    covered = "".join(text[s:e] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())
