"""Every error ragwright raises on purpose.

The tree::

    RagwrightError                  base of everything below; catch this to catch them all
    ├── ConfigError                 a setting, name or argument that cannot work
    │   ├── RegistryError           an unknown or doubly-claimed registry name
    │   └── CredentialsError        a source's secret is missing, or its file readable by others
    ├── MissingDependencyError      an optional extra is not installed (message has the pip line)
    ├── ModelFileRefused            a shipped model file is not the pinned one (its sha256)
    ├── ParseError                  a file could not be read as its format (names file and reason)
    │   └── ParseLimitExceeded      parsing one file ran past a limit (time, memory, nesting)
    │       └── ParseBudgetSpent    a run's time for parsing ran out before this file (skipped)
    ├── OcrError                    the OCR engine failed on a page image
    ├── IngestLimitExceeded         a safety limit refused a file or a batch (size, count, symlink)
    ├── ClusterError                a distributed run's cluster cannot be reached or has no room
    ├── DatasetError                a dataset folder that cannot be read or trusted (names the file)
    ├── StoreError                  the index cannot be opened, read or written
    │   ├── DocumentRefused         no store can hold this document as it is (NUL characters)
    │   ├── StoreUnavailable        the store's server did not answer (down or unreachable): retry
    │   ├── IndexDamaged            a damaged file or not a ragwright index (message names `check`)
    │   │   └── BrokenSetting       a settings row that cannot be read (names it and `repair`)
    │   ├── RepairRefused           `repair` cannot rebuild what `check` found (says what to do)
    │   ├── IndexTooNew             the index was created by a newer ragwright (a newer schema)
    │   ├── EmbeddingSpaceMismatch  the index was built with another embedding model
    │   │   └── EmbeddingSpaceChanged  a reindex swap changed it under a running query
    │   ├── UnknownCollection       the index has no collection of that name
    │   ├── UnsupportedFilter       a filter this store cannot apply (never silently ignored)
    │   └── GraphNotBuilt           graph search on an index without an entity graph
    ├── FilterSyntaxError           a filter expression that does not parse (with position)
    ├── EmbedderError               the embedding model or service failed
    ├── SourceError                 a sync source's server failed or answered unusably (names why)
    ├── RerankerError               the reranking model failed to load or run
    ├── UnsupportedScale            a score threshold asked of a scale it does not fit
    ├── AccessDenied                a restricted caller asked for what it may not read
    ├── LLMError                    the language model's server failed or refused (names why)
    │   ├── LLMResponseError        the server answered something that is not a chat completion
    │   └── CircuitOpen             recent calls failed; calls are refused until a cool-down ends
    ├── BudgetExceeded              a call or token budget ran out (carries what was spent)
    │   └── ExtractionBudgetExceeded    ... during graph extraction (carries the facts found)
    ├── GraphError                  the entity graph cannot do what was asked
    │   ├── UnknownEntity           no entity of that name is in the graph
    │   └── ExtractionError         an extractor's facts do not fit their chunk (spans, names)
    └── FederationError             a federated search cannot give what was asked
        └── MemberUnavailable       a member failed or timed out (strict mode, or all of them)

Messages say what happened and what to do next. Backend failures raise; they never come back as
empty results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class RagwrightError(Exception):
    """Base class of every error ragwright raises on purpose."""


class ConfigError(RagwrightError):
    """A setting, name or argument that cannot work."""


class RegistryError(ConfigError):
    """An unknown registry name, or two plugins claiming the same one."""


class CredentialsError(ConfigError):
    """A sync source's secret that cannot be used: its environment variable is unset, its file
    is missing or readable by the group or others (it must be mode 0600 or stricter), or it
    was written into the configuration file itself."""


class MissingDependencyError(RagwrightError):
    """An optional dependency is missing; the message carries the install line."""

    def __init__(self, what: str, install: str) -> None:
        super().__init__(f"{what} needs an optional dependency: {install}")
        self.install = install


class ModelFileRefused(RagwrightError):
    """A model file read from an installed package (weights, a tokenizer) whose sha256 is not
    the one ragwright pins: changed on disk, or from another release of the package. It is
    never loaded; the message names the file and the line that reinstalls the pinned release."""

    def __init__(self, path: str, expected: str, found: str, install: str) -> None:
        super().__init__(
            f"refusing the model file {path}: its sha256 is {found[:16]}…, not the pinned "
            f"{expected[:16]}… (the file was changed, or the package is another release); "
            f"reinstall it: {install}"
        )
        self.path, self.expected, self.found, self.install = path, expected, found, install


class ParseError(RagwrightError):
    """A file could not be parsed. Carries the file and the reason."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"cannot parse {source}: {reason}")
        self.source = source
        self.reason = reason


class ParseLimitExceeded(ParseError):
    """Parsing one file ran past a limit: the per-file time or memory limit, or one of the
    parser's own (an HTML page nested too deep). The file is skipped."""


class ParseBudgetSpent(ParseLimitExceeded):
    """The time a run may spend parsing, all files together (an upload's), was spent on the
    files before this one: it was not read, and is reported as skipped."""


class OcrError(RagwrightError):
    """The OCR engine failed to read a page image (it crashed, timed out or refused it)."""


class IngestLimitExceeded(RagwrightError):
    """A safety limit refused a file or a batch."""


class ClusterError(RagwrightError):
    """A distributed ingest cannot run: the Ray cluster cannot be reached, has too few CPUs
    for the workers asked for, or its workers did not start (or all died). The message says
    what the cluster has and what to change."""


class DatasetError(RagwrightError):
    """A rag-connector dataset folder that is missing, malformed or fails its hash checks;
    the message names the file."""


class StoreError(RagwrightError):
    """The index cannot be opened, read or written."""


class StoreUnavailable(StoreError):
    """The store's server did not answer within the retry time (stopped, unreachable, every
    connection busy): nothing is wrong with the request or the index, and the same call may
    succeed later. HTTP answers 503 ``store_unavailable``."""


class DocumentRefused(StoreError):
    """A document no store can hold as it is: a NUL character in its text, source or metadata
    (PostgreSQL's text and jsonb cannot hold one, so SQLite refuses it too). Carries the
    document's source and the reason; ingest reports that document and writes the rest of its
    batch."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"cannot store {source}: {reason}")
        self.source = source
        self.reason = reason


class IndexDamaged(StoreError):
    """The index file is damaged (a corrupt page, a truncated or 0-byte file) or is not a
    ragwright index at all. The message names the file and what SQLite found, and sends the
    user to `ragwright check`, which says what can be repaired."""

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(
            f"the index at {location} is damaged or is not a ragwright index ({reason}). "
            "Run `ragwright check` to see what is wrong and whether `ragwright repair` can fix "
            "it; otherwise re-ingest from the sources into a new index."
        )
        self.location = location
        self.reason = reason


class BrokenSetting(IndexDamaged):
    """A settings row of the index that cannot be read: broken JSON, or a value of the wrong
    type or shape (``key`` names the row). `ragwright check` names it, and `ragwright repair`
    restores it (the embedding space, from the recorded embedder) or resets it."""

    #: What to do, as the message says it (PostgreSQL's says otherwise for a row `repair`
    #: cannot restore there).
    REMEDY = "`ragwright repair` to restore or reset it"

    def __init__(self, location: str | None, key: str, reason: str, remedy: str = REMEDY) -> None:
        where = "the index" if location is None else f"the index at {location}"
        StoreError.__init__(
            self,
            f"{where} has a broken setting {key!r} ({reason}). Run `ragwright check` to see "
            f"what is wrong and {remedy}.",
        )
        self.location = location or ""
        self.reason = reason
        self.key = key


class RepairRefused(StoreError):
    """`ragwright repair` found damage it cannot rebuild from the stored text (a damaged table
    page, chunks whose offsets no longer fit their document, vectors of the wrong size)."""

    def __init__(self, location: str, problems: list[str]) -> None:
        super().__init__(
            f"`ragwright repair` cannot fix the index at {location}: {'; '.join(problems)}. It "
            "rebuilds only what is derived from the stored text (the keyword index). Re-ingest "
            "the sources into a new index (`ragwright ingest PATH --index NEW_DIR`), or copy "
            "what is still readable into one with `ragwright migrate OLD NEW`."
        )
        self.location = location
        self.problems = problems


class IndexTooNew(StoreError):
    """The index was created by a newer ragwright (its schema version is above this one's)."""

    def __init__(self, location: str, found: int, supported: int) -> None:
        super().__init__(
            f"the index at {location} was created by a newer ragwright (schema version {found}; "
            f"this one reads versions up to {supported}): upgrade ragwright to open it"
        )
        self.location = location
        self.found = found


class EmbeddingSpaceMismatch(StoreError):
    """The index was built in another embedding space than the embedder offered."""

    def __init__(self, index_space: str, offered_space: str) -> None:
        super().__init__(
            f"this index holds vectors from {index_space}, but the embedder is {offered_space}. "
            "Vectors from different models cannot be compared. Either use the index's embedder "
            "(omit --embedder to use the recorded one) or move the index to the new one, "
            "without downtime, from its stored text: `ragwright reindex --embedder NAME`."
        )
        self.index_space = index_space
        self.offered_space = offered_space


class EmbeddingSpaceChanged(EmbeddingSpaceMismatch):
    """The index's space changed (a `reindex` swap) after the query was embedded: embed it
    again with the index's new embedder."""


class UnknownCollection(StoreError):
    """The index has no collection of that name (the message says how to create it)."""


class UnsupportedFilter(StoreError):
    """A filter the store cannot apply, raised instead of ignoring it; or one no store can
    apply, raised as it is built (an argument of the wrong type, a NUL in a field or value,
    an ``and`` of nothing: `ragwright.filters`)."""


class GraphNotBuilt(StoreError):
    """Graph search asked of an index (or a store) with no entity graph, or an empty one:
    the message says to run ``ragwright graph build``."""


class FilterSyntaxError(RagwrightError):
    """A filter expression that does not parse."""

    def __init__(self, expression: str, position: int, reason: str) -> None:
        pointer = " " * position + "^"
        # Lone surrogates shown as U+FFFD (same length): the message must encode as UTF-8.
        shown = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in expression)
        super().__init__(f"{reason} at position {position}:\n  {shown}\n  {pointer}")
        self.expression = expression
        self.position = position


class EmbedderError(RagwrightError):
    """The embedding model or service failed."""


class SourceError(RagwrightError):
    """A sync source (a website, an object store, an API) failed or answered something that
    cannot be used, such as a GraphQL response whose ``errors`` array is not empty. The
    message names the source and why; nothing is pruned after it."""


class RerankerError(RagwrightError):
    """The reranking model failed to load or run (its message names the model and the cause)."""


class UnsupportedScale(RagwrightError):
    """A similarity threshold was asked of a score scale it does not fit (e.g. fused ranks)."""


class AccessDenied(RagwrightError):
    """A caller bound to principals (``--as``, an API key's, an MCP server's) asked for
    something that would show text or counts of documents it may not read: a view built from
    every document (community reports, the entity graph). Nothing of it is returned."""


class LLMError(RagwrightError):
    """The language model's server failed (after retries) or refused the request."""


class LLMResponseError(LLMError):
    """The server answered, but not with a chat completion (malformed JSON, missing fields)."""


class CircuitOpen(LLMError):
    """Calls to a server are refused for a while because its recent calls kept failing."""

    def __init__(self, server: str, failures: int, retry_in: float) -> None:
        super().__init__(
            f"{server} failed {failures} times in a row; calls are paused for another "
            f"{retry_in:.1f}s (the circuit breaker is open). Check that the server is up."
        )
        self.server = server
        self.retry_in = retry_in


class BudgetExceeded(RagwrightError):
    """A call or token budget ran out. ``calls`` and ``tokens`` are what was spent."""

    def __init__(self, reason: str, *, calls: int = 0, tokens: int = 0) -> None:
        super().__init__(f"{reason} (spent so far: {calls} LLM calls, {tokens} tokens)")
        self.reason = reason
        self.calls = calls
        self.tokens = tokens


class ExtractionBudgetExceeded(BudgetExceeded):
    """The budget ran out during graph extraction. ``facts`` are those of the chunks extracted
    before it did, in input order: write them, and a later run (with more budget) goes on
    from there; the response cache answers again whatever was asked already."""

    # ``facts`` are `ragwright.models.graph.ChunkFacts`, not named here: the error tree sits
    # below the models, which raise its errors.
    def __init__(self, cause: BudgetExceeded, facts: Sequence[Any], total: int) -> None:
        super().__init__(
            f"graph extraction stopped after {len(facts)} of {total} chunks: {cause.reason}",
            calls=cause.calls,
            tokens=cause.tokens,
        )
        self.facts = tuple(facts)


class GraphError(RagwrightError):
    """The entity graph cannot do what was asked."""


class UnknownEntity(GraphError):
    """No entity of that name (or key) is in the graph."""


class ExtractionError(GraphError):
    """An extractor returned facts that do not fit their chunk: a mention whose span is not
    its text, a chunk it was not given. A bug in the extractor, never stored."""


class FederationError(RagwrightError):
    """A federated search (several indexes searched as one) cannot give what was asked."""


class MemberUnavailable(FederationError):
    """A member of a federation failed or ran past its timeout, where partial results will not
    do: in strict mode, or when no member answered. ``failures`` maps each failed member's name
    to why."""

    def __init__(self, failures: dict[str, str], consequence: str) -> None:
        reasons = "; ".join(f"index {name}: {why}" for name, why in failures.items())
        super().__init__(f"{reasons}; {consequence}")
        self.failures = dict(failures)
