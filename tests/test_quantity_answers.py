"""A question that asks for a number is answered only by a sentence that states one; with
none among the retrieved passages, the extractive answer abstains."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.answers.extractive import NOT_FOUND, ExtractiveOptions
from ragwright.answers.quantities import asks_for_quantity, states_quantity
from ragwright.testing import HashingEmbedder


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("How many vacation days do new employees get?", True),
        ("What does an enterprise licence cost per year?", True),
        ("What is the on-call phone number for P1 incidents?", True),
        ("In which year was the policy written? What year?", True),
        ("How long are backups kept?", False),  # often words: "until the run ends"
        ("How often is a restore tested?", False),  # "quarterly"
        ("Who heads the security office?", False),
    ],
)
def test_which_questions_ask_for_a_number(question: str, asks: bool) -> None:
    assert asks_for_quantity(question) is asks


def test_phone_numbers_and_years_have_their_shape() -> None:
    phone = "What is the on-call phone number?"
    assert states_quantity("Call +49 30 123456 at any hour.", phone)
    assert not states_quantity("The first response comes within 1 hour.", phone)
    assert states_quantity("It was founded in 1998.", "In which year was it founded?")
    assert not states_quantity("It has 12 members.", "In which year was it founded?")


def test_a_price_is_a_sum_of_money_not_any_number() -> None:
    price = "How much does the Premium support plan cost per month?"
    assert not states_quantity("Premium answers within four hours, around the clock.", price)
    assert states_quantity("Premium answers within four hours.", price, money=False)
    assert states_quantity("Premium support costs $49 per month.", price)
    assert states_quantity("It is 49 EUR a month.", price)
    assert states_quantity("The plan costs 1.2 million dollars.", price)
    assert states_quantity("The Basic plan is free.", price)
    assert states_quantity("Support comes at no extra charge.", price)
    assert states_quantity("The fee is 30 euros.", "What is the fee?")
    assert states_quantity("It has 12 members.", "How many members?")  # a count: any number


def test_numbers_in_digits_or_words() -> None:
    assert states_quantity("Call +49 30 1234 for P1 incidents.")
    assert states_quantity("New employees get twenty-five days.")
    assert states_quantity("The community edition is free.")
    assert not states_quantity("Call the on-call phone for P1 incidents.")  # a name's digit
    assert not states_quantity("Someone answers the phone.")  # "one" inside a word is no number


def test_a_number_question_quotes_a_sentence_with_a_number_or_abstains(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "oncall.md").write_text(
        "# On-call\n\nP1 incidents page the on-call engineer by phone.\n", encoding="utf-8"
    )
    anything = ExtractiveOptions(min_similarity=-1.0)
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs)
        phone = index.ask("What is the on-call phone number for P1 incidents?", options=anything)
        assert phone.text == NOT_FOUND and not phone.found
        lenient = ExtractiveOptions(min_similarity=-1.0, require_quantity=False)
        quoted = index.ask("What is the on-call phone number for P1 incidents?", options=lenient)
        assert quoted.found and "by phone" in quoted.text
        (docs / "response.md").write_text(
            "# Response\n\nThe on-call engineer answers P1 incidents within 15 minutes.\n",
            encoding="utf-8",
        )
        index.ingest(docs)
        minutes = index.ask("How many minutes does a P1 incident wait?", options=anything)
        assert minutes.found and "15 minutes" in minutes.text
        assert "by phone" not in minutes.text  # the sentence without a number is left out
        (docs / "plans.md").write_text(
            "# Plans\n\nThe Premium plan answers P1 incidents within four hours.\n",
            encoding="utf-8",
        )
        index.ingest(docs)
        price = "What does the Premium plan cost?"
        assert not index.ask(price, options=anything).found  # a number, but no price
        assert index.ask(price, options=dataclasses.replace(anything, require_money=False)).found
        for citation in minutes.citations:
            document = index.document(citation.document_id)
            assert document is not None
            assert document.content[citation.char_start : citation.char_end] == citation.quote
