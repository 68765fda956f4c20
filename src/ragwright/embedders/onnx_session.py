"""One BERT-style ONNX graph, loaded plainly: what the cross-encoder and SPLADE share.

The embedder (`OnnxEmbedder`) tunes its own session (arena, spinning, graph optimizations);
the others load a user-supplied export the same way and feed it the same BERT-style inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy.typing as npt

from ragwright.embedders.onnx import bert_inputs
from ragwright.errors import MissingDependencyError, RagwrightError

_INSTALL = "pip install onnxruntime tokenizers"


@dataclass(frozen=True)
class BertSession:
    """A loaded graph, the inputs it declares (with their integer types) and its first output."""

    session: Any
    input_names: tuple[str, ...]
    input_dtypes: tuple[npt.DTypeLike, ...]
    output_name: str


def model_in_folder(folder: Path) -> Path:
    """``model.onnx`` or ``onnx/model.onnx`` (where ``optimum-cli export onnx`` may put it);
    the first when neither exists, so the caller's "cannot find" names the usual place."""
    candidates = (folder / "model.onnx", folder / "onnx" / "model.onnx")
    return next((path for path in candidates if path.is_file()), candidates[0])


def open_bert_session(
    model_path: Path, *, threads: int | None, what: str, error: type[RagwrightError]
) -> BertSession:
    """The graph at ``model_path`` on the CPU with ``threads`` intra-op threads (None: one per
    physical core). A file onnxruntime cannot load raises ``error``; ``what`` names the model
    in messages ("a cross-encoder")."""
    try:
        import onnxruntime as ort
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingDependencyError(what, _INSTALL) from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or 0
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    try:
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own untyped exceptions
        raise error(f"onnxruntime cannot load {model_path}: {exc}") from exc
    names, dtypes = bert_inputs(session, model_path, what)
    return BertSession(
        session=session,
        input_names=names,
        input_dtypes=dtypes,
        output_name=session.get_outputs()[0].name,
    )
