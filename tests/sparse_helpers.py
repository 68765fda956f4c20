"""A tiny SPLADE-style model built by the tests (no weights are downloaded): a word-level
tokenizer.json and an ONNX graph of an embedding lookup and a linear layer to vocabulary logits.

Each word's logits are 2 on itself and, through ``EXPANSIONS``, 1 on a related word, so the
sparse arm finds "rotation" for "logs" although the text never says "logs": the expansion BM25
cannot do. Special tokens and padding embed to zeros (no term weight)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tiny_tokenizer import save_word_level_tokenizer

WORDS = (
    "logs rotate rotation nightly gzip archive alerts pages oncall retention days keep billing "
    "invoice refund"
).split()
VOCAB = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3} | {w: i + 4 for i, w in enumerate(WORDS)}
#: word -> a word its logits also favour (weight 1 against its own 2).
EXPANSIONS = {"logs": "rotation", "refund": "invoice", "pages": "oncall"}


def logits_matrix() -> np.ndarray:
    size = len(VOCAB)
    matrix = np.zeros((size, size), dtype=np.float32)
    for word in WORDS:
        matrix[VOCAB[word], VOCAB[word]] = 2.0
    for word, related in EXPANSIONS.items():
        matrix[VOCAB[word], VOCAB[related]] = 1.0
    return matrix


def save_tiny_splade(folder: Path) -> Path:
    """``folder`` with model.onnx (input_ids, attention_mask -> logits) and tokenizer.json."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    save_word_level_tokenizer(folder / "tokenizer.json", VOCAB)
    size = len(VOCAB)
    embedding = np.eye(size, dtype=np.float32)
    embedding[:4] = 0.0  # [PAD], [UNK], [CLS], [SEP]
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["embedding", "input_ids"], ["hidden"], axis=0),
            helper.make_node("MatMul", ["hidden", "projection"], ["projected"]),
            helper.make_node("Add", ["projected", "bias"], ["logits"]),
        ],
        "tiny_splade",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "tokens", size])],
        [
            numpy_helper.from_array(embedding, "embedding"),
            numpy_helper.from_array(logits_matrix(), "projection"),
            numpy_helper.from_array(np.full(size, -0.5, dtype=np.float32), "bias"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder
