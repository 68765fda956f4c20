"""What every LLM engine does last: stream the final call through the marker filter, then turn
the text into an `Answer` with resolved citations."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.answers.citations import MarkerFilter, listed_markers, resolve
from ragwright.llms.prompt import NOT_FOUND, Source
from ragwright.models import Answer, Hit
from ragwright.ports import LLM, ChatMessage, Completion


def written(
    llm: LLM,
    messages: Sequence[ChatMessage],
    sources: Sequence[Source],
    *,
    engine: str,
    max_tokens: int,
    warnings: Sequence[str] = (),
) -> Iterator[str | Answer]:
    """The streamed reply to ``messages`` (markers naming no source dropped), then its Answer."""
    markers = MarkerFilter(source.number for source in sources)
    pieces: list[str] = []
    for item in llm.stream(messages, max_tokens=max_tokens, temperature=0.0):
        text = "" if isinstance(item, Completion) else markers.feed(item)
        if text:
            pieces.append(text)
            yield text
    rest = markers.flush()
    if rest:
        pieces.append(rest)
        yield rest
    yield compose("".join(pieces), sources, engine, llm.model, markers.removed, warnings)


def compose(
    text: str,
    sources: Sequence[Source],
    engine: str,
    model: str,
    removed: Sequence[int] = (),
    warnings: Sequence[str] = (),
) -> Answer:
    """The Answer for a final ``text`` whose markers all name ``sources``."""
    resolution = resolve(text, sources)
    notes = list(warnings)
    if removed:
        notes.append(f"removed citations of sources that do not exist: {listed_markers(removed)}")
    notes += resolution.warnings
    stripped = text.strip()
    if not stripped:
        notes.append("the model returned no text")
    return Answer(
        text=text,
        citations=resolution.citations,
        hits=tuple(source.hit for source in sources),
        found=bool(stripped) and not stripped.startswith(NOT_FOUND[:-1]),
        engine=engine,
        model=model,
        removed_citations=tuple(removed),
        unsupported=resolution.unsupported,
        warnings=tuple(notes),
    )


def not_found(hits: Sequence[Hit], engine: str, model: str | None) -> Iterator[str | Answer]:
    """The answer when there is nothing to answer from: no LLM call."""
    yield NOT_FOUND
    yield Answer(NOT_FOUND, (), tuple(hits), found=False, engine=engine, model=model)
