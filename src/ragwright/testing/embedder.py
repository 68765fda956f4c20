"""A deterministic embedder for tests: feature hashing of words and their character trigrams.

Texts that share words (or parts of words) get similar vectors, so retrieval tests can assert
rankings without a model. The hash is blake2b, never Python's randomized ``hash()``: the vectors
are the same in every process, on every machine, forever (the fingerprint names the scheme).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError
from ragwright.models import EmbeddingSpace
from ragwright.ports import EmbeddedCount, Vectors

MODEL_NAME = "ragwright-hashing"
DEFAULT_DIMENSION = 256
DEFAULT_MAX_TOKENS = 512
#: Texts embedded between two progress reports of `HashingEmbedder.embed_documents_reporting`.
REPORTED_PART = 16

_SCHEME = "words+trigrams/blake2b-64/signed/v1"
_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_TRIGRAM_WEIGHT = 0.5
# A text without words still gets a unit vector: that of this sentinel feature.
_EMPTY_FEATURE = "\0empty"


@lru_cache(maxsize=1 << 16)
def _feature_hash(feature: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        features.append((word, 1.0))
        padded = f"<{word}>"
        features.extend(("#" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features or [(_EMPTY_FEATURE, 1.0)]


class HashingEmbedder:
    """Deterministic bag-of-words embedder (``Embedder`` and ``TokenCounter``).

    Each lower-cased word adds weight 1, and each of its character trigrams 0.5, at a position
    and with a sign both taken from the feature's blake2b hash; the sum is L2-normalized.
    ``count_tokens`` counts words and punctuation marks; ``max_tokens`` is only advertised (to
    let chunkers size chunks): texts are never truncated.
    """

    def __init__(
        self, dimension: int = DEFAULT_DIMENSION, *, max_tokens: int = DEFAULT_MAX_TOKENS
    ) -> None:
        for name, value in (("dimension", dimension), ("max_tokens", max_tokens)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer; got {value!r}")
        self._dimension = dimension
        self._max_tokens = max_tokens
        fingerprint = hashlib.sha256(f"{MODEL_NAME}|{_SCHEME}|{dimension}".encode()).hexdigest()
        self._space = EmbeddingSpace(
            model=MODEL_NAME,
            dimension=dimension,
            normalized=True,
            metric="cosine",
            fingerprint=fingerprint,
        )

    @classmethod
    def from_spec(cls, argument: str) -> HashingEmbedder:
        """The embedder a ``hashing`` or ``hashing:DIM`` spec names."""
        if not argument:
            return cls()
        if not argument.isdigit():
            raise ConfigError(
                f"the hashing embedder takes a dimension: hashing:256; got {argument!r}"
            )
        return cls(int(argument))

    @property
    def spec(self) -> str:
        if self._dimension == DEFAULT_DIMENSION:
            return "hashing"
        return f"hashing:{self._dimension}"

    @property
    def space(self) -> EmbeddingSpace:
        return self._space

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row] = self._vector(text)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        result: Vectors = vectors / np.maximum(norms, np.float32(1e-12))
        return result

    def embed_documents_reporting(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        """`embed_documents` in parts of `REPORTED_PART` texts, telling ``embedded`` after
        each (a `ReportingEmbedder`, as the ONNX embedder is). Through ``embed_documents``, so
        a test's subclass that overrides it (a slow or refusing fake) is called part by
        part."""
        parts = [
            self._embedded_part(texts[start : start + REPORTED_PART], embedded)
            for start in range(0, len(texts), REPORTED_PART)
        ]
        if not parts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.concatenate(parts)

    def _embedded_part(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        vectors = self.embed_documents(texts)
        embedded(len(texts))
        return vectors

    def embed_query(self, text: str) -> Vectors:
        result: Vectors = self.embed_documents([text])[0]
        return result

    def _vector(self, text: str) -> npt.NDArray[np.float64]:
        features = _features(text)
        hashes = [_feature_hash(feature) for feature, _ in features]
        positions = [hashed % self._dimension for hashed in hashes]
        weights = [
            w if hashed >> 63 else -w for hashed, (_, w) in zip(hashes, features, strict=True)
        ]
        counts = np.bincount(positions, weights=weights, minlength=self._dimension)
        return np.asarray(counts, dtype=np.float64)
