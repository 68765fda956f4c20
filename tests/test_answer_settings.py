"""The ``[answer]`` table: the extractive engine's options come from ``[answer.extractive]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.settings import AnswerSettings
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.testing import HashingEmbedder


def settings(extractive: object) -> AnswerSettings:
    return AnswerSettings.from_config(Config({"answer": {"extractive": extractive}}))


def test_the_extractive_table_sets_any_option_and_keeps_the_others() -> None:
    table = {"max_sentences": 1, "min_relevance": 0.1, "require_names": False}
    options = settings(table).extractive
    assert options == ExtractiveOptions(max_sentences=1, min_relevance=0.1, require_names=False)
    assert AnswerSettings.from_config(Config()).extractive == ExtractiveOptions()
    issue_32 = settings({"answer_type_weight": 1.5, "title_context": True}).extractive
    assert (issue_32.answer_type_weight, issue_32.title_context) == (1.5, True)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"max_sentence": 2}, r"unknown keys \['max_sentence'\]"),
        ({"max_sentences": 1.5}, r"max_sentences must be an integer >= 0"),
        ({"max_sentences": -1}, r"max_sentences must be an integer >= 0"),
        ({"max_sentences": True}, r"max_sentences must be an integer >= 0"),
        ({"require_names": 1}, r"require_names must be true or false"),
        ({"min_similarity": "high"}, r"min_similarity must be a finite number"),
        ({"max_gap": float("nan")}, r"max_gap must be a finite number"),
        ({"title_context": "yes"}, r"title_context must be true or false"),
        ({"answer_type_weight": "high"}, r"answer_type_weight must be a finite number"),
        (3, r"must be a table"),
    ],
)
def test_a_wrong_key_or_type_is_a_config_error_naming_it(table: object, message: str) -> None:
    with pytest.raises(ConfigError, match=r"\[answer\.extractive\]"):
        settings(table)
    with pytest.raises(ConfigError, match=message):
        settings(table)


def test_index_ask_answers_with_the_configured_options(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text(
        "# Tea\n\nGreen tea is steamed to stop oxidation. Green tea is then rolled and dried. "
        "Green tea leaves are picked in spring.\n"
    )
    wide = {"max_gap": 2.0, "relevance_gap": 30.0}  # every sentence within reach of the best
    one = Config({"answer": {"extractive": {"max_sentences": 1, **wide}}})
    with Index(tmp_path / "idx", embedder=HashingEmbedder(), config=one) as kb:
        kb.ingest([docs])
        configured = kb.ask("How is green tea made?")
        given = kb.ask("How is green tea made?", options=ExtractiveOptions(max_sentences=3, **wide))
    assert configured.found and len(configured.citations) == 1
    assert len(given.citations) > 1  # options given to the call win over the table
