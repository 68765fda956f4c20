from __future__ import annotations

import pytest

from ragwright.answers.answer_types import AnswerType, states_type, type_asked


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did the band release its first album?", AnswerType.DATE),
        ("In what decade was the bridge built?", AnswerType.DATE),
        ("Who directed the film?", AnswerType.NAME),
        ("Where is the company based?", AnswerType.NAME),
        ("The author was born in which country?", AnswerType.NAME),
        ("In which city was the author born?", AnswerType.NAME),
        ("How many people live there?", None),  # a number: the quantity rule's
        ("What is the default port?", None),
    ],
)
def test_the_kind_of_answer_a_question_asks_for(question: str, kind: AnswerType | None) -> None:
    assert type_asked(question) is kind


def test_a_sentence_states_a_date_or_a_name_the_question_does_not_say() -> None:
    date, name = AnswerType.DATE, AnswerType.NAME
    asked = "When did Tidepool move its office after 1990?"
    assert states_type("Tidepool moved in March.", asked, date)
    assert states_type("The office opened in the 2010s.", asked, date)
    assert not states_type("Tidepool moved after 1990.", asked, date)  # the question's year
    assert not states_type("Tidepool moved offices.", asked, date)
    who = "Who founded Tidepool?"
    assert states_type("It was founded by Ada Lovelace.", who, name)
    assert not states_type("Tidepool was founded long ago.", who, name)  # the question's name
    assert not states_type("Founders are rarely known.", who, name)  # a first word only
