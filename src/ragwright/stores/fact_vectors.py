"""Fact vectors' checks and rows, the same for every store.

A fact vector is kept like a chunk vector: float32, little-endian, checked against the
collection's recorded space before it is written or read (another space is an
`EmbeddingSpaceMismatch`, never a silent comparison). Each row carries its space's key, so
the rows a `reindex` swap left in the old space are never read and count as missing (the
next `graph build` embeds them again).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.errors import EmbeddingSpaceMismatch, StoreError
from ragwright.models import EmbeddingSpace
from ragwright.models.graph import FactVectors, StatedFact, TypedFact
from ragwright.stores.rows import space_json
from ragwright.stores.writes import bound_space

Float32s = npt.NDArray[np.float32]
#: (source, label, target, vector bytes)
FactVectorRow = tuple[str, str, str, bytes]


def space_key(space: EmbeddingSpace) -> str:
    """A short key naming ``space`` in each fact vector's row."""
    return hashlib.sha256(space_json(space).encode()).hexdigest()[:16]


def checked_space(recorded: EmbeddingSpace | None, space: EmbeddingSpace) -> EmbeddingSpace:
    """``space``, when it is the collection's recorded one."""
    bound = bound_space(recorded)
    if not bound.compatible_with(space):
        raise EmbeddingSpaceMismatch(bound.describe(), space.describe())
    return bound


def vector_blobs(
    space: EmbeddingSpace, facts: Sequence[StatedFact], vectors: npt.ArrayLike
) -> list[bytes]:
    """Each fact's vector as stored, after the checks a chunk vector has: the space's shape,
    finite values."""
    array = np.asarray(vectors, dtype="<f4")
    if array.shape != (len(facts), space.dimension):
        raise StoreError(
            f"{len(facts)} facts need vectors of shape ({len(facts)}, {space.dimension}), "
            f"got {array.shape}"
        )
    if not np.isfinite(array).all():
        raise StoreError("fact vectors contain NaN or infinity")
    return [row.tobytes() for row in array]


def fact_vectors_from_rows(
    version: str, rows: Iterable[FactVectorRow], space: EmbeddingSpace
) -> FactVectors:
    facts: list[TypedFact] = []
    blobs: list[bytes] = []
    for source, label, target, blob in rows:
        facts.append(TypedFact(source, label, target))
        blobs.append(bytes(blob))
    matrix: Float32s = (
        np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), space.dimension)
        if blobs
        else np.zeros((0, space.dimension), np.float32)
    )
    return FactVectors(version, tuple(facts), matrix.astype(np.float32))
