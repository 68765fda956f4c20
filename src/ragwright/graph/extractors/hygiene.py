"""Entity hygiene: which of a model's entity spans name something, and under which type.

A NER model trained on news reads technical text badly: it takes code identifiers, paths,
numbers, hashes, units, placeholders and table cells for names, and types them at random
("bm25" a PERSON). These checks run on each span with its chunk's text around it:

- **not a name** (`None`): a span in code (an inline code span, a fenced block) or in a table
  row; one with code punctuation, a dotted identifier (``Index.graph.build``), a path or a
  URL; one without a capital letter (``docs``, ``float32``); a hash, a number or a measure
  (``300k``, ``x0.73``, ``0.75 / 0.78``, ``The 1970``, ``M 32``); a unit (``MB``); a lone letter
  (``N``); a constant or placeholder (``QUANTITY``, ``DATASET``); a span across a paragraph
  break or ending in a function word (``the Faculty of Law of``: a name cut short).
- **another type** (`retyped`): the span's head noun contradicts the model ("Castner Range",
  "NFL Draft" typed PERSON; "the Bougainville Campaign" typed ORG).
- **untyped** (`UNTYPED`): a PERSON or place whose words do not look like a person's or a
  place's name (``PyMuPDF``, ``SQLite FTS5``, ``LM Studio``): the name stays, the type goes.

The sample these were written against and the precision they reach: ``benchmarks/
entity_precision.py``.
"""

from __future__ import annotations

import re

#: The label of a name whose type the context contradicted (also what the rule extractor uses).
UNTYPED = "NAME"

_CODE_CHARACTERS = re.compile(r"[_()\[\]{}=<>@$#|\\`*+~^;]")
_DOTTED = re.compile(r"[a-z0-9]\.[A-Za-z_]")
_HEX = re.compile(r"^[0-9a-f]{7,}$", re.IGNORECASE)
_MEASURE = re.compile(r"^\d+(?:[.,]\d+)*(?:k|m|b|x|s|ms|kb|mb|gb|tb|kib|mib|gib)$", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_OPTION_BEFORE = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*[ =]$")
_CODE_WORD = re.compile(r"\w+")
_BOX_DRAWING = re.compile(r"[\u2500-\u257f]")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
#: A Markdown code block by indentation: a paragraph whose first line starts with four spaces
#: or a tab (and is no list item).
_INDENTED_CODE = re.compile(r"(?: {4,}|\t)(?![-*+] |\d+[.)] )\S")
_UNITS = frozenset(
    "b kb mb gb tb kib mib gib tib ms ns us µs s sec min h hz khz mhz ghz px pt dpi "
    "cpu cpus gpu gpus ram".split()
)
#: Lower-case words a person's or a place's name may hold ("Ludwig van Beethoven").
_PARTICLES = frozenset(
    "of the and de da del der di du la le van von bin al y e zu dos das des".split()
)
_NAME_WORD = re.compile(r"^(?:[^\W\d_][^\W\d_'’.-]*(?:['’-][^\W\d_]+)*\.?|(?:[^\W\d_]\.)+)$")
#: Capitalized, these words start a title or a band's name, not a person's ("Sorry About
#: Dresden").
_FUNCTION_WORDS = frozenset(
    "a an about and at by for from in into is it on or over the to with".split()
)
#: How names of nationalities and groups end ("Brazilian", "Danish", "Sikh", "Nazis").
_NORP_ENDINGS = ("an", "ans", "ese", "ish", "ch", "ic", "ics", "i", "is", "s", "h")
#: Head nouns that say what kind of thing a name is, whatever the model said.
_HEADS = {
    **dict.fromkeys(
        "street road avenue boulevard lane drive highway bridge station airport stadium arena "
        "hall tower square building castle cathedral palace museum theatre theater alley "
        "canal pier wharf pavilion".split(),
        "FAC",
    ),
    **dict.fromkeys(
        "river lake mountains mountain range valley bay island islands sea ocean creek "
        "peninsula desert forest".split(),
        "LOC",
    ),
    **dict.fromkeys("county district parish province township borough".split(), "GPE"),
    **dict.fromkeys(
        "campaign affair war battle draft census election championship championships cup "
        "olympics festival revolution massacre siege tour rebellion uprising".split(),
        "EVENT",
    ),
}
#: The first word of an "X of Y" name that makes it an institution, whatever the model
#: said ("Association of Pickers of Jardim Gramacho" typed PERSON).
_INSTITUTION_HEADS = frozenset(
    "association society federation union council committee institute academy league "
    "ministry department bank company corporation university college school foundation "
    "commission agency".split()
)
#: Model types a head noun after the span may correct ("the Kertha Gosa pavilion"): not a
#: place's, which a head after it only qualifies ("the Boston marathon").
_MODIFIER_CORRECTABLE = frozenset({"PERSON", "ORG", "WORK_OF_ART", "PRODUCT"})
#: What a head noun may correct: the model's types that are guesses for such names.
_CORRECTABLE = frozenset({"PERSON", "ORG", "NORP", "WORK_OF_ART", "PRODUCT", "GPE", "LOC"})
_SHAPED = frozenset({"PERSON", "GPE", "LOC", "NORP", "FAC"})


def in_code(text: str, start: int) -> bool:
    """Whether ``start`` lies in a fenced or indented code block, an inline code span (one
    line or wrapped) or a table row."""
    if _in_fenced_block(text, start):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    if line.lstrip().startswith("|"):
        return True
    if _BOX_DRAWING.search(line):  # a tree drawn in a code block this chunk starts inside
        return True
    blank = text.rfind("\n\n", 0, start)
    paragraph_start = 0 if blank < 0 else blank + 2
    if _INDENTED_CODE.match(text, paragraph_start):  # ".venv/bin/ragwright ingest … DIR"
        return True
    # an inline code span may wrap onto the next line ("`nice python evidence.py\n--cache-dir
    # DIR`"): count its backticks from the paragraph's start, after any fence in it
    fence = text.rfind("```", paragraph_start, start)
    opened_at = paragraph_start if fence < 0 else fence + 3
    return text.count("`", opened_at, start) % 2 == 1


def option_value(text: str, start: int) -> bool:
    """Whether the span at ``start`` is the value of a command-line option (``--index DIR``,
    ``[--out DIR]``): a placeholder or an argument, wherever the command line stands (a code
    block the chunk starts inside, a fence it cannot tell opening from closing)."""
    return _OPTION_BEFORE.search(text, max(0, start - 40), start) is not None


def in_code_elsewhere(text: str, surface: str) -> bool:
    """Whether the chunk writes ``surface`` as a word of an inline code span (`` `Config` ``,
    `` `onnx:PATH` ``): then it is an identifier or a placeholder wherever it stands."""
    if f"`{surface}`" in text:  # whatever the pairing of the chunk's other backticks
        return True
    return any(surface in _CODE_WORD.findall(code) for code in _INLINE_CODE.findall(text))


def _in_fenced_block(text: str, start: int) -> bool:
    """A fence with an info string (```python) opens a block; a bare one closes the block
    open, or opens one; a bare first fence closes a block the chunk started inside (a chunk
    can begin mid-block), so what came before it was code."""
    inside = False
    for number, fence in enumerate(_FENCE.finditer(text)):
        info = text[fence.end() : text.find("\n", fence.end()) % (len(text) + 1)].strip()
        if fence.start() > start:
            return inside or (number == 0 and not info)
        inside = bool(info) or (number > 0 and not inside)
    return inside


def not_a_name(surface: str) -> bool:
    """Whether a span's own characters say it names nothing: code, a path, a number..."""
    if "\n\n" in surface or not any(ch.isupper() for ch in surface):
        return True
    if _CODE_CHARACTERS.search(surface) or _DOTTED.search(surface) or "://" in surface:
        return True
    tokens = surface.split()
    if any(t[0] in "./~-" or t.endswith("/") or t.count("/") > 1 for t in tokens):
        return True
    words = [t.strip(".,:;!?'’\"“”") for t in tokens]
    if len(words) == 1 and (words[0].casefold() in _UNITS or len(words[0]) == 1):
        return True  # a unit, or a lone letter (a variable: "at most N chunks")
    if len(words) > 1 and words[-1].casefold() in _FUNCTION_WORDS | {"of"}:
        return True  # a name cut short ("the Faculty of Law of")
    if len(words) > 1 and words[-1].islower() and words[-1].casefold() not in _PARTICLES:
        return True  # a description ("BM25 files") or a variable ("RRF k"), not a name
    if any(part.casefold() in _UNITS for word in words for part in word.split("-")[1:]):
        return True  # a compound unit ("CPU-s")
    if len(words) == 1 and len(words[0]) >= 7 and words[0].isalpha() and words[0].isupper():
        return True  # a constant or a placeholder (QUANTITY, DATASET); acronyms are shorter
    return any(_HEX.match(w) and any(c.isdigit() for c in w) for w in words) or _numeric(words)


def _numeric(words: list[str]) -> bool:
    """A number or measure among the words, unless it ends a name ("Apollo 11")."""
    numeric = [i for i, w in enumerate(words) if _is_number(w)]
    if not numeric:
        return False
    ends_a_name = numeric == [len(words) - 1] and len(words) > 1 and words[-1].isdigit()
    named = [w for w in words[:-1] if w.casefold() not in _FUNCTION_WORDS]  # "The 1970"
    if named == words[:1] and len(named[0]) == 1:
        return True  # a parameter and its value ("M 32"), not a name and its number
    return not ends_a_name or not named or not words[0][:1].isupper()


def _is_number(word: str) -> bool:
    letters = sum(ch.isalpha() for ch in word)
    return bool(_MEASURE.match(word)) or (any(ch.isdigit() for ch in word) and letters <= 1)


def retyped(surface: str, label: str, following: str = "") -> str:
    """``label``, or the type the span's head noun says (`_HEADS`) when it contradicts it:
    its last word, the first of an "X of Y" institution ("Association of Pickers of …"), or
    a lower-case head noun right after a name of several words (``following``: "the Kertha
    Gosa pavilion")."""
    words = surface.split()
    if len(words) < 2 or label not in _CORRECTABLE:
        return label
    head = _HEADS.get(words[-1].strip(".,;:'’\"”").casefold())
    if head is not None:
        return head
    first = words[1] if words[0].casefold() == "the" else words[0]
    if "of" in words and first.casefold() in _INSTITUTION_HEADS:
        return "ORG"
    if following.islower() and label in _MODIFIER_CORRECTABLE:
        return _HEADS.get(following, label)
    return label


def shaped_label(surface: str, label: str) -> str:
    """``label``, or `UNTYPED` for a person or place whose words are not shaped like such a
    name's: each a capital then lower-case letters (initials and particles allowed)."""
    if label not in _SHAPED:
        return label
    words = surface.split()
    if label == "NORP" and not words[-1].casefold().endswith(_NORP_ENDINGS):
        return UNTYPED
    if label == "PERSON" and any(w.casefold() in _FUNCTION_WORDS and w[0].isupper() for w in words):
        return UNTYPED
    if label == "PERSON" and "of" in words and words[0].casefold() in _INSTITUTION_HEADS:
        return UNTYPED  # "Association of Pickers of …": no cue makes it a person
    for word in words:
        if word.casefold() in _PARTICLES:
            continue
        if not _NAME_WORD.match(word) or not word[0].isupper():
            return UNTYPED
        letters = [ch for ch in word if ch.isalpha()]
        if len(letters) > 1 and any(ch.isupper() for ch in letters[1:]) and "." not in word:
            return UNTYPED
    return label
