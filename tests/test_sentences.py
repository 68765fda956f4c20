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


def _sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


def test_chinese_and_japanese_full_stops_end_sentences_without_spaces() -> None:
    assert _sentences("北京是中国的首都。上海很大！你去过吗？") == [
        "北京是中国的首都。", "上海很大！", "你去过吗？"
    ]  # fmt: skip
    assert _sentences("東京は首都です。「はい。」と彼は言った。次の文．") == [
        "東京は首都です。", "「はい。」と彼は言った。", "次の文．"
    ]  # fmt: skip


def test_capitals_of_any_alphabet_and_other_scripts_start_sentences() -> None:
    assert _sentences("Das ist gut. Äpfel sind rot. Übrigens, e.g. nicht hier.") == [
        "Das ist gut.", "Äpfel sind rot.", "Übrigens, e.g. nicht hier."
    ]  # fmt: skip
    assert _sentences("Привет. Как дела?") == ["Привет.", "Как дела?"]
    assert _sentences("यह एक वाक्य है। यह दूसरा है।") == ["यह एक वाक्य है।", "यह दूसरा है।"]
    assert _sentences("هذا سؤال؟ نعم.") == ["هذا سؤال؟", "نعم."]
