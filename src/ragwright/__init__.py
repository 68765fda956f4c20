"""ragwright: turn documents into a searchable, citable knowledge base. Offline by default.

from ragwright import Index

with Index("./.ragwright") as kb:
    kb.ingest(["./docs"])
    for hit in kb.search("how do I install it", top_k=5):
        print(hit.source, hit.chunk.char_start, hit.chunk.text)
    answer = kb.ask("What does ingest do with unchanged files?")
    print(answer.text, answer.citations)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragwright._lazy import lazy_names
from ragwright.errors import (
    AccessDenied,
    BrokenSetting,
    BudgetExceeded,
    CircuitOpen,
    ClusterError,
    ConfigError,
    CredentialsError,
    DatasetError,
    DocumentRefused,
    EmbedderError,
    EmbeddingSpaceChanged,
    EmbeddingSpaceMismatch,
    ExtractionBudgetExceeded,
    ExtractionError,
    FederationError,
    FilterSyntaxError,
    GraphError,
    GraphNotBuilt,
    IndexDamaged,
    IndexTooNew,
    IngestLimitExceeded,
    LLMError,
    LLMResponseError,
    MemberUnavailable,
    MissingDependencyError,
    ModelFileRefused,
    OcrError,
    ParseBudgetSpent,
    ParseError,
    ParseLimitExceeded,
    RagwrightError,
    RegistryError,
    RepairRefused,
    RerankerError,
    SourceError,
    StoreError,
    StoreUnavailable,
    UnknownCollection,
    UnknownEntity,
    UnsupportedFilter,
    UnsupportedScale,
)

if TYPE_CHECKING:
    from ragwright.federation import Federation
    from ragwright.filters import And, Comparison, Exists, Filter, In, Not, Or, parse_filter
    from ragwright.graph.settings import GraphSettings
    from ragwright.index import ChunkingConfig, Index
    from ragwright.llms.settings import LLMSettings
    from ragwright.models import (
        Answer,
        Arm,
        BM25Parameters,
        Chunk,
        Citation,
        Document,
        DocumentInfo,
        EmbeddingSpace,
        Hit,
        ParsedDocument,
        Route,
        Scale,
        Section,
    )
    from ragwright.parsers.options import ParserOptions
    from ragwright.permissions import Caller
    from ragwright.pipeline.ingest.ingestor import IngestOptions, IngestReport
    from ragwright.pipeline.search.request import (
        Fusion,
        PassageWeights,
        Reranking,
        SearchMode,
        SearchRequest,
    )

#: The public names defined outside `ragwright.errors`, each with its module: imported on first
#: use (PEP 562), so that importing a submodule (``ragwright.errors``, a parse worker's
#: parsers) does not load the index, the stores and the answer engines with the package.
_LAZY = {
    "And": "ragwright.filters",
    "Answer": "ragwright.models",
    "Arm": "ragwright.models",
    "BM25Parameters": "ragwright.models",
    "Caller": "ragwright.permissions",
    "Chunk": "ragwright.models",
    "ChunkingConfig": "ragwright.index",
    "Citation": "ragwright.models",
    "Comparison": "ragwright.filters",
    "Document": "ragwright.models",
    "DocumentInfo": "ragwright.models",
    "EmbeddingSpace": "ragwright.models",
    "Exists": "ragwright.filters",
    "Federation": "ragwright.federation",
    "Filter": "ragwright.filters",
    "Fusion": "ragwright.pipeline.search.request",
    "GraphSettings": "ragwright.graph.settings",
    "Hit": "ragwright.models",
    "In": "ragwright.filters",
    "Index": "ragwright.index",
    "IngestOptions": "ragwright.pipeline.ingest.ingestor",
    "IngestReport": "ragwright.pipeline.ingest.ingestor",
    "LLMSettings": "ragwright.llms.settings",
    "Not": "ragwright.filters",
    "Or": "ragwright.filters",
    "ParsedDocument": "ragwright.models",
    "ParserOptions": "ragwright.parsers.options",
    "PassageWeights": "ragwright.pipeline.search.request",
    "Reranking": "ragwright.pipeline.search.request",
    "Route": "ragwright.models",
    "Scale": "ragwright.models",
    "SearchMode": "ragwright.pipeline.search.request",
    "SearchRequest": "ragwright.pipeline.search.request",
    "Section": "ragwright.models",
    "parse_filter": "ragwright.filters",
}


__getattr__ = lazy_names(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "And",
    "Answer",
    "Arm",
    "BM25Parameters",
    "BrokenSetting",
    "BudgetExceeded",
    "Caller",
    "Chunk",
    "ChunkingConfig",
    "CircuitOpen",
    "Citation",
    "ClusterError",
    "Comparison",
    "ConfigError",
    "CredentialsError",
    "DatasetError",
    "Document",
    "DocumentInfo",
    "DocumentRefused",
    "EmbedderError",
    "EmbeddingSpace",
    "EmbeddingSpaceChanged",
    "EmbeddingSpaceMismatch",
    "Exists",
    "ExtractionBudgetExceeded",
    "ExtractionError",
    "Federation",
    "FederationError",
    "Filter",
    "FilterSyntaxError",
    "Fusion",
    "GraphError",
    "GraphNotBuilt",
    "GraphSettings",
    "Hit",
    "In",
    "Index",
    "IndexDamaged",
    "IndexTooNew",
    "IngestLimitExceeded",
    "IngestOptions",
    "IngestReport",
    "LLMError",
    "LLMResponseError",
    "LLMSettings",
    "MemberUnavailable",
    "MissingDependencyError",
    "ModelFileRefused",
    "Not",
    "OcrError",
    "Or",
    "ParseBudgetSpent",
    "ParseError",
    "ParseLimitExceeded",
    "ParsedDocument",
    "ParserOptions",
    "PassageWeights",
    "RagwrightError",
    "RegistryError",
    "RepairRefused",
    "RerankerError",
    "Reranking",
    "Route",
    "Scale",
    "SearchMode",
    "SearchRequest",
    "Section",
    "SourceError",
    "StoreError",
    "StoreUnavailable",
    "UnknownCollection",
    "UnknownEntity",
    "UnsupportedFilter",
    "UnsupportedScale",
    "__version__",
    "parse_filter",
]
