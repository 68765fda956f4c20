"""The wording cues the rules planner reads: question form, names, aggregation, comparison
and bridge phrasing. Plain regular expressions over the question text, no model."""

from __future__ import annotations

import re

#: A question that opens with an auxiliary verb asks yes or no ("Are both …", "Did …").
_YES_NO = re.compile(
    r"^\s*(am|is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|may|might|"
    r"must)"
    r"\b",
    re.IGNORECASE,
)
_WH = re.compile(r"^\s*(what|which|who|whom|whose|where|when|why|how|in what|in which)\b", re.I)
#: Whole-corpus asks: themes, summaries, lists of everything, counts across documents.
AGGREGATION = re.compile(
    r"\b(main|key|common|recurring|overall|major) (themes?|topics?|points?|ideas?|trends?|"
    r"subjects?|rules?|policies|changes|differences)\b"
    r"|\bsummari[sz]e\b|\bsummary of\b|\boverview of\b|\bin (general|summary|total)\b"
    r"|\b(list|name|enumerate) (all|every|each)\b|\b(all|every) (the )?(documents?|policies|"
    r"rules|settings|options|limits|deadlines|requirements|places|sections)\b"
    r"|\bacross (all|the|every)\b|\banywhere\b|\bcorpus\b"
    r"|\bthroughout the (docs|documentation|documents|handbook|corpus)\b"
    r"|\bwhat (do|does) (the|these|all) (documents?|sources?|files?|handbook|docs?)\b"
    r"|\bhow many (documents?|policies|sources?|files?)\b|\bwhich (documents?|files?|policies)\b",
    re.IGNORECASE,
)
#: Two things set side by side: "…, X or Y?", "…: X or Y?", "both", "the same", "older",
#: "highest … or", a question ending in two names joined by "or".
COMPARISON = re.compile(
    r"[,:]\s*[^,:?]+\bor\b[^?]+\?\s*$|\bboth\b|\bthe same\b|\bin common\b|\bdifferent\b"
    r"|\b(older|younger|earlier|later|first|longer|shorter|larger|smaller|bigger|taller|"
    r"higher|lower|more|fewer|less|most|least|farther|closer|"
    r"highest|lowest|largest|smallest|biggest|greatest|oldest|youngest|earliest|latest)\b.*\bor\b"
    r"|(?-i:\b[A-Z][\w'’.-]*\s+or\s+(the\s+)?[A-Z][\w'’.-]*(\s+[A-Z][\w'’.-]*)*\s*\??\s*$)"
    r"|\bcompared? (to|with)\b|\bcomparison\b|\bwhich (one|of the two)\b",
    re.IGNORECASE,
)
#: A question that reaches an answer through something it only describes ("the woman who
#: portrayed …", "the director of …", "the band whose …").
BRIDGE = re.compile(
    r"\b(the|a|an|this|that)\s+(\w+\s+){0,3}?(who|whom|whose|which|that|where)\s+\w+",
    re.IGNORECASE,
)
#: A described thing of a name: "the director of Kiss and Tell", "the capital of France".
OF_NAME = re.compile(r"\b[Tt]he\s+[a-z]+(\s+[a-z]+)?\s+of\s+(the\s+)?[A-Z\"“]\w*")
#: A name: capitalized words (lower-case joiners allowed inside), an acronym, or a quoted title.
_NAME = re.compile(
    r"[\"“][^\"”]{2,}[\"”]"
    r"|\b(?:[A-Z][\w'’.&-]*|[0-9]+[A-Z][\w-]*)"
    r"(?:\s+(?:(?:of|the|and|de|von|van|da|la|del|for|in|on)\s+)*[A-Z][\w'’.&-]*)*"
)
#: Words that open a sentence without naming anything (a contraction's first part counts:
#: "What's", "Where'd").
_OPENERS = frozenset(
    "what which who whom whose where when why how in on at for of from to by with the a an "
    "this that these those both either neither name list give tell describe summarize "
    "summarise am is are was were do does did can could has have had will would should may "
    "might must there it its their his her my we our you your if before after once while "
    "during since until unless because although though besides apart say suppose and but or "
    "so".split()
)
#: The first-person pronoun, capitalized everywhere, and its contractions: no name ("How
#: do I ...", "I'm", "I'd"), unless it opens a longer capitalized title ("I'd Come for You").
_PRONOUN_I = re.compile(r"I(['’](m|d|ve|ll))?")


def is_yes_no(question: str) -> bool:
    return _YES_NO.match(question) is not None


def is_question(question: str) -> bool:
    """A question (a wh-word, an auxiliary first, or a question mark), not a statement or a
    keyword query."""
    text = question.strip()
    return text.endswith("?") or _WH.match(text) is not None or is_yes_no(text)


def names(question: str) -> list[str]:
    """The names a question mentions. A capitalized first word is a name's only when it is
    not a question or function word ("Which", "The", "Are", "What's", "If" name nothing;
    "Tysons" does); the pronoun "I" names nothing ("How do I ...")."""
    found = []
    for match in _NAME.finditer(question):
        text = match.group()
        if match.start() == len(question) - len(question.lstrip(' "“')):
            first, _, rest = text.partition(" ")
            if re.split(r"['’]", first.lower(), maxsplit=1)[0] in _OPENERS:
                text = rest.strip()
        if text and _PRONOUN_I.fullmatch(text) is None:
            found.append(text.strip('"“”'))
    return found


def things(found: list[str]) -> int:
    """How many things ``found`` names: "Skin Yard and Ostava" is one match of the name
    pattern (it joins over "and") but two things side by side."""
    return sum(1 + name.count(" and ") for name in found)


def cue(pattern: re.Pattern[str], question: str) -> str | None:
    """The words of ``question`` that match ``pattern``, for the reason; None without."""
    match = pattern.search(question)
    return " ".join(match.group().split()) if match is not None else None
