"""`Embedding`: the collection's embedder, made on first use and checked against its space."""

from __future__ import annotations

import threading

from ragwright.embedders import DEFAULT_EMBEDDER, create_embedder
from ragwright.errors import EmbeddingSpaceMismatch
from ragwright.ports import Embedder, IndexSettings


class Embedding:
    """The embedder: the one given, else the one the collection was built with, else the
    offline default. Made on first use (read-only commands never load a model), once even
    when requests on several threads need it together."""

    def __init__(self, store: IndexSettings, choice: Embedder | str | None) -> None:
        self._store = store
        self.choice = choice
        self._made: Embedder | None = choice if not isinstance(choice, str | None) else None
        self._lock = threading.Lock()

    @property
    def spec(self) -> str | None:
        """The embedder the collection was built with, as recorded (None before the first
        ingest)."""
        return self._store.get_setting("embedder")

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._made is None:
                spec = self.choice
                if not isinstance(spec, str):
                    spec = self.spec or DEFAULT_EMBEDDER
                self._made = create_embedder(spec)
            return self._made

    def checked(self) -> Embedder:
        """The embedder, verified to match the space the collection's vectors live in. One
        made from the recorded spec follows a `reindex` swap: it is made again from the new
        one."""
        embedder = self.embedder
        recorded = self._store.space
        if recorded is not None and not recorded.compatible_with(embedder.space):
            if self.choice is None:
                embedder = self.made_again()
            if not recorded.compatible_with(embedder.space):
                raise EmbeddingSpaceMismatch(recorded.describe(), embedder.space.describe())
        return embedder

    def made_again(self) -> Embedder:
        """The embedder, made again from the recorded spec (which a swap changed)."""
        with self._lock:
            self._made = None
        return self.embedder

    def bound(self) -> Embedder:
        """The embedder, with its space recorded as the collection's (or checked against it)."""
        embedder = self.embedder
        self._store.bind_space(embedder.space)
        spec = getattr(embedder, "spec", None)
        if isinstance(spec, str) and self.spec is None:
            self._store.set_setting("embedder", spec)
        return embedder

    def close(self) -> None:
        """Close the embedder this object made (one given is the caller's to close)."""
        close = getattr(self._made, "close", None)
        if self._made is not self.choice and callable(close):
            close()
