"""The public API is deliberate: this test fails when exported names change by accident."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragwright
from ragwright import errors

EXPECTED = {
    "AccessDenied", "And", "Answer", "Arm", "BM25Parameters", "BrokenSetting", "BudgetExceeded",
    "Caller", "Chunk", "ChunkingConfig", "CircuitOpen", "Citation",
    "__version__", "ClusterError", "Comparison", "ConfigError", "CredentialsError",
    "DatasetError", "Document", "DocumentInfo", "EmbedderError", "EmbeddingSpace",
    "EmbeddingSpaceChanged", "EmbeddingSpaceMismatch", "Exists", "ExtractionBudgetExceeded",
    "ExtractionError", "Federation", "FederationError", "Filter", "FilterSyntaxError", "Fusion",
    "GraphError", "GraphNotBuilt", "GraphSettings", "Hit", "In", "Index", "IndexDamaged",
    "IndexTooNew",
    "IngestLimitExceeded", "IngestOptions", "IngestReport", "LLMError", "LLMResponseError",
    "LLMSettings", "MemberUnavailable", "MissingDependencyError", "ModelFileRefused", "Not",
    "OcrError", "Or",
    "parse_filter", "ParsedDocument", "ParseBudgetSpent", "ParseError", "ParseLimitExceeded",
    "ParserOptions", "PassageWeights", "Reranking", "DocumentRefused",
    "RagwrightError", "RegistryError", "RepairRefused", "RerankerError", "Route", "Scale",
    "SearchMode", "SearchRequest", "Section", "SourceError", "StoreError", "StoreUnavailable",
    "UnknownCollection", "UnknownEntity", "UnsupportedFilter", "UnsupportedScale",
}  # fmt: skip


def test_exported_names_are_exactly_the_curated_set() -> None:
    assert set(ragwright.__all__) == EXPECTED
    for name in ragwright.__all__:
        assert hasattr(ragwright, name), name


def test_a_submodule_is_imported_without_the_index_and_public_names_load_on_use() -> None:
    """What a parse worker imports (the errors, its parsers) does not load the index, the
    stores or the answer engines; the package's public names load when first asked for."""
    code = (
        "import sys; import ragwright.pipeline.ingest.parse_worker; "
        "print('ragwright.index' in sys.modules); from ragwright import Index; "
        "print('ragwright.index' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout.split() == ["False", "True"], shown.stderr
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        ragwright.NoSuchName  # noqa: B018


ASYNC_CALLS = {
    ragwright.Index: {"asearch", "aask", "aask_stream", "aingest"},
    ragwright.Federation: {"asearch", "aask", "aask_stream"},
}


@pytest.mark.parametrize("cls", list(ASYNC_CALLS), ids=lambda cls: cls.__name__)
def test_the_async_calls_are_exactly_the_curated_set(cls: type) -> None:
    """Each async call is its blocking twin's (``asearch`` is ``search``'s) for asyncio."""
    found = {name for name in dir(cls) if name.startswith("a") and hasattr(cls, name[1:])}
    assert found == ASYNC_CALLS[cls]
    assert all(inspect.iscoroutinefunction(getattr(cls, n)) for n in found - {"aask_stream"})


ERRORS = {
    name: value
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, Exception)
}


def tree_parents(text: str) -> dict[str, str]:
    """Each error class drawn in a ``├──``/``└──`` tree in ``text``, with its parent."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []  # (column of the name, name) of the open branches
    for line in text.splitlines():
        match = re.search(r"(?:├── |└── )?([A-Z]\w+)\s{2,}", line)
        if match is None or match.group(1) not in ERRORS:
            continue
        column, name = match.start(1), match.group(1)
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[name] = stack[-1][1] if stack else "Exception"
        stack.append((column, name))
    return parents


@pytest.mark.parametrize("where", ["errors.py", "docs/concepts.md"])
def test_every_error_is_exported_and_the_trees_show_its_parent(where: str) -> None:
    """The trees are what users read to choose what to catch: they must be true."""
    if where == "errors.py":
        text = errors.__doc__ or ""
    else:
        text = (Path(__file__).parents[1] / where).read_text("utf-8")
    parents = tree_parents(text)
    assert set(parents) == set(ERRORS)
    for name, cls in ERRORS.items():
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


#: `Index` is a facade: the everyday calls the README and the guides use, and one attribute per
#: workflow object behind it (``kb.graph.entity(…)``, ``kb.documents.get(…)``).
INDEX_METHODS = {
    "ask", "ask_stream", "answers", "close", "collections", "display_location", "embedder",
    "folder_sync", "ingest", "is_current", "llm_session", "open_collection", "search", "space",
    "sync_checkpoint", "sync_source",
}  # fmt: skip
INDEX_WORKFLOWS = {
    "communities": "Communities", "documents": "Documents", "embedding": "Embedding",
    "graph": "Graph", "ingestion": "Ingestion", "llms": "LLMs", "searching": "Searching",
    "sources": "Sources", "spaces": "Spaces", "sparse": "SparseWorkflow",
}  # fmt: skip


def test_index_is_a_thin_facade_over_named_workflow_objects(tmp_path: Path) -> None:
    from ragwright.testing import HashingEmbedder

    assert {name for name in vars(ragwright.Index) if not name.startswith("_")} == INDEX_METHODS
    with ragwright.Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        attributes = {name for name in vars(kb) if not name.startswith("_")}
        assert attributes == {*INDEX_WORKFLOWS, "collection", "location", "read_only"}
        for name, kind in INDEX_WORKFLOWS.items():
            assert type(getattr(kb, name)).__name__ == kind, name
