"""Entity hygiene from the words around a span: what a sentence says a name is.

A small news-trained NER model types many names of prose wrongly ("Kaoru Amane" an ORG,
"Copenhagen" an ORG) and takes offices and the first word of a title for names. The words
next to a span are better evidence than the model's guess, with no list of names needed:

- **a person** (`PERSON`): after "the role of", "played/voiced/directed/written by", "son
  of", an honorific ("Dr.", "Sir"); before "(born", "(née" or ", who";
- **a place** (`GPE`): after "born in", "died in", "based in", "the city/town/village of",
  "the capital of";
- **what the sentence defines it as**: the span is the subject of "is a …", "was an …" or
  stands before ", a …", and the noun that follows within a few words says its kind
  (`_KINDS`: "was a French film director" a person, "is a city" a place, "is a 2006
  film" a work, "was an English rock band" an organisation);
- **untyped** (`UNTYPED`): another name of the sentence's subject ("also known as
  Tibeto-Burman", "Oceans (French: Océans)"): the model types such words at random;
- **no name**: a lone word after "served as" or "was appointed as"
  names an office ("served as Chamberlain"); a lone word followed by "of the" and a
  capitalized word is the head of a longer name the model cut ("Spirit" of "Spirit of the
  Border").

A cue only retypes a span the model gave a type that is a guess for such names
(`_OVERRIDABLE`), and only into a type its words are shaped for
(`ragwright.graph.extractors.hygiene.shaped_label`).
"""

from __future__ import annotations

import re

from ragwright.graph.extractors.hygiene import UNTYPED, shaped_label

#: The model's types a cue may overrule: the ones it confuses with each other on prose.
_OVERRIDABLE = frozenset({"ORG", "GPE", "LOC", "NORP", "PERSON", "WORK_OF_ART", "PRODUCT", "FAC"})
#: How far back a cue may start (characters).
_WINDOW = 40
#: How far ahead a definition may reach (characters).
_DEFINITION_WINDOW = 160
_PERSON_BEFORE = re.compile(
    r"(?:\b(?:role|roles|character) of|\b(?:played|portrayed|voiced|directed|written|composed|"
    r"narrated|sung|hosted) by|\bstarring|\b(?:son|daughter|wife|husband|widow|brother|sister|"
    r"mother|father) of|\b(?:Mr|Mrs|Ms|Dr|Sir|Dame|Lord|Lady)\.?)\s+$"
)
_PERSON_AFTER = re.compile(r"^\s*(?:\((?:born|née|nee)\b|,\s+who\b)")
_PLACE_BEFORE = re.compile(
    r"\b(?:(?:born|died) in|based in|(?:city|town|village|capital|island|province) of)\s+$",
    re.IGNORECASE,
)
#: A biological taxon ("the family Apiaceae", "a genus of …"): a name, but of none of the
#: model's types.
_TAXON_BEFORE = re.compile(r"\b(?:genus|genera|family|subfamily|order|tribe|species)\s+$")
_TAXON_ENDINGS = ("aceae", "idae", "inae", "oideae", "ales", "phyta", "mycetes")
_KINDS = {
    **dict.fromkeys(
        "actor actress singer songwriter director writer author poet novelist playwright "
        "screenwriter journalist politician statesman diplomat lawyer judge businessman "
        "businesswoman entrepreneur producer composer musician guitarist drummer pianist "
        "rapper comedian filmmaker painter sculptor photographer architect scientist "
        "physicist chemist mathematician philosopher historian economist engineer inventor "
        "footballer player coach manager athlete boxer wrestler cyclist swimmer jockey "
        "model dancer presenter broadcaster priest bishop general officer soldier "
        "aviator astronaut explorer teacher professor scholar activist critic editor "
        "publisher designer illustrator cartoonist animator physician surgeon".split(),
        "PERSON",
    ),
    **dict.fromkeys(
        "city town village municipality commune hamlet suburb borough country nation "
        "state province county region capital".split(),
        "GPE",
    ),
    **dict.fromkeys(
        "company corporation band duo trio group team club university college school "
        "organization organisation party airline manufacturer label agency".split(),
        "ORG",
    ),
    **dict.fromkeys(
        "film movie documentary novel book album song single opera musical sitcom "
        "poem painting comedy drama thriller series episode magazine newspaper".split(),
        "WORK_OF_ART",
    ),
}
#: The span, maybe a parenthesis (dates, a native spelling), then "is a", "was an" or ", a",
#: then the noun phrase's words (a list of modifiers included: "an American film, stage and
#: television actor") up to a preposition, a relative pronoun, a verb "to be" or a stop.
_DEFINED_AS = re.compile(
    r"^\s*(?:\([^()]{0,80}\)\s*)?(?:,\s*|(?:is|was|are|were)\s+)(?:a|an|the)\s+"
    r"((?:(?!(?:of|by|in|for|from|with|at|on|to|who|which|that|is|was|are|were)\b)"
    r"[\w'-]+,?\s*){1,8})"
)
_OFFICE_BEFORE = re.compile(
    r"\b(?:served|serves|serving|appointed|elected|named|acted|acting|crowned) as\s+$",
    re.IGNORECASE,
)
_CUT_BEFORE_OF = re.compile(r"^\s+of\s+the\s+[A-Z]")
#: Another name of what the sentence is about, its type its subject's, which the model reads
#: from a foreign or unfamiliar word no better than a guess: a name in another language or
#: script ("Oceans (French: Océans)", "(アストロボーイ, Asutoro Bōi: Tetsuwan Atomu"), or one
#: the thing is also known by ("also known as Tibeto-Burman"; a person's alias stays a
#: person's: "Rod Rat (aka Rod Hibbert").
_TRANSLATION_BEFORE = re.compile(r"\([^()]*:\s*[\"“]?$")
_ALIAS_BEFORE = re.compile(
    r"\b(?:(?:also|formerly|originally|commonly|better|otherwise)\s+known\s+as"
    r"|a\.?k\.?a\.?)\s*[\"“]?$"
)
#: A capitalized word just before the span, itself not a sentence's first word: the span is
#: the end of a longer name the model cut ("Great [[Eastern]]", "Right-Wing Rear [[Banner]]").
_CUT_AFTER = re.compile(r"(?<![.!?:;\n(\"“])\s[A-Z][\w'’-]*[a-z][\w'’-]* $")


def cue_label(text: str, start: int, end: int, label: str) -> str | None:
    """``label``, the type the words around ``text[start:end]`` say the span is, or None
    when they say it names nothing."""
    surface = text[start:end]
    before = text[max(0, start - _WINDOW) : start]
    after = text[end : end + _WINDOW]
    lone = len(surface.split()) == 1
    if lone and _OFFICE_BEFORE.search(before):
        return None
    if lone and _CUT_BEFORE_OF.match(after):
        return None
    if label not in ("PERSON", "NORP") and _CUT_AFTER.search(before):
        return None
    if lone and (_TAXON_BEFORE.search(before) or surface.casefold().endswith(_TAXON_ENDINGS)):
        return UNTYPED
    if label not in _OVERRIDABLE:
        return label
    if _TRANSLATION_BEFORE.search(before):
        return UNTYPED
    if label != "PERSON" and _ALIAS_BEFORE.search(before):
        return UNTYPED
    if _PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after):
        return _shaped(surface, "PERSON", label)
    if _PLACE_BEFORE.search(before):
        return _shaped(surface, "GPE", label)
    kind = _defined_kind(text[end : end + _DEFINITION_WINDOW])
    return label if kind is None else _shaped(surface, kind, label)


def person_cue(text: str, start: int, end: int) -> bool:
    """Whether the words around ``text[start:end]`` say it is a person ("played by X",
    "X (born", "X was an American actor")."""
    before = text[max(0, start - _WINDOW) : start]
    after = text[end : end + _WINDOW]
    if _PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after):
        return True
    return _defined_kind(text[end : end + _DEFINITION_WINDOW]) == "PERSON"


def _defined_kind(after: str) -> str | None:
    """The kind a definition after the span names: its noun phrase's last word that is a
    kind ("a French film director": director, a person)."""
    defined = _DEFINED_AS.match(after)
    if defined is None:
        return None
    kinds = [_KINDS[head] for head in _heads(defined.group(1)) if head in _KINDS]
    return kinds[-1] if kinds else None


def _heads(phrase: str) -> list[str]:
    """The head noun of each conjunct of a definition's noun phrase: its last word before a
    participle ("a struggling high school chemistry teacher diagnosed": teacher, not school;
    "a city and county seat": city and seat)."""
    heads = []
    for conjunct in re.split(r",|\band\b|\bor\b", phrase):
        words = conjunct.split()
        while words and words[-1].endswith(("ed", "ing")) and len(words) > 1:
            words.pop()
        if words:
            heads.append(words[-1])
    return heads


def _shaped(surface: str, cued: str, label: str) -> str:
    """The cued type when the words are shaped for it, else the model's."""
    return cued if shaped_label(surface, cued) == cued else label
