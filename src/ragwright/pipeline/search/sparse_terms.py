"""The sparse learned-term arm: the chunks' term weights built from their stored text, and the
arm a search runs.

Term weights are derived from the stored chunk text, like a reindex's vectors (no parsing, no
source access): `SparseTerms.update` encodes the chunks that have none yet, one batch per
store transaction, so a killed run resumes where it stopped and an ingest only pays for the
chunks it wrote. A chunk's weights are deleted with the chunk, in its transaction, so a search
never sees a removed chunk's terms; a chunk written but not yet encoded is missing from the
sparse arm (never from the others) until the next update, which every ingest of an index with
a sparse encoder runs right after its writes.

The encoder an index's weights come from is recorded (``sparse_encoder``, its spec, and
``sparse_fingerprint``, the model's digest): weights of two models never mix, and searching
with another model is refused (a `ConfigError` saying what to do).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragwright.errors import ConfigError
from ragwright.filters import Filter
from ragwright.models import Hit
from ragwright.ports import IndexSettings, SparseEncoder, SparseSearch, SparseTermIndex
from ragwright.sparse import create_sparse_encoder

#: Index settings naming the encoder the stored weights come from.
ENCODER_SETTING = "sparse_encoder"
FINGERPRINT_SETTING = "sparse_fingerprint"
#: Chunks encoded and written per transaction.
BATCH = 64


@dataclass(frozen=True)
class SparseArm:
    """What a `Retriever` runs for the sparse arm: the query's weights against the store's."""

    store: SparseSearch
    encoder: SparseEncoder

    def search(self, text: str, top_k: int, where: Filter | None) -> list[Hit]:
        if top_k <= 0 or not text.strip():
            return []
        return self.store.sparse_search(self.encoder.encode_query(text), top_k, where)


class SparseTerms:
    """Keeps a store's chunk term weights for one encoder."""

    def __init__(
        self, index: SparseTermIndex, settings: IndexSettings, encoder: SparseEncoder
    ) -> None:
        self.index = index
        self.settings = settings
        self.encoder = encoder

    def bind(self) -> None:
        """Record the encoder as the index's; weights of another model are dropped first (they
        are not comparable), so the next `update` encodes every chunk with this one."""
        spec, fingerprint = self.encoder.spec, self.encoder.fingerprint
        if self.settings.get_setting(FINGERPRINT_SETTING) not in (None, fingerprint):
            self.index.clear_terms()
        self.settings.set_setting(ENCODER_SETTING, spec)
        self.settings.set_setting(FINGERPRINT_SETTING, fingerprint)

    def update(self, progress: Callable[[int], None] | None = None) -> int:
        """Encode and write the chunks without weights, in batches; returns how many."""
        done = 0
        while batch := self.index.chunks_without_terms(BATCH):
            vectors = self.encoder.encode_documents([text for _, text in batch])
            self.index.write_terms(
                [(chunk_id, vector) for (chunk_id, _), vector in zip(batch, vectors, strict=True)]
            )
            done += len(batch)
            if progress is not None:
                progress(done)
        return done


def recorded_encoder(settings: IndexSettings) -> str | None:
    """The spec of the encoder the index's weights come from (None: no sparse arm)."""
    return settings.get_setting(ENCODER_SETTING)


def check_fingerprint(settings: IndexSettings, encoder: SparseEncoder) -> None:
    """Refuse an encoder whose model is not the one the stored weights come from."""
    recorded = settings.get_setting(FINGERPRINT_SETTING)
    if recorded is not None and recorded != encoder.fingerprint:
        raise ConfigError(
            f"the sparse encoder {encoder.spec} is not the model the index's term weights come "
            f"from ({settings.get_setting(ENCODER_SETTING)}); rebuild them with ragwright "
            f"ingest --sparse {encoder.spec}"
        )


class SparseWorkflow:
    """The sparse arm of one index (what `Index` delegates to): building the weights, keeping
    them current after an ingest, and the arm a request runs."""

    def __init__(self, store: IndexSettings, location: str) -> None:
        self.store = store
        self.location = location
        self._encoder: SparseEncoder | None = None

    def build(self, encoder: SparseEncoder | str | None = None) -> int:
        """Encode the chunks without weights with ``encoder`` (a `SparseEncoder` or a spec such
        as ``splade:FOLDER``), which becomes the index's (weights of another model are dropped
        first); by default the recorded one. Returns how many chunks were encoded."""
        choice = encoder if encoder is not None else recorded_encoder(self.store)
        if choice is None:
            raise ConfigError(
                "no sparse encoder given or recorded; pass one, e.g. splade:/path/to/model"
            )
        made = create_sparse_encoder(choice) if isinstance(choice, str) else choice
        terms = SparseTerms(self._index(), self.store, made)
        terms.bind()
        self._encoder = made
        return terms.update()

    @property
    def available(self) -> bool:
        """Whether the index has sparse term weights (built with ``ingest --sparse``)."""
        return recorded_encoder(self.store) is not None

    def complete(self) -> None:
        """After an ingest: encode what it wrote, when the index has a sparse arm."""
        if recorded_encoder(self.store) is not None:
            SparseTerms(self._index(), self.store, self._recorded()).update()

    def arm(self, runs: bool) -> SparseArm | None:
        """The arm, for a search that ``runs`` it; None when it runs none, or when the index
        has none (the retriever then refuses a request that needs it, saying how to build
        it)."""
        if not runs or recorded_encoder(self.store) is None:
            return None
        if not isinstance(self.store, SparseSearch):
            raise ConfigError(f"the store at {self.location} has no sparse arm")
        return SparseArm(self.store, self._recorded())

    def _index(self) -> SparseTermIndex:
        if not isinstance(self.store, SparseTermIndex):
            raise ConfigError(f"the store at {self.location} keeps no sparse term weights")
        return self.store

    def _recorded(self) -> SparseEncoder:
        if self._encoder is None:
            spec = recorded_encoder(self.store)
            if spec is None:
                raise ConfigError("the index has no sparse term weights (ingest --sparse)")
            encoder = create_sparse_encoder(spec)
            check_fingerprint(self.store, encoder)
            self._encoder = encoder
        return self._encoder
