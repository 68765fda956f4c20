"""A cross-encoder reranker on a user-supplied ONNX model and its ``tokenizer.json``.

A cross-encoder reads the query and one passage together and returns a relevance logit. No
such model ships with ragwright (none is on PyPI); export one yourself, e.g. with
``optimum-cli export onnx --model cross-encoder/ms-marco-MiniLM-L-6-v2 --task
text-classification DIR``, and point :meth:`CrossEncoderReranker.from_folder` at ``DIR``.

Each (query, passage) pair is tokenized as a pair, exactly as Hugging Face tokenizers do it
(``[CLS] query [SEP] passage [SEP]`` with segment ids for BERT-style models): the tokenizer's own
padding and truncation are switched off, the query is cut to half of the window when it is
longer, and the passage is cut to what remains of ``max_tokens``. Pairs run in batches of
``batch_size``, padded to the longest pair of each batch. The graph is fed ``input_ids`` and, when
it declares them, ``attention_mask`` and ``token_type_ids``.

The score is the first output's logit: shape ``(n,)`` or ``(n, 1)`` is used as is; ``(n, 2)``
(a two-class classifier) gives the positive class's log-odds ``l1 - l0``, which orders pairs as
the softmax probability of "relevant" does. Hits are sorted by score, highest first; ties keep
their retrieval order.

Nothing is loaded at construction beyond checking that the files exist: the tokenizer and the
onnxruntime session load on the first rerank.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ragwright._lazy import Lazy
from ragwright.embedders.onnx import bert_feeds, read_tokenizers
from ragwright.embedders.onnx_session import BertSession, model_in_folder, open_bert_session
from ragwright.errors import ConfigError, RerankerError
from ragwright.models import Hit
from ragwright.rerankers._base import check_positive, check_top_k, reranked

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

_OWNER = "cross-encoder reranker"


@dataclass(frozen=True)
class _Pairs:
    tokenizer: Tokenizer  # neither truncates nor pads
    pad_id: int
    specials: int  # special tokens a pair gets


class CrossEncoderReranker:
    """Reranks hits with an ONNX cross-encoder; a `Reranker` and a `ResultProcessor`.

    ``max_tokens`` is the window of one (query, passage) pair, special tokens included (512 for
    BERT-style models); ``batch_size`` is how many pairs run at once; ``threads`` is
    onnxruntime's intra-op thread count (``None``: one per physical core).
    """

    name: str = "cross_encoder"
    last: bool = False

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        tokenizer_path: str | os.PathLike[str],
        *,
        max_tokens: int = 512,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path).expanduser().resolve()
        self.tokenizer_path = Path(tokenizer_path).expanduser().resolve()
        _require_files(model=self.model_path, tokenizer=self.tokenizer_path)
        self.max_tokens = check_positive(_OWNER, "max_tokens", max_tokens)
        self.batch_size = check_positive(_OWNER, "batch_size", batch_size)
        self.threads = None if threads is None else check_positive(_OWNER, "threads", threads)
        self._pairs = Lazy(self._read_pairs)
        self._runtime = Lazy(
            lambda: open_bert_session(
                self.model_path, threads=self.threads, what="a cross-encoder", error=RerankerError
            )
        )

    @classmethod
    def from_folder(
        cls,
        path: str | os.PathLike[str],
        *,
        max_tokens: int = 512,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> CrossEncoderReranker:
        """A reranker for a folder holding ``model.onnx`` (or ``onnx/model.onnx``) and
        ``tokenizer.json``, as ``optimum-cli export onnx`` writes it."""
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise ConfigError(
                f"{folder} is not a folder; the {_OWNER} expects a folder holding model.onnx "
                "and tokenizer.json (an ONNX export of a cross-encoder)"
            )
        return cls(
            model_in_folder(folder),
            folder / "tokenizer.json",
            max_tokens=max_tokens,
            batch_size=batch_size,
            threads=threads,
        )

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({str(self.model_path)!r}, max_tokens={self.max_tokens})"

    # -- the ports ----------------------------------------------------------------------------

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        """``hits`` sorted by the model's score, highest first (ties keep their order), on
        `Scale.FUSED`, at most ``top_k`` of them."""
        top_k = check_top_k(_OWNER, top_k)
        if not hits:
            return []
        scores = self.score(query, [hit.chunk.text for hit in hits])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])  # stable: ties keep rank
        return reranked(hits, order, [float(scores[i]) for i in order], top_k)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return self.rerank(query, hits)

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """The model's relevance logit for each (query, passage) pair, in passage order."""
        if isinstance(passages, str):
            raise TypeError("score takes a sequence of passages, not one string")
        pairs = self._pairs.get()
        runtime = self._runtime.get()
        encodings = self._encode(pairs, query, list(passages))
        out = np.empty(len(encodings), dtype=np.float32)
        for start in range(0, len(encodings), self.batch_size):
            batch = encodings[start : start + self.batch_size]
            out[start : start + len(batch)] = self._run_batch(runtime, batch, pairs.pad_id)
        if not np.isfinite(out).all():
            raise RerankerError(f"{self.model_path} produced non-finite scores (NaN or inf)")
        return out

    # -- tokenizing and running ---------------------------------------------------------------

    def _encode(self, pairs: _Pairs, query: str, passages: list[str]) -> list[Encoding]:
        room = self.max_tokens - pairs.specials
        (query_encoding,) = _encode_plain(pairs.tokenizer, [query])
        if len(query_encoding.ids) > room // 2:
            query_encoding.truncate(room // 2)
        passage_room = room - len(query_encoding.ids)
        encoded = []
        for passage_encoding in _encode_plain(pairs.tokenizer, passages):
            if len(passage_encoding.ids) > passage_room:
                passage_encoding.truncate(passage_room)
            encoded.append(pairs.tokenizer.post_process(query_encoding, passage_encoding))
        return encoded

    def _run_batch(
        self, runtime: BertSession, batch: list[Encoding], pad_id: int
    ) -> npt.NDArray[np.float32]:
        feeds, _ = bert_feeds(batch, pad_id, runtime.input_names, runtime.input_dtypes)
        ids = feeds["input_ids"]
        try:
            (logits,) = runtime.session.run([runtime.output_name], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped exceptions
            raise RerankerError(
                f"onnxruntime failed on {ids.shape[0]} pairs of up to {ids.shape[1]} tokens with "
                f"{self.model_path}: {exc}. If the model's position limit is below "
                f"max_tokens={self.max_tokens}, lower max_tokens."
            ) from exc
        return self._logits(np.asarray(logits, dtype=np.float32), len(batch))

    def _logits(self, raw: npt.NDArray[np.float32], rows: int) -> npt.NDArray[np.float32]:
        if raw.shape == (rows,) or raw.shape == (rows, 1):
            return raw.reshape(rows)
        if raw.shape == (rows, 2):
            positive: npt.NDArray[np.float32] = raw[:, 1] - raw[:, 0]
            return positive
        raise RerankerError(
            f"{self.model_path} output shape {raw.shape!r} for {rows} pairs; a cross-encoder "
            "returns one logit per pair (n, 1) or two classes (n, 2)"
        )

    # -- lazy loading -------------------------------------------------------------------------

    def _read_pairs(self) -> _Pairs:
        tokenizers = read_tokenizers(self.tokenizer_path, self.max_tokens)
        specials = int(tokenizers.counter.num_special_tokens_to_add(True))
        if self.max_tokens < specials + 2:
            raise ConfigError(
                f"{_OWNER}: max_tokens={self.max_tokens} leaves no room for a query and a "
                f"passage beside the {specials} special tokens; raise it"
            )
        return _Pairs(tokenizer=tokenizers.counter, pad_id=tokenizers.pad_id, specials=specials)


def _encode_plain(tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
    """Encodings without special tokens (they are added once the pair is assembled)."""
    try:
        return tokenizer.encode_batch(texts, add_special_tokens=False)
    except Exception as exc:  # the tokenizers library raises plain Exceptions
        raise RerankerError(f"the tokenizer failed: {exc}") from exc


def _require_files(**files: Path) -> None:
    missing = [f"{what} file {path}" for what, path in files.items() if not path.is_file()]
    if missing:
        raise ConfigError(f"the {_OWNER} cannot find its " + " and ".join(missing))
