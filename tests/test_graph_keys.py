"""Entity resolution, stage 1: the normalized key."""

from __future__ import annotations

import pytest

from ragwright.graph.keys import entity_key


@pytest.mark.parametrize(
    ("surface", "key"),
    [
        ("Barack Obama", "barack obama"),
        ("  Barack \n Obama's ", "barack obama"),
        ("The Beatles'", "beatles"),
        ("“Hamlet”", "hamlet"),
        ("ＩＢＭ", "ibm"),  # fullwidth letters (NFKC)
        ("Straße", "strasse"),  # casefold, not lower
        ("IBM.", "ibm"),
    ],
)
def test_forms_of_one_name_share_a_key(surface: str, key: str) -> None:
    assert entity_key(surface) == key


def test_different_names_keep_different_keys() -> None:
    assert entity_key("U.S.") != entity_key("us")
    assert entity_key("Apple Inc") != entity_key("Apple")


def test_a_name_that_is_only_an_article_is_kept_and_punctuation_alone_is_empty() -> None:
    assert entity_key("The") == "the"
    assert entity_key("...") == ""
