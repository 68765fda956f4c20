"""A synthetic collection for scale benchmarks: made-up words with Zipf-like frequencies and
topics, documents of ten chunks with a ``bucket`` (1% each) and a ``year`` in their metadata."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import numpy as np

from ragwright.models import Chunk, Document, chunk_id_for

CHUNKS_PER_DOCUMENT = 10
BUCKETS = 100  # metadata bucket = document number % 100: `bucket = 7` selects 1%


class Words:
    """A made-up vocabulary with Zipf-like frequencies, and topics: each topic has its own
    words, and a text is mostly words of one topic (as real text is), so that its vector sits
    near those of its topic rather than in a uniform random cloud."""

    def __init__(self, size: int, topics: int, seed: int) -> None:
        rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ne", "tu", "ra", "si", "po", "be", "da", "ver", "gen"]
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choices(syllables, k=rng.randint(2, 4))))
        # Sorted first: a set's order follows the process's string hash seed, so the words'
        # topics (and every text and query) would differ from one process to the next.
        self.words = sorted(sorted(words), key=lambda w: rng.random())
        self.cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(size)))
        per_topic = size // topics
        self.topics = [self.words[t * per_topic : (t + 1) * per_topic] for t in range(topics)]
        self.topic_cumulative = list(
            itertools.accumulate(1.0 / (rank + 1) for rank in range(per_topic))
        )
        self.rng = rng

    def text(self, count: int, topic: int | None = None, share: float = 0.7) -> str:
        """``count`` words; with a topic, ``share`` of them from the topic's words."""
        if topic is None:
            return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=count))
        local = sum(self.rng.random() < share for _ in range(count))
        chosen = self.rng.choices(self.topics[topic], cum_weights=self.topic_cumulative, k=local)
        chosen += self.rng.choices(self.words, cum_weights=self.cumulative, k=count - local)
        self.rng.shuffle(chosen)
        return " ".join(chosen)


def corpus(chunks: int, words: Words) -> list[tuple[Document, list[Chunk]]]:
    return list(documents(chunks, words))


def documents(
    chunks: int, words: Words, lengths: tuple[int, int] = (15, 60)
) -> Iterator[tuple[Document, list[Chunk]]]:
    """Documents of `CHUNKS_PER_DOCUMENT` chunks of ``lengths`` words, one at a time."""
    for number in range(max(1, chunks // CHUNKS_PER_DOCUMENT)):
        topic = words.rng.randrange(len(words.topics))
        texts = [words.text(words.rng.randint(*lengths), topic) for _ in range(CHUNKS_PER_DOCUMENT)]
        content = "\n\n".join(texts)
        metadata = {"bucket": number % BUCKETS, "year": 2000 + number % 25}
        document = Document.from_text(f"synthetic/{number:07d}.txt", content, metadata)
        pieces, start = [], 0
        for index, text in enumerate(texts):
            pieces.append(
                Chunk(chunk_id_for(document.id, start, text), document.id, index, text,
                      start, start + len(text))
            )  # fmt: skip
            start += len(text) + 2
        yield document, pieces


def bulk_documents(
    chunks: int, words: Words, lengths: tuple[int, int], seed: int = 1
) -> Iterator[tuple[Document, list[Chunk], int]]:
    """Like `documents` (the same vocabulary, topics and shares), drawn with numpy so that a
    million chunks take a minute rather than most of an hour; also yields each topic."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array(words.words, dtype=object)
    overall = 1.0 / np.arange(1, len(words.words) + 1)
    overall = np.cumsum(overall / overall.sum())
    per_topic = len(words.topics[0])
    local = 1.0 / np.arange(1, per_topic + 1)
    local = np.cumsum(local / local.sum())
    topic_words = [np.array(t, dtype=object) for t in words.topics]
    for number in range(max(1, chunks // CHUNKS_PER_DOCUMENT)):
        topic = int(rng.integers(len(words.topics)))
        sizes = rng.integers(lengths[0], lengths[1] + 1, size=CHUNKS_PER_DOCUMENT)
        total = int(sizes.sum())
        drawn = vocabulary[
            np.minimum(np.searchsorted(overall, rng.random(total)), overall.size - 1)
        ]
        mine = rng.random(total) < 0.7
        picks = np.searchsorted(local, rng.random(int(mine.sum())))
        drawn[mine] = topic_words[topic][np.minimum(picks, per_topic - 1)]
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        texts = [" ".join(drawn[a:b]) for a, b in itertools.pairwise(bounds)]
        content = "\n\n".join(texts)
        metadata = {"bucket": number % BUCKETS, "year": 2000 + number % 25}
        document = Document.from_text(f"synthetic/{number:07d}.txt", content, metadata)
        pieces, start = [], 0
        for index, text in enumerate(texts):
            pieces.append(
                Chunk(chunk_id_for(document.id, start, text), document.id, index, text,
                      start, start + len(text))
            )  # fmt: skip
            start += len(text) + 2
        yield document, pieces, topic


def bucket_of(source: str) -> int:
    """The ``bucket`` of the document whose source is ``source`` (``synthetic/NNNNNNN.txt``)."""
    return int(source.rsplit("/", 1)[-1].split(".", 1)[0]) % BUCKETS
