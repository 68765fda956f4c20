"""A SPLADE-style sparse encoder on a user-supplied ONNX masked-language model.

The model takes BERT-style inputs and returns per-token logits over its vocabulary, shape
``(batch, tokens, vocabulary)`` (an ``optimum-cli export onnx --task fill-mask`` export of a
SPLADE checkpoint, for instance). A text's weight for term ``j`` is
``max over its tokens t of log(1 + relu(logits[t, j]))`` (SPLADE's max pooling, Formal et al.,
2021), padding masked out; the non-zero weights are the text's `SparseVector`. Queries and
documents are encoded alike (SPLADE's symmetric variant).

No such model ships with ragwright or on PyPI: point ``splade:FOLDER`` at a folder holding
``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``. Nothing loads until the first
text is encoded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragwright._lazy import Lazy
from ragwright.embedders.onnx import bert_feeds, read_tokenizers
from ragwright.embedders.onnx_session import BertSession, model_in_folder, open_bert_session
from ragwright.errors import ConfigError, EmbedderError
from ragwright.models.sparse import SparseVector

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

_WHAT = "the SPLADE encoder"


@dataclass(frozen=True)
class _Runtime:
    graph: BertSession
    tokenizer: Tokenizer  # truncates at max_tokens, never pads
    pad_id: int


class SpladeEncoder:
    """Texts to learned term weights; a `SparseEncoder`. ``max_tokens`` bounds each text's
    tokens (special tokens included), ``batch_size`` how many texts run at once, ``threads``
    onnxruntime's intra-op threads (``None``: one per core)."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        max_tokens: int = 256,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        self.folder = Path(folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise ConfigError(
                f"{self.folder} is not a folder; {_WHAT} expects a folder holding model.onnx "
                "and tokenizer.json (an ONNX export of a SPLADE model)"
            )
        self.model_path = model_in_folder(self.folder)
        self.tokenizer_path = self.folder / "tokenizer.json"
        missing = [str(p) for p in (self.model_path, self.tokenizer_path) if not p.is_file()]
        if missing:
            raise ConfigError(f"{_WHAT} cannot find {' and '.join(missing)}")
        for name, value in (("max_tokens", max_tokens), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{_WHAT}: {name} must be a positive integer, got {value!r}")
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads
        self._runtime = Lazy(self._open)

    @classmethod
    def from_spec(cls, argument: str) -> SpladeEncoder:
        """``splade:FOLDER``."""
        if not argument.strip():
            raise ConfigError("the splade sparse encoder needs a folder: splade:/path/to/model")
        return cls(argument.strip())

    @property
    def spec(self) -> str:
        """The string that recreates it (what an index records)."""
        return f"splade:{self.folder}"

    @property
    def fingerprint(self) -> str:
        """The model and tokenizer bytes' digest: weights from another model are not comparable."""
        digest = hashlib.sha256()
        for path in (self.model_path, self.tokenizer_path):
            digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    def __repr__(self) -> str:
        return f"SpladeEncoder({str(self.folder)!r}, max_tokens={self.max_tokens})"

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        if isinstance(texts, str):
            raise TypeError("encode_documents takes a sequence of texts, not one string")
        runtime = self._runtime.get()
        vectors: list[SparseVector] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            vectors.extend(self._run(runtime, batch))
        return vectors

    def encode_query(self, text: str) -> SparseVector:
        (vector,) = self.encode_documents([text])
        return vector

    def _run(self, runtime: _Runtime, texts: list[str]) -> list[SparseVector]:
        encodings = _encode(runtime.tokenizer, texts)
        graph = runtime.graph
        feeds, mask = bert_feeds(encodings, runtime.pad_id, graph.input_names, graph.input_dtypes)
        try:
            (logits,) = graph.session.run([graph.output_name], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped exceptions
            raise EmbedderError(f"onnxruntime failed on {len(texts)} texts: {exc}") from exc
        logits = np.asarray(logits, dtype=np.float32)
        if logits.ndim != 3 or logits.shape[:2] != mask.shape:
            raise EmbedderError(
                f"{self.model_path} returned logits of shape {logits.shape}; a SPLADE model "
                f"returns (texts, tokens, vocabulary), here ({mask.shape[0]}, {mask.shape[1]}, V)"
            )
        weights = np.log1p(np.maximum(logits, 0.0)) * mask[:, :, None]
        pooled = weights.max(axis=1)
        if not np.isfinite(pooled).all():
            raise EmbedderError(f"{self.model_path} produced non-finite term weights")
        return [SparseVector.from_dense(row) for row in pooled]

    def _open(self) -> _Runtime:
        tokenizers = read_tokenizers(self.tokenizer_path, self.max_tokens)
        graph = open_bert_session(
            self.model_path, threads=self.threads, what=_WHAT, error=ConfigError
        )
        return _Runtime(graph=graph, tokenizer=tokenizers.encoder, pad_id=tokenizers.pad_id)


def _encode(tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
    try:
        return list(tokenizer.encode_batch(texts))
    except Exception as exc:  # the tokenizers library raises plain Exceptions
        raise EmbedderError(f"the tokenizer failed: {exc}") from exc
