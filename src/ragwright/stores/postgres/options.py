"""`PostgresBackend`'s settings, and the ``[store.postgres]`` table of ragwright.toml that sets
them for an index opened by URL (``--index postgresql://…``):

    [store.postgres]
    pool_size = 8                # connections the backend's pool may open
    retry_seconds = 10.0         # how long a transient failure is retried before a StoreError
    connect_timeout = 5.0        # seconds, per connection attempt
    hnsw_m = 16                  # HNSW graph degree, when a collection's index is built
    hnsw_ef_construction = 128   # HNSW build candidate list, likewise
    hnsw_ef_search = 200         # HNSW search candidate list, per query (at least top_k)
    exact_limit = 20000          # candidate chunks up to which a vector search is exact
    hnsw_build_memory_mb = 1024  # maintenance_work_mem of an HNSW build (the graph in memory)
    hnsw_build_workers = 2       # its parallel maintenance workers (the server caps them)
    keyword_cache = true         # BM25 from the postings held in this process (false: in SQL)
    vector_cache_mb = 2048       # chunk vectors held in this process for filtered searches (0: off)
    metadata_index_mb = 512      # chunk metadata held in this process to evaluate filters (0: off)

Every key is optional; an unknown key or a wrong type or range is a `ConfigError` naming the
file and the key. The HNSW build settings apply to vector indexes built from then on (a
collection's existing index keeps the settings it was built with).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ragwright.errors import ConfigError

#: pgvector takes HNSW settings that are integers in this range.
HNSW_RANGE = (1, 1000)
#: Of each key: its type and least value (the HNSW ones are also at most 1000).
_RULES: dict[str, tuple[type, float]] = {
    "pool_size": (int, 1),
    "retry_seconds": (float, 0),
    "connect_timeout": (float, 0.001),
    "hnsw_m": (int, 1),
    "hnsw_ef_construction": (int, 1),
    "hnsw_ef_search": (int, 1),
    "exact_limit": (int, 0),
    "hnsw_build_memory_mb": (int, 64),
    "hnsw_build_workers": (int, 0),
    "keyword_cache": (bool, 0),
    "vector_cache_mb": (int, 0),
    "metadata_index_mb": (int, 0),
}

#: The keys that are pgvector's own HNSW settings (`check_hnsw`).
_PGVECTOR_SETTINGS = ("hnsw_m", "hnsw_ef_construction", "hnsw_ef_search")

#: Keys of ``[store.sqlite]`` that PostgreSQL leaves to the server, and what to set there.
_SQLITE_ONLY = {
    "durability": (
        "is a [store.sqlite] setting: on PostgreSQL a commit's durability is the server's "
        "(synchronous_commit = on, its default, survives an OS crash or power loss; off may "
        "lose the last commits, never part of one)"
    ),
    "private": "is a [store.sqlite] setting: on PostgreSQL access is the server's roles' own",
}


@dataclass(frozen=True, slots=True)
class PostgresOptions:
    """`PostgresBackend`'s keyword arguments, with its defaults."""

    pool_size: int = 8
    retry_seconds: float = 10.0
    connect_timeout: float = 5.0
    hnsw_m: int = 16
    #: With ``hnsw_ef_search`` 200: recall@10 against exact search 0.994 on 1M clustered
    #: synthetic vectors (the shape embeddings have: topics; 100 and 150 gave 0.974 on the
    #: same 50 queries, at 5.58 / 6.01 / 6.31 ms p50 for 100 / 150 / 200), 1.000 on SciFact's
    #: MiniLM vectors and 100k clustered ones already at 100 (benchmarks/postgres_hnsw.py,
    #: postgres_scale.py, docs/benchmarks.md). A cloud without structure (hashing-embedder
    #: vectors of random words) needs 300 for 0.968 (100: 0.915). With ef_construction 64 no
    #: ef_search up to 400 reliably reached 0.95 on that cloud; ``hnsw_m`` 24 doubles the
    #: build time for recall that 16 with ef_construction 128 also reaches.
    hnsw_ef_construction: int = 128
    hnsw_ef_search: int = 200
    exact_limit: int = 20_000
    #: An HNSW build's ``maintenance_work_mem`` and parallel workers, set for the build's
    #: transaction only: see `benchmarks/postgres_scale.py` for what they save.
    hnsw_build_memory_mb: int = 1024
    hnsw_build_workers: int = 2
    #: BM25 from a cache of the postings in the serving process, kept exact by the change log
    #: (`keyword_cache`); off, every search scores its terms' postings in SQL (same scores).
    keyword_cache: bool = True
    #: The chunks' vectors held in the serving process (`vector_cache`), so a filter's
    #: matches are ranked in numpy, not read from the heap: loaded whole in the background on
    #: the first filtered search when they fit in this many MB (1M x 384 dimensions: 1,465
    #: MB), read as searches need them meanwhile or otherwise (past it the cache starts
    #: over); 0: ranked in SQL.
    vector_cache_mb: int = 2048
    #: The chunks' metadata held in the serving process (`metadata_index`), so a filter on
    #: it is evaluated there, not by PostgreSQL reading its matches' pages: loaded in the
    #: background on the first filtered search when it fits in this many MB (1M chunks with
    #: two numeric keys: ~25 MB), kept exact by the change log; past it, or 0, filters are
    #: evaluated in SQL.
    metadata_index_mb: int = 512

    @classmethod
    def from_table(cls, table: Mapping[str, object], where: str) -> PostgresOptions:
        """The options a ``[store.postgres]`` table sets (``where`` names it in errors); the
        others keep their defaults."""
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key in _SQLITE_ONLY:
                raise ConfigError(f"{where}: {key!r} {_SQLITE_ONLY[key]}")
            if key not in _RULES:
                raise ConfigError(f"{where}: unknown key {key!r}; known: {', '.join(_RULES)}")
            values[key] = _checked(key, value, where)
        return cls(**values)

    def keywords(self) -> dict[str, Any]:
        """As keyword arguments of `PostgresBackend`."""
        return asdict(self)


def check_hnsw(name: str, value: object, where: str) -> None:
    """A `ConfigError` unless ``value`` is an HNSW setting pgvector takes."""
    low, high = HNSW_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where}{name} must be an integer from {low} to {high}, not {value!r}")


def _checked(key: str, value: object, where: str) -> int | float | bool:
    kind, least = _RULES[key]
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
        return value
    if key in _PGVECTOR_SETTINGS:
        check_hnsw(key, value, f"{where}: ")
    allowed = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed) or value < least:
        what = "an integer" if kind is int else "a number"
        raise ConfigError(f"{where}: {key} must be {what} >= {least:g}, not {value!r}")
    return int(value) if kind is int else float(value)
