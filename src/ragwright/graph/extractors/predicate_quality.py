"""Whether a fact's predicate states a relation, or is parse debris.

On technical text the parse path between two names often runs through table cells, markup
and noun lists: ("postgresql", "in in", "sqlite"), ("markdown", "reads text see [", "pdf"),
("csv", "word", "powerpoint"). Such a "fact" is worse than none: it is shown as a key fact
and embedded for query linking. A predicate must be a few plain words, none repeated
(`plain_predicate`, which needs only the text, so reports can check stored facts too), and,
where the parse is at hand, a relation (`states_relation`): a verb or copula ("wrote",
"born in", "is director of"), or a relational noun or adjective with its preposition
("ambassador to", "sequel to") — never a noun list ("clients assistants as"), bare nouns
("hybrid indexes") or a bare preposition.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

#: Words a predicate has at most ("was an American filmmaker born in" keeps 4).
MAX_PREDICATE_WORDS = 6
#: Nouns a predicate carries at most: more is a noun list, not a relation.
MAX_NOUNS = 2
_WORD = re.compile(r"^[^\W\d_](?:[\w'-]*[^\W\d_])?$")
_VERBS = frozenset({"VERB", "AUX"})
_RELATIONAL = frozenset({"NOUN", "ADJ"})


def plain_predicate(predicate: str) -> bool:
    """1 to `MAX_PREDICATE_WORDS` words of letters (no punctuation, markup or numbers), none
    repeated."""
    words = predicate.casefold().split()
    if not 1 <= len(words) <= MAX_PREDICATE_WORDS or len(set(words)) != len(words):
        return False
    return all(_WORD.match(word) for word in words)


def states_relation(tokens: Sequence[Any]) -> bool:
    """Whether a predicate's parse ``tokens`` (spaCy tokens, in text order) state a relation:
    plain words with at most one main verb and `MAX_NOUNS` nouns, no proper noun (a name
    the recogniser missed), not ending in an auxiliary ("are on is"); and a verb or copula,
    else one noun (adjectives aside) followed by its preposition."""
    if not tokens or not plain_predicate(" ".join(token.text for token in tokens)):
        return False
    tags = [token.pos_ for token in tokens]
    if "PROPN" in tags or tags.count("VERB") > 1 or tags.count("NOUN") > MAX_NOUNS:
        return False
    if len(tags) > 1 and tags[-1] == "AUX":
        return False
    if any(a == b == "ADP" for a, b in itertools.pairwise(tags)):  # "is in via"
        return False
    if any(tag in _VERBS for tag in tags):
        return True
    head = tags[:-1]  # "ambassador to", "sequel to": one relational noun and its preposition
    return tags[-1] == "ADP" and head.count("NOUN") == 1 and all(tag in _RELATIONAL for tag in head)
