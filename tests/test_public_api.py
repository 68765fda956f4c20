"""The public API is deliberate: this test fails when exported names change by accident."""

from __future__ import annotations

import re
import subprocess
import sys

import ragwright
from ragwright import errors

EXPECTED = {
    "And", "Answer", "Arm", "BudgetExceeded", "Chunk", "ChunkingConfig", "Citation",
    "CircuitOpen", "Comparison", "ConfigError", "DatasetError", "Document", "DocumentInfo",
    "EmbedderError", "EmbeddingSpace", "EmbeddingSpaceMismatch", "Exists", "Filter",
    "FilterSyntaxError", "Hit", "In", "Index", "IngestLimitExceeded", "IngestOptions",
    "IngestReport", "LLMError", "LLMResponseError", "LLMSettings", "MissingDependencyError",
    "Not", "OcrError", "Or", "ParseError", "ParseLimitExceeded", "ParsedDocument",
    "ParserOptions", "RagwrightError", "RegistryError", "RerankerError", "Scale", "SearchMode",
    "Section", "StoreError", "UnsupportedFilter", "UnsupportedScale", "__version__",
    "parse_filter",
}  # fmt: skip


def test_exported_names_are_exactly_the_curated_set() -> None:
    assert set(ragwright.__all__) == EXPECTED
    for name in ragwright.__all__:
        assert hasattr(ragwright, name), name


def test_every_error_is_exported_and_the_tree_shows_its_parent() -> None:
    """The docstring tree is what users read to choose what to catch: it must be true."""
    classes = {
        name: value
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, Exception)
    }
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []  # (column of the name, name) of the open branches
    for line in (errors.__doc__ or "").splitlines():
        match = re.search(r"(?:├── |└── )?([A-Z]\w+)\s{2,}", line)
        if match is None or match.group(1) not in classes:
            continue
        column, name = match.start(1), match.group(1)
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[name] = stack[-1][1] if stack else "Exception"
        stack.append((column, name))
    assert set(parents) == set(classes)
    for name, cls in classes.items():
        assert cls.__base__.__name__ == parents[name], name
        assert getattr(ragwright, name, None) is cls, f"{name} is not exported from ragwright"


def test_importing_ragwright_loads_no_heavy_dependency() -> None:
    heavy = ["onnxruntime", "tokenizers", "httpx", "selectolax", "markdown_it", "typer", "rich"]
    # The optional extras' libraries load only in the code that needs them.
    heavy += ["fastapi", "starlette", "uvicorn", "pydantic", "mcp", "rag_connector"]
    heavy += ["pypdfium2", "pdfplumber", "openpyxl", "docx", "pptx", "striprtf"]
    code = f"import sys, ragwright; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""
