"""The public API is deliberate: this test fails when exported names change by accident."""

from __future__ import annotations

import subprocess
import sys

import ragwright
from ragwright import errors

EXPECTED = {
    "And", "Answer", "Arm", "BudgetExceeded", "Chunk", "ChunkingConfig", "Citation",
    "Comparison", "ConfigError", "Document", "DocumentInfo", "EmbedderError", "EmbeddingSpace",
    "EmbeddingSpaceMismatch", "Exists", "Filter", "FilterSyntaxError", "Hit", "In", "Index",
    "IngestLimitExceeded", "IngestOptions", "IngestReport", "MissingDependencyError", "Not",
    "Or", "ParseError", "ParsedDocument", "ParserOptions", "RagwrightError", "RegistryError",
    "Scale", "SearchMode", "Section", "StoreError", "UnsupportedFilter", "UnsupportedScale",
    "__version__", "parse_filter",
}  # fmt: skip


def test_exported_names_are_exactly_the_curated_set() -> None:
    assert set(ragwright.__all__) == EXPECTED
    for name in ragwright.__all__:
        assert hasattr(ragwright, name), name


def test_every_error_is_in_the_documented_tree() -> None:
    classes = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, Exception)
    ]
    for cls in classes:
        assert issubclass(cls, errors.RagwrightError)
        assert cls.__name__ in (errors.__doc__ or ""), f"{cls.__name__} missing from the tree"


def test_importing_ragwright_loads_no_heavy_dependency() -> None:
    heavy = ["onnxruntime", "tokenizers", "httpx", "selectolax", "markdown_it", "typer", "rich"]
    code = f"import sys, ragwright; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""
