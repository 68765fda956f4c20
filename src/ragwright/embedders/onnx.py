"""Sentence embeddings from an ONNX model and a Hugging Face ``tokenizer.json``, on onnxruntime.

The model is a sentence-transformer-style encoder: it takes ``input_ids`` and ``attention_mask``
(and ``token_type_ids`` when the graph has that input) and returns per-token embeddings
``(batch, tokens, dim)``, which are pooled (mean over the attention mask, or the first token)
and L2-normalized. No torch, no network: both files are read from disk.

Texts are tokenized with the tokenizer's own padding and truncation switched off (many exported
``tokenizer.json`` files pad and truncate to a fixed 128 tokens), truncated at ``max_tokens``,
sorted by length, run in batches padded only to the longest text of each batch, and returned in
the caller's order.

A folder (:meth:`OnnxEmbedder.from_folder`) holds ``model.onnx`` (or ``onnx/model.onnx``) and
``tokenizer.json``. Settings come, lowest precedence first, from the built-in defaults, a
sentence-transformers export's ``sentence_bert_config.json`` (``max_seq_length``) and
``1_Pooling/config.json`` (mean or CLS pooling), an optional ``ragwright.json``, and finally the
keyword arguments. ``ragwright.json`` is a JSON object with any of::

    {"model_name": "intfloat/e5-small-v2", "max_tokens": 512, "pooling": "mean",
     "normalize": true, "query_prefix": "query: ", "document_prefix": "passage: "}

Nothing is loaded at construction beyond checking that the files exist: the tokenizer loads on
the first count or embed, the onnxruntime session on the first embed (or on ``space`` when the
graph does not declare its output width).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, cast
from urllib.parse import parse_qsl, quote, urlencode

import numpy as np
import numpy.typing as npt

from ragwright._lazy import Lazy
from ragwright.embedders._onnx_graph import WireFormatError, drop_nan_guards
from ragwright.errors import ConfigError, EmbedderError, MissingDependencyError
from ragwright.models import EmbeddingSpace
from ragwright.ports import EmbeddedCount, Vectors

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

Pooling = Literal["mean", "cls"]
#: How onnxruntime's CPU memory arena behaves. ``"shrink"`` keeps the arena during a batch (its
#: speed) and hands unused memory back after each batch (bounded RSS); ``"grow"`` keeps
#: everything it ever allocated; ``"off"`` allocates each tensor from the system.
Arena = Literal["shrink", "grow", "off"]
GraphOptimization = Literal["disable", "basic", "extended", "all"]

POOLINGS: tuple[Pooling, ...] = ("mean", "cls")
ARENAS: tuple[Arena, ...] = ("shrink", "grow", "off")
GRAPH_OPTIMIZATIONS: tuple[GraphOptimization, ...] = ("disable", "basic", "extended", "all")

#: Tuned on the default model (benchmarks/embedder_tuning.py); see the class docstring.
DEFAULT_BATCH_SIZE = 64
DEFAULT_BATCH_TOKENS = 1024
DEFAULT_SPINNING = False
DEFAULT_ARENA: Arena = "grow"
DEFAULT_GRAPH_OPTIMIZATION: GraphOptimization = "all"

_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_TOKEN_OUTPUT_NAMES = ("token_embeddings", "last_hidden_state")
_FOLDER_CONFIG = "ragwright.json"
_PROBE_TEXT = "ragwright dimension probe"
_INSTALL = "pip install onnxruntime tokenizers"


class Tuning(TypedDict, total=False):
    """Speed and memory settings. They never change the vectors, so no spec records them."""

    batch_size: int
    batch_tokens: int
    threads: int | None
    spinning: bool
    arena: Arena
    graph_optimization: GraphOptimization
    drop_nan_guards: bool


class ModelSettings(TypedDict, total=False):
    """Settings that define the space: its model name, ``normalized`` flag or fingerprint."""

    model_name: str
    max_tokens: int
    pooling: Pooling
    normalize: bool
    query_prefix: str
    document_prefix: str


class FolderOptions(ModelSettings, Tuning, total=False):
    """Everything :meth:`OnnxEmbedder.from_folder` accepts as a keyword argument."""


@dataclass(frozen=True)
class _Session:
    """A loaded onnxruntime session and what was learned about its graph."""

    session: Any
    run_options: Any
    input_names: tuple[str, ...]
    input_dtypes: tuple[npt.DTypeLike, ...]
    output_name: str
    declared_dimension: int | None


@dataclass(frozen=True)
class _Tokenizers:
    encoder: Tokenizer  # truncates at max_tokens, never pads
    counter: Tokenizer  # neither truncates nor pads
    pad_id: int


class OnnxEmbedder:
    """Embeds texts with an ONNX sentence-transformer model; also counts its tokens.

    ``max_tokens`` is the window the model sees; longer texts are truncated when embedded, and
    :meth:`count_tokens` lets a chunker keep chunks inside it. ``query_prefix`` and
    ``document_prefix`` are prepended before tokenizing (e5 and bge models need them).

    Tuning (:class:`Tuning`; none of it changes the vectors beyond float rounding): a batch
    holds at most ``batch_size`` texts and at most ``batch_tokens`` padded tokens, so long
    texts run a few at a time and short ones many. ``threads`` is onnxruntime's intra-op
    thread count (``None``: one per physical core); ``spinning`` lets idle worker threads
    busy-wait (a few percent faster on an idle machine, much slower on a busy one). ``arena``
    and ``graph_optimization`` are onnxruntime's memory arena and graph optimization level;
    ``drop_nan_guards`` applies an exact graph rewrite (see ``_onnx_graph``).

    The defaults come from ``benchmarks/embedder_tuning.py`` on the default MiniLM model, where
    small batches beat large ones (the attention tensors stay in cache) and, being small, let
    the arena keep its memory at little cost.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        tokenizer_path: str | os.PathLike[str],
        *,
        model_name: str | None = None,
        max_tokens: int = 256,
        batch_size: int = DEFAULT_BATCH_SIZE,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        threads: int | None = None,
        pooling: Pooling = "mean",
        normalize: bool = True,
        query_prefix: str = "",
        document_prefix: str = "",
        spinning: bool = DEFAULT_SPINNING,
        arena: Arena = DEFAULT_ARENA,
        graph_optimization: GraphOptimization = DEFAULT_GRAPH_OPTIMIZATION,
        drop_nan_guards: bool = True,
        fingerprint: str | None = None,
    ) -> None:
        self._model_path = Path(model_path).expanduser().resolve()
        self._tokenizer_path = Path(tokenizer_path).expanduser().resolve()
        _require_files({"model": self._model_path, "tokenizer": self._tokenizer_path})
        _check_choice("pooling", pooling, POOLINGS)
        _check_choice("arena", arena, ARENAS)
        _check_choice("graph_optimization", graph_optimization, GRAPH_OPTIMIZATIONS)
        _check_positive("max_tokens", max_tokens)
        _check_positive("batch_size", batch_size)
        _check_positive("batch_tokens", batch_tokens)
        if threads is not None:
            _check_positive("threads", threads)
        self._model_name = model_name or _default_model_name(self._model_path)
        self._named = model_name is not None
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self._threads = threads
        self._pooling: Pooling = pooling
        self._normalize = normalize
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._spinning = spinning
        self._arena: Arena = arena
        self._graph_optimization: GraphOptimization = graph_optimization
        self._drop_nan_guards = drop_nan_guards
        # A built-in model pins its space's fingerprint: it must not change when the same
        # tokenizer is read from another package's identical-but-for-padding file.
        self._pinned_fingerprint = fingerprint
        self._folder: Path | None = None
        self._tokenizers = Lazy(lambda: read_tokenizers(self._tokenizer_path, self._max_tokens))
        self._session = Lazy(self._open_session)
        self._space: EmbeddingSpace | None = None
        self._probed_dimension: int | None = None

    @classmethod
    def from_folder(
        cls, path: str | os.PathLike[str], **options: Unpack[FolderOptions]
    ) -> OnnxEmbedder:
        """An embedder for a folder with ``model.onnx`` and ``tokenizer.json`` (see the module)."""
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise ConfigError(
                f"{folder} is not a folder; expected a folder holding model.onnx and "
                "tokenizer.json (a sentence-transformers ONNX export)"
            )
        model = next(
            (p for p in (folder / "model.onnx", folder / "onnx" / "model.onnx") if p.is_file()),
            folder / "model.onnx",
        )
        _require_files({"model": model, "tokenizer": folder / "tokenizer.json"})
        settings: dict[str, Any] = {"model_name": folder.name}
        settings.update(_sentence_transformers_settings(folder))
        settings.update(_ragwright_settings(folder))
        settings.update(options)
        embedder = cls(model, folder / "tokenizer.json", **settings)
        embedder._folder = folder
        embedder._named = settings["model_name"] != folder.name
        return embedder

    @classmethod
    def from_spec(cls, argument: str) -> OnnxEmbedder:
        """The embedder an ``onnx:PATH[?key=value&...]`` spec names (the inverse of ``spec``).

        PATH is a folder (see :meth:`from_folder`) or a ``.onnx`` file whose ``tokenizer.json``
        sits beside it; the keys are ``tokenizer`` and the :class:`ModelSettings` names.
        """
        path, _, query = argument.partition("?")
        if not path:
            raise ConfigError("the onnx embedder needs a path: onnx:/path/to/model-folder")
        options = _parse_spec_options(query)
        tokenizer = options.pop("tokenizer", None)
        target = Path(path).expanduser()
        if target.is_dir():
            if tokenizer is not None:
                raise ConfigError("the onnx spec option tokenizer= needs a model file path")
            return cls.from_folder(target, **cast(FolderOptions, options))
        tokenizer_path = Path(tokenizer) if tokenizer else target.parent / "tokenizer.json"
        return cls(target, tokenizer_path, **options)

    # -- identity -----------------------------------------------------------------------------

    @property
    def spec(self) -> str:
        """The spec string that recreates this embedder's space with ``create_embedder``."""
        options: dict[str, str] = {}
        default_tokenizer = self._model_path.parent / "tokenizer.json"
        location = self._folder if self._folder is not None else self._model_path
        if self._folder is None and self._tokenizer_path != default_tokenizer:
            options["tokenizer"] = str(self._tokenizer_path)
        if self._named:
            options["model_name"] = self._model_name
        options["max_tokens"] = str(self._max_tokens)
        options["pooling"] = self._pooling
        if not self._normalize:
            options["normalize"] = "false"
        if self._query_prefix:
            options["query_prefix"] = self._query_prefix
        if self._document_prefix:
            options["document_prefix"] = self._document_prefix
        return f"onnx:{location}?{urlencode(options, quote_via=quote)}"

    @property
    def space(self) -> EmbeddingSpace:
        """The embedding space. Hashes the model file once; may load the model for its width."""
        if self._space is None:
            self._space = EmbeddingSpace(
                model=self._model_name,
                dimension=self._dimension(),
                normalized=self._normalize,
                metric="cosine",
                fingerprint=self._pinned_fingerprint or self._fingerprint(),
            )
        return self._space

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    # -- the ports ----------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for ``text`` as a document, special tokens included,
        without truncation (so a result above ``max_tokens`` means the text would be cut)."""
        encoded = _encode(self._tokenizers.get().counter, [self._document_prefix + text])
        return len(encoded[0].ids)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors ``(len(texts), dim)``, float32, in the order of ``texts``."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        return self._embed([self._document_prefix + text for text in texts])

    def embed_documents_reporting(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        """`embed_documents`, telling ``embedded`` after each batch the model runs: one call
        of many texts is sorted and batched as a whole, and still shows progress."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        return self._embed([self._document_prefix + text for text in texts], embedded)

    def embed_query(self, text: str) -> Vectors:
        """One vector ``(dim,)``, float32."""
        result: Vectors = self._embed([self._query_prefix + text])[0]
        return result

    # -- embedding ----------------------------------------------------------------------------

    # Texts are tokenized and sorted in windows, so a huge input never holds every encoding.
    _WINDOW = 1024

    def _embed(self, texts: list[str], embedded: EmbeddedCount | None = None) -> Vectors:
        runtime = self._session.get()
        tokenizers = self._tokenizers.get()
        if not texts:
            return np.empty((0, self._dimension()), dtype=np.float32)
        window = max(self._WINDOW, self._batch_size)
        parts = [
            self._embed_window(runtime, tokenizers, texts[start : start + window], embedded)
            for start in range(0, len(texts), window)
        ]
        vectors = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if not np.isfinite(vectors).all():
            raise EmbedderError(f"{self._model_name} produced non-finite values (NaN or inf)")
        return vectors

    def _embed_window(
        self,
        runtime: _Session,
        tokenizers: _Tokenizers,
        texts: list[str],
        embedded: EmbeddedCount | None,
    ) -> Vectors:
        encodings = _encode(tokenizers.encoder, texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        # Longest first: the biggest tensors are allocated once and reused by smaller batches.
        # A text without a single token (only possible without special tokens) stays zero.
        order = np.argsort(-lengths, kind="stable")[: int(np.count_nonzero(lengths))]
        out = np.zeros((len(texts), self._dimension()), dtype=np.float32)
        start = 0
        while start < len(order):
            # The first text of a batch is its longest: it sets the padded width.
            size = min(self._batch_size, max(1, self._batch_tokens // int(lengths[order[start]])))
            rows = order[start : start + size]
            out[rows] = self._run_batch(runtime, [encodings[i] for i in rows], tokenizers.pad_id)
            start += size
            if embedded is not None:
                embedded(len(rows))
        if embedded is not None and len(order) < len(texts):
            embedded(len(texts) - len(order))  # the texts without a token, left at zero
        return out

    def _run_batch(self, runtime: _Session, batch: list[Encoding], pad_id: int) -> Vectors:
        feeds, mask = bert_feeds(batch, pad_id, runtime.input_names, runtime.input_dtypes)
        ids = feeds["input_ids"]
        try:
            (hidden,) = runtime.session.run([runtime.output_name], feeds, runtime.run_options)
        except Exception as exc:  # onnxruntime raises its own untyped exceptions
            raise EmbedderError(
                f"onnxruntime failed on a batch of {ids.shape[0]} texts of up to {ids.shape[1]} "
                f"tokens with {self._model_path}: {exc}. If the model's position limit is "
                f"below max_tokens={self._max_tokens}, lower max_tokens."
            ) from exc
        return self._pool(np.asarray(hidden, dtype=np.float32), mask)

    def _pool(self, hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
        if hidden.ndim != 3:
            raise EmbedderError(
                f"{self._model_path} output {hidden.shape!r}; expected (batch, tokens, dim)"
            )
        if self._pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask.astype(np.float32)
            summed = np.matmul(weights[:, None, :], hidden)[:, 0, :]
            pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
        if self._normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, np.float32(1e-12))
        return np.ascontiguousarray(pooled, dtype=np.float32)

    # -- lazy loading -------------------------------------------------------------------------

    def _open_session(self) -> _Session:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise MissingDependencyError("the ONNX embedder", _INSTALL) from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads or 0  # 0: one per physical core
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = {
            "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        }[self._graph_optimization]
        options.enable_cpu_mem_arena = self._arena != "off"
        options.log_severity_level = 3  # errors only
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if self._spinning else "0"
        )
        run_options = ort.RunOptions()
        if self._arena == "shrink":
            run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        try:
            session = ort.InferenceSession(
                self._model_source(), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderError(f"onnxruntime cannot load {self._model_path}: {exc}") from exc
        names, dtypes = bert_inputs(session, self._model_path, "an embedding model")
        output = _token_output(session.get_outputs(), self._model_path)
        width = output.shape[2]
        return _Session(
            session=session,
            run_options=run_options,
            input_names=names,
            input_dtypes=dtypes,
            output_name=output.name,
            declared_dimension=width if isinstance(width, int) and width > 0 else None,
        )

    def _model_source(self) -> str | bytes:
        """The model file's path, or its bytes when an exact rewrite makes it faster."""
        if not self._drop_nan_guards:
            return str(self._model_path)
        try:
            rewritten = drop_nan_guards(self._model_path.read_bytes())
        except (OSError, WireFormatError):
            rewritten = None  # onnxruntime reads the file itself and reports what is wrong
        return str(self._model_path) if rewritten is None else rewritten

    def _dimension(self) -> int:
        runtime = self._session.get()
        if runtime.declared_dimension is not None:
            return runtime.declared_dimension
        if self._probed_dimension is None:
            tokenizers = self._tokenizers.get()
            batch = _encode(tokenizers.encoder, [_PROBE_TEXT])
            self._probed_dimension = int(
                self._run_batch(runtime, batch, tokenizers.pad_id).shape[1]
            )
        return self._probed_dimension

    def _fingerprint(self) -> str:
        digest = hashlib.sha256(b"ragwright-onnx-embedder\0")
        for path in (self._model_path, self._tokenizer_path):
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
        settings = {
            "max_tokens": self._max_tokens,
            "pooling": self._pooling,
            "query_prefix": self._query_prefix,
            "document_prefix": self._document_prefix,
        }
        digest.update(json.dumps(settings, sort_keys=True).encode())
        return digest.hexdigest()


# -- helpers ----------------------------------------------------------------------------------


def bert_inputs(
    session: Any, model_path: Path, what: str
) -> tuple[tuple[str, ...], tuple[npt.DTypeLike, ...]]:
    """The BERT-style inputs a loaded graph takes (``input_ids``, and ``attention_mask`` and
    ``token_type_ids`` when declared) with their integer types; anything else is refused."""
    inputs = {node.name: node for node in session.get_inputs()}
    unknown = sorted(set(inputs) - set(_MODEL_INPUTS))
    if "input_ids" not in inputs or unknown:
        raise ConfigError(
            f"{model_path} has inputs {sorted(inputs)}; {what} takes "
            "input_ids and optionally attention_mask and token_type_ids"
        )
    names = tuple(name for name in _MODEL_INPUTS if name in inputs)
    dtypes = tuple(np.int32 if "int32" in inputs[n].type else np.int64 for n in names)
    return names, dtypes


def _encode(tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
    # encode_batch_fast (tokenizers >= 0.21) skips computing character offsets.
    encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
    try:
        return cast("list[Encoding]", encode(texts))
    except Exception as exc:  # the tokenizers library raises plain Exceptions
        raise EmbedderError(f"the tokenizer failed: {exc}") from exc


def bert_feeds(
    batch: list[Encoding],
    pad_id: int,
    names: Sequence[str],
    dtypes: Sequence[npt.DTypeLike],
) -> tuple[dict[str, npt.NDArray[Any]], npt.NDArray[np.int64]]:
    """The feeds of one batch for a graph taking the inputs ``names`` with ``dtypes`` (see
    `bert_inputs`), padded to the longest encoding, and the attention mask (pooling needs it
    even when the graph does not take it)."""
    ids, mask, type_ids = pad(batch, pad_id)
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": type_ids}
    feeds = {
        name: arrays[name].astype(dtype, copy=False)
        for name, dtype in zip(names, dtypes, strict=True)
    }
    return feeds, mask


def pad(
    batch: list[Encoding], pad_id: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``input_ids``, ``attention_mask``, ``token_type_ids``, padded to the longest encoding."""
    width = max(len(e.ids) for e in batch)
    ids = np.full((len(batch), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    type_ids = np.zeros((len(batch), width), dtype=np.int64)
    for row, encoding in enumerate(batch):
        n = len(encoding.ids)
        ids[row, :n] = encoding.ids
        mask[row, :n] = 1
        type_ids[row, :n] = encoding.type_ids
    return ids, mask, type_ids


def read_tokenizers(path: Path, max_tokens: int) -> _Tokenizers:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingDependencyError("the ONNX embedder", _INSTALL) from exc
    try:
        encoder = Tokenizer.from_file(str(path))
        counter = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ConfigError(f"cannot read the tokenizer {path}: {exc}") from exc
    pad_id = _pad_id(encoder)
    # The file's own settings (often: pad and truncate to 128) would distort the vectors.
    for tokenizer in (encoder, counter):
        tokenizer.no_padding()
        tokenizer.no_truncation()
    encoder.enable_truncation(max_tokens)
    return _Tokenizers(encoder=encoder, counter=counter, pad_id=pad_id)


def _pad_id(tokenizer: Tokenizer) -> int:
    padding = tokenizer.padding
    if padding is not None and isinstance(padding.get("pad_id"), int):
        return int(padding["pad_id"])
    for token in ("[PAD]", "<pad>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return found
    return 0  # masked out anyway


def _token_output(outputs: Sequence[Any], model: Path) -> Any:
    """The graph output holding per-token embeddings ``(batch, tokens, dim)``."""
    by_name = {node.name: node for node in outputs}
    for name in _TOKEN_OUTPUT_NAMES:
        if name in by_name and len(by_name[name].shape) == 3:
            return by_name[name]
    for node in outputs:
        if len(node.shape) == 3:
            return node
    described = ", ".join(f"{node.name} {node.shape}" for node in outputs)
    raise ConfigError(
        f"{model} has no per-token output (batch, tokens, dim) to pool; its outputs: {described}"
    )


def _default_model_name(model: Path) -> str:
    return model.stem if model.stem != "model" else model.parent.name or model.stem


def _require_files(files: Mapping[str, Path]) -> None:
    missing = [f"{what} file {path}" for what, path in files.items() if not path.is_file()]
    if missing:
        raise ConfigError("the ONNX embedder cannot find its " + " and ".join(missing))


def _check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _check_positive(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name} must be a positive integer; got {value!r}")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


_SETTING_TYPES: dict[str, type] = {
    "model_name": str,
    "max_tokens": int,
    "pooling": str,
    "normalize": bool,
    "query_prefix": str,
    "document_prefix": str,
}


def _ragwright_settings(folder: Path) -> dict[str, Any]:
    path = folder / _FOLDER_CONFIG
    if not path.is_file():
        return {}
    data = _read_json(path)
    for key, value in data.items():
        expected = _SETTING_TYPES.get(key)
        if expected is None:
            raise ConfigError(
                f"{path}: unknown setting {key!r}; known: {', '.join(sorted(_SETTING_TYPES))}"
            )
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{path}: {key} must be a {expected.__name__}; got {value!r}")
    return data


def _sentence_transformers_settings(folder: Path) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    bert_config = folder / "sentence_bert_config.json"
    if bert_config.is_file():
        length = _read_json(bert_config).get("max_seq_length")
        if isinstance(length, int) and not isinstance(length, bool) and length > 0:
            settings["max_tokens"] = length
    pooling_config = folder / "1_Pooling" / "config.json"
    if pooling_config.is_file():
        modes = _read_json(pooling_config)
        if modes.get("pooling_mode_cls_token"):
            settings["pooling"] = "cls"
        elif modes.get("pooling_mode_mean_tokens"):
            settings["pooling"] = "mean"
        else:
            raise ConfigError(
                f"{pooling_config}: only mean and CLS pooling are supported; set "
                f'"pooling" in {folder / _FOLDER_CONFIG} to use one of them anyway'
            )
    return settings


def _parse_spec_options(query: str) -> dict[str, Any]:
    if not query:
        return {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError as exc:
        raise ConfigError(f"cannot parse the onnx spec options {query!r}: {exc}") from exc
    options: dict[str, Any] = {}
    for key, value in pairs:
        if key == "tokenizer":
            options[key] = value
        elif _SETTING_TYPES.get(key) is int:
            try:
                options[key] = int(value)
            except ValueError:
                raise ConfigError(f"{key} must be an integer; got {value!r}") from None
        elif _SETTING_TYPES.get(key) is bool:
            if value.lower() not in ("true", "false"):
                raise ConfigError(f"{key} must be true or false; got {value!r}")
            options[key] = value.lower() == "true"
        elif key in _SETTING_TYPES:
            options[key] = value
        else:
            known = ", ".join(sorted([*_SETTING_TYPES, "tokenizer"]))
            raise ConfigError(f"unknown onnx spec option {key!r}; known: {known}")
    return options
