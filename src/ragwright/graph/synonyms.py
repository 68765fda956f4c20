"""Entity resolution, stage 2: soft synonym links between near-duplicate entity keys.

Stage 1 (`ragwright.graph.keys.entity_key`) only removes differences that never change what
is named. What is left ("ibm" / "i.b.m.", "obama" / "barack obama", "microsoft" /
"microsoft corporation", "tchaikovsky" / "tchaikovski") is *probably* the same entity, so it
becomes a scored link the store keeps beside the entities, never a merge of their evidence: a
wrong link costs graph search a little, and a user can undo it (`graph unmerge`).

The score of a pair of keys is the best of four signals, each tried only on candidate pairs
found through an index (never all pairs):

- the same letters and digits once punctuation and spaces are gone (1.0);
- one is the acronym of the other's words (0.95);
- one's words are the other's last words, or equal once company suffixes go (0.9);
- the Dice coefficient of their character trigrams (spelling variants).

Keys whose numbers differ ("world war i" / "world war ii", "2019 election" / "2018 election")
never link. An acronym or a lone last word that could stand for several keys ("sc" for 47
names, "curie" for Marie, Pierre and Eve Curie) links to none of them: which one it means is
a guess. With the entities' types (``types``: each key's most mentioned type), a pair whose
types disagree never links ("galicia" PERSON / "galician" NORP), and an acronym never stands
for a person or a work ("md" / "miles davis"). A key the extractor cut badly (a quotation
mark in it, a trailing initial) links to nothing; a spelling variant must pair word by word
with words that start and are spelled alike ("frank iero" / "frankie rose" is no variant) and
must not add an ending that makes another word ("south korea" / "south koreans",
"czechoslovak" / "czechoslovakia"; a plural of a person's name is a family); a lone last word
stands for a person's full name only if it is not a given name several people's keys start
with ("anne"), and for another typed name only after a place ("houston oilers" / "oilers",
not "polar bear" / "bear"); a nationality never by its last word ("andalusian sufi"). A
key that is only a designator ("llc", "group") links to nothing, and a region named from a
compass point ("south central") is not the end of a longer name ("cork south-central"), nor
is a place the end of its compass-qualified part ("northeast china"). With the documents each
key is mentioned in (``documents``), a key's last words stand for it only where one document
mentions both ("cohen" written only apart from "joel cohen" is as often someone else); a key
whose documents are not known links as before. `LINKER_VERSION` names these rules: a store
links every key afresh when the version its links were made by is another.
``benchmarks/entity_precision.py --links`` reports precision on labelled links. The
threshold was chosen on the labelled pairs in tests/data/entity_aliases.tsv
(benchmarks/entity_resolution.py reports precision and recall there).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from functools import lru_cache

#: Links scoring at least this are stored (precision and recall at it: see the module doc).
SYNONYM_THRESHOLD = 0.8
#: Bumped whenever the rules change which keys link: a store whose links were made by
#: another version drops them and links every key afresh (the user's merges and unmerges
#: stay). 2: a key's last words link only where they share a document with it.
LINKER_VERSION = 2
#: A last word shared by more keys than this ("county", "river") finds no candidates by it:
#: it says little, and comparing all of them with each other would make linking quadratic.
_COMMON_TAIL = 100

_WORD = re.compile(r"[^\W_]+")
#: How alike two words of a spelling variant must be (difflib's ratio): one letter in five.
_WORD_LIKENESS = 0.8
_NUMBER = re.compile(r"^(?:\d+(?:st|nd|rd|th)?|[ivxlcdm]+)$")
_SMALL_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "at", "a", "an", "&", "de"})
#: A name starting with one of these is another place than its last words ("north korea").
_QUALIFIERS = frozenset(
    {"north", "south", "east", "west", "new", "upper", "lower", "greater", "northern",
     "southern", "eastern", "western", "central", "inner", "outer", "northeast", "northwest",
     "southeast", "southwest", "northeastern", "northwestern", "southeastern", "southwestern"}
)  # fmt: skip
_SUFFIXES = frozenset(
    {"inc", "corp", "corporation", "co", "company", "ltd", "llc", "plc", "group", "gmbh",
     "ag", "sa", "limited", "incorporated", "fc", "cf", "afc", "club", "university",
     "college"}
)  # fmt: skip

Link = tuple[str, str, float]
#: The documents a key is mentioned in (empty: not known).
Documents = Callable[[str], frozenset[str]]
#: Types that never disagree: an untyped name, or one the extractor does not type.
_UNTYPED = frozenset({"", "NAME", "NOUN_CHUNK", "X"})
#: Types close enough to name one thing ("Syracuse" the city and the university are not,
#: but a place typed GPE here and LOC there is).
_TYPE_GROUPS = {"GPE": "PLACE", "LOC": "PLACE", "FAC": "PLACE", "ORG": "ORG", "NORP": "NORP"}
#: A lone word that starts this many keys of people is a given name, not a surname.
_GIVEN_NAME_KEYS = 2
#: What an acronym never stands for.
_NOT_ACRONYMS = frozenset({"PERSON", "WORK_OF_ART"})
#: What is never named by its last words alone: a title's last word is not the title
#: ("snow queen" / "queen"), an event's not the event.
_NOT_TAILS = frozenset({"WORK_OF_ART", "EVENT"})


def words(key: str) -> list[str]:
    """The key's words, a run of single letters joined into one ("j r r tolkien" ->
    "jrr tolkien", "f.c." -> "fc")."""
    joined: list[str] = []
    run = ""
    for word in _WORD.findall(key):
        if len(word) == 1 and word.isalpha():
            run += word
            continue
        if run:
            joined.append(run)
            run = ""
        joined.append(word)
    return [*joined, run] if run else joined


def compact(key: str) -> str:
    """The key's letters and digits alone ("i.b.m." -> "ibm")."""
    return "".join(words(key))


def similarity(a: str, b: str) -> float:
    """How likely two entity keys name the same thing, in [0, 1]."""
    return _scored(a, b)[0]


def _scored(a: str, b: str) -> tuple[float, str]:
    """The score and the signal that gave it: ``same``, ``acronym``, ``tail`` or ``spelling``."""
    if a == b:
        return 1.0, "same"
    words_a, grams_a, numbers_a = _features(a)
    words_b, grams_b, numbers_b = _features(b)
    if not words_a or not words_b or numbers_a != numbers_b:
        return 0.0, "spelling"
    if "".join(words_a) == "".join(words_b):
        return 1.0, "same"
    short, long = sorted((list(words_a), list(words_b)), key=len)
    score, signal = 0.0, "spelling"
    if len(short) == 1 and len(long) >= 2 and short[0] in _initials(long):
        score, signal = 0.95, "acronym"
    if _tail_match(short, long) and score < 0.9:
        score, signal = 0.9, "tail"
    spelling = dice(grams_a, grams_b)
    return (spelling, "spelling") if spelling > score else (score, signal)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """The Dice coefficient of two trigram sets (`_gram_set`: repeats numbered)."""
    total = len(a) + len(b)
    return 2 * len(a & b) / total if total else 0.0


@lru_cache(maxsize=1 << 17)
def _features(key: str) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]:
    """A key's words, trigram set and numbers, computed once per key (linking compares each
    key with many candidates)."""
    found = words(key)
    return (
        tuple(found),
        frozenset(_gram_set("".join(found))),
        tuple(_numbers(found) if found else ()),
    )


def dominant_types(rows: Iterable[tuple[str, str, int]]) -> dict[str, str]:
    """Each key's type from ``(key, type, mentions)`` rows: its most mentioned one (ties: the
    smaller name), what `synonym_links` compares."""
    best: dict[str, tuple[int, str]] = {}
    for key, label, mentions in rows:
        held = best.get(key)
        if held is None or (mentions, held[1]) > (held[0], label):
            best[key] = (mentions, label)
    return {key: label for key, (_, label) in best.items()}


def synonym_links(
    new_keys: Iterable[str],
    all_keys: Sequence[str],
    threshold: float = SYNONYM_THRESHOLD,
    types: Mapping[str, str] | None = None,
    documents: Documents | None = None,
) -> list[Link]:
    """Links scoring at least ``threshold`` between each new key and every key (new ones
    included), each pair once, as ``(smaller key, larger key, score)``; ``types`` (a key's
    type) refuses pairs whose types disagree; ``documents`` (the documents a key is mentioned
    in) refuses a key's last words standing for it where they share no document with it."""
    types = types or {}
    index = _CandidateIndex(all_keys, threshold, types, documents)
    links: dict[tuple[str, str], float] = {}
    for key in new_keys:
        for other in index.candidates(key):
            if other == key:
                continue
            pair = (key, other) if key < other else (other, key)
            if pair in links:
                continue
            score, signal = _scored(key, other)
            if score >= threshold and index.plausible(key, other, signal, types):
                links[pair] = round(score, 6)
    return sorted((a, b, score) for (a, b), score in links.items())


class _CandidateIndex:
    """Keys by the things a linked pair shares: letters, initials, last word, and for the
    trigram signal a *prefix* of each key's trigrams (prefix filtering: in one global order,
    rarest first, two keys whose Dice can reach `SYNONYM_THRESHOLD` share a trigram among the
    first few of each, so only those are indexed and probed, and common trigrams such as
    "#jo" find nothing they need not)."""

    def __init__(
        self,
        keys: Sequence[str],
        threshold: float,
        types: Mapping[str, str] | None = None,
        documents: Documents | None = None,
    ) -> None:
        types = types or {}
        self.documents = documents
        self._documents_seen: dict[str, frozenset[str]] = {}
        self.by_compact: dict[str, list[str]] = defaultdict(list)
        self.by_initials: dict[str, list[str]] = defaultdict(list)
        self.by_tail: dict[str, list[str]] = defaultdict(list)
        self.by_gram: dict[str, list[str]] = defaultdict(list)
        #: First words of names of several words: a lone key among them is a given name
        #: ("anne", "bruce"), not the surname a last-word link is for.
        self.given_names: Counter[str] = Counter()
        # overlap >= alpha * size on both sides when dice >= threshold
        self.alpha = threshold / (2 - threshold) if threshold > 0 else 0.0
        grams = {key: _features(key)[1] for key in keys}
        self.frequency: Counter[str] = Counter(g for found in grams.values() for g in found)
        for key in keys:
            found = words(key)
            if not found:
                continue
            self.by_compact["".join(found)].append(key)
            for initials in _initials(found):
                self.by_initials[initials].append(key)
            self.by_tail[_core(found)[-1]].append(key)
            if len(found) > 1 and types.get(key, "PERSON") == "PERSON":
                self.given_names[found[0]] += 1
            for gram in self._prefix(grams[key]):
                self.by_gram[gram].append(key)

    def plausible(self, a: str, b: str, signal: str, types: Mapping[str, str]) -> bool:
        """Whether a pair scored by ``signal`` may link: its types agree, neither key is a
        cut-off fragment, a spelling variant differs word by word and not by a derivation,
        and an acronym or a last word is not ambiguous among the keys (nor an acronym of a
        person or work, nor a last word a given name or an adjective)."""
        type_a, type_b = types.get(a, ""), types.get(b, "")
        if not _agree(type_a, type_b) or _fragment(a) or _fragment(b):
            return False
        if _designator(a) or _designator(b):
            return False
        if signal == "spelling":
            return (not _word_added(words(a), words(b)) and _alike_word_by_word(a, b)
                    and not _derived(a, b, {type_a, type_b}))  # fmt: skip
        if signal not in ("acronym", "tail"):
            return True
        by_length = sorted(((a, type_a), (b, type_b)), key=lambda kt: len(words(kt[0])))
        (short, short_type), (long, long_type) = by_length
        if signal == "acronym":
            return long_type not in _NOT_ACRONYMS and len(self.expansions(short)) < 2
        if long_type in _NOT_TAILS or "NORP" in (short_type, long_type):
            return False
        lone = len(words(short)) == 1
        if lone and not self._surname_or_short_name(short, long, short_type, long_type, types):
            return False
        return len(self.longer_with_tail(short)) < 2 and self._written_together(short, long)

    def _written_together(self, short: str, long: str) -> bool:
        """Whether a name's last words are mentioned in a document that also names it in full
        (where the documents are known): a surname or a short form stands for the full name
        it was written after ("Cameron" after "James Cameron"); where it is only ever written
        apart, it names someone or something else as often ("Cohen", "Hastings", "the post
        office" / "Buena Vista Post Office")."""
        if self.documents is None:
            return True
        apart, whole = self._documents_of(short), self._documents_of(long)
        return not apart or not whole or not apart.isdisjoint(whole)

    def _documents_of(self, key: str) -> frozenset[str]:
        """``documents(key)``, asked once per key (a store answers it with a query)."""
        found = self._documents_seen.get(key)
        if found is None and self.documents is not None:
            found = self._documents_seen[key] = self.documents(key)
        return found or frozenset()

    def _surname_or_short_name(
        self, short: str, long: str, short_type: str, long_type: str, types: Mapping[str, str]
    ) -> bool:
        """Whether a lone word may stand for a longer name it ends: a person's surname, not
        a given name several people's keys start with ("anne", "bruce"), nor two letters
        ("jua ma" / "ma"); or what a place's team or paper goes by ("houston oilers" /
        "oilers", "washington post" / "post"), not a common noun ending another name
        ("polar bear" / "bear", "mystery jets" / "jets"). Where neither key has a type (an
        extractor that types nothing) the last word links as before."""
        if len(short) <= 2 or self.given_names[short] >= _GIVEN_NAME_KEYS:
            return False
        found, long_words = _core(words(short)), _core(words(long))
        if long_type == "PERSON" or long_words == found:
            return True
        if long_type in _UNTYPED and short_type in _UNTYPED:  # an extractor that types nothing
            return True
        before = " ".join(long_words[: len(long_words) - len(found)])
        return _TYPE_GROUPS.get(types.get(before, ""), "") in ("PLACE", "NORP")

    def expansions(self, acronym: str) -> set[str]:
        """The keys of several words ``acronym`` is the initials of."""
        return set(self.by_initials.get(compact(acronym), ()))

    def longer_with_tail(self, key: str) -> set[str]:
        """The keys of more words that end with ``key``'s words (its core, suffixes gone)."""
        found = _core(words(key))
        if not found:
            return set()
        return {
            other
            for other in self.by_tail.get(found[-1], ())
            if len(_core(words(other))) > len(found) and _tail_match(found, words(other))
        }

    def _prefix(self, grams: frozenset[str] | set[str]) -> list[str]:
        ordered = sorted(grams, key=lambda g: (self.frequency.get(g, 0), g))
        keep = len(ordered) - math.ceil(self.alpha * len(ordered) - 1e-9) + 1
        return ordered[: max(1, keep)]

    def candidates(self, key: str) -> set[str]:
        found = words(key)
        if not found:
            return set()
        joined = "".join(found)
        out = set(self.by_compact.get(joined, ()))
        out.update(self.by_initials.get(joined, ()))
        for initials in _initials(found):
            out.update(self.by_compact.get(initials, ()))
        tail = self.by_tail.get(_core(found)[-1], ())
        if len(tail) <= _COMMON_TAIL:
            out.update(tail)
        for gram in self._prefix(set(_features(key)[1])):
            out.update(self.by_gram.get(gram, ()))
        return out


def _fragment(key: str) -> bool:
    """A key the extractor cut badly: with a quotation mark ('johnny cash "amqui') or ending
    in a lone initial ("francis f"; a Roman numeral is a number, "henry v")."""
    found = words(key)
    last = key.split()[-1] if key.split() else ""
    return '"' in key or (len(found) > 1 and len(last) == 1 and last not in "ivxlcdm")


def _designator(key: str) -> bool:
    """A key that is only a company or club designator ("llc", "inc", "group"): a word any
    name may end with, never a name of its own (else "llc" is the acronym of "lapu-lapu
    city")."""
    found = words(key)
    return bool(found) and all(word in _SUFFIXES for word in found)


def _alike_word_by_word(a: str, b: str) -> bool:
    """Whether two keys, their initials aside, pair word by word (in order or in the other
    order: "kawaguchi hiroshi") into words that start alike and are spelled alike: a spelling
    variant changes letters of its words ("liankang" / "liangkang"), not a whole word
    ("frank iero" / "frankie rose", "i love to laugh" / "we love to laugh")."""
    words_a = [w for w in _WORD.findall(a) if len(w) > 1]
    words_b = [w for w in _WORD.findall(b) if len(w) > 1]
    if len(words_a) != len(words_b):
        return "".join(words_a) == "".join(words_b)
    return any(
        all(_alike(x, y) for x, y in zip(words_a, order, strict=True))
        for order in (words_b, words_b[::-1])
    )


def _alike(a: str, b: str) -> bool:
    return a == b or (a[0] == b[0] and SequenceMatcher(None, a, b).ratio() >= _WORD_LIKENESS)


def _derived(a: str, b: str, types: set[str]) -> bool:
    """Whether one key is the other with an ending added that makes another word: a country's
    people or adjective ("south korea" / "south koreans", "czechoslovak" / "czechoslovakia"),
    or a person's name in the plural (a family: "bradley" / "bradleys"). A plural of anything
    else ("belgian" / "belgians") is the same thing."""
    short, long = sorted((compact(a), compact(b)), key=len)
    if short == long or not long.startswith(short):
        return False
    ending = long[len(short) :]
    return ending not in ("s", "es") or "PERSON" in types


def _word_added(a: list[str], b: list[str]) -> bool:
    """Whether one key is the other with whole words (not initials) added before or after:
    a spelling variant changes letters, a longer name ("big sky conference" / "sky
    conference") is another thing or a different cut."""
    short, long = sorted((a, b), key=len)
    extra = len(long) - len(short)
    if not short or not extra:
        return False
    for at in range(extra + 1):
        if long[at : at + len(short)] == short:
            added = long[:at] + long[at + len(short) :]
            return any(len(word) > 1 for word in added)
    return False


def _agree(a: str, b: str) -> bool:
    if a in _UNTYPED or b in _UNTYPED:
        return True
    return _TYPE_GROUPS.get(a, a) == _TYPE_GROUPS.get(b, b)


def _grams(text: str) -> Counter[str]:
    padded = f"#{text}#"
    return Counter(padded[i : i + 3] for i in range(len(padded) - 2))


def _gram_set(text: str) -> set[str]:
    """The trigrams as a set, a repeated one numbered ("ana", "ana2"), so set overlap is the
    multiset overlap Dice counts."""
    return {f"{gram}{n}" if n > 1 else gram for gram, count in _grams(text).items()
            for n in range(1, count + 1)}  # fmt: skip


def _numbers(found: list[str]) -> list[str]:
    """Digits anywhere, and a Roman numeral ending a longer name ("henry viii")."""
    numbers = [w for w in found if w[0].isdigit()]
    last = found[-1]
    if len(found) > 1 and not last[0].isdigit() and _NUMBER.match(last):
        numbers.append(last)
    return numbers


def _initials(found: list[str]) -> set[str]:
    """The acronyms a phrase of several words may go by: with and without its small words."""
    if len(found) < 2:
        return set()
    every = "".join(w[0] for w in found)
    content = "".join(w[0] for w in found if w not in _SMALL_WORDS)
    return {every, content} if len(content) >= 2 else {every}


def _core(found: list[str]) -> list[str]:
    """The words without trailing company suffixes ("microsoft corporation" -> "microsoft")."""
    end = len(found)
    while end > 1 and found[end - 1] in _SUFFIXES:
        end -= 1
    return found[:end]


def _tail_match(short: list[str], long: list[str]) -> bool:
    """The shorter phrase is the longer's last words ("obama" / "barack obama"), or both are
    the same once company suffixes go; a lone small word never matches."""
    short_core, long_core = _core(short), _core(long)
    if short_core == long_core:
        return True
    if all(w in _SMALL_WORDS for w in short_core) or len(short_core) >= len(long_core):
        return False
    # "university of oxford" is not "oxford", "north korea" not "korea"; names of people
    # (most of what this rule is for) have neither.
    if long_core[0] in _QUALIFIERS or any(w in ("of", "the", "for") for w in long_core):
        return False
    if len(short_core) > 1 and short_core[0] in _QUALIFIERS:
        return False  # a region of whatever comes before: "cork south-central"
    return long_core[-len(short_core) :] == short_core
