"""The server's settings: the ``[server]`` table of ragwright.toml (limits and API keys).

    [server]
    max_request_kb = 1024        # JSON request bodies
    max_upload_mb = 100          # one multipart upload request, all files together
    max_file_mb = 50             # one uploaded file (as `ragwright ingest --max-file-size`)
    max_files = 100              # files in one upload request
    max_chunk_chars = 20000      # as `ragwright ingest --max-chunk-chars`
    upload_parse_seconds = 300   # one upload's files parsing, all together; the rest are skipped
    shutdown_timeout = 60        # seconds in-flight requests get to finish on shutdown
    header_timeout = 15          # seconds a request's headers may take to arrive (then 408)
    body_timeout = 30            # seconds a body may pause between two parts (then 408)
    body_min_rate = 500          # bytes/s a body must average once it has taken body_timeout
    max_connections = 256        # open connections; one more is answered 503 at once

    [server.keys.alice]          # written by `ragwright keys add alice --scope write`
    hash = "sha256:…"
    scope = "write"
    principals = ["group:hr"]    # optional: it reads only what these may (`keys add --principal`)

``/v1/search`` takes its defaults from the ``[search]`` table (see
`ragwright.pipeline.search.request`). Every key is optional; a wrong value is a `ConfigError`
naming the file and the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.permissions import check_principal
from ragwright.pipeline.ingest.ingestor import DEFAULT_INGEST
from ragwright.pipeline.search.request import SearchRequest
from ragwright.server.keys import HASH_PREFIX, KEY_NAME, ApiKey, Scope

KB = 1024
MB = 1024 * 1024

_NUMBERS: dict[str, tuple[str, int]] = {
    # TOML key: (field, unit in bytes or 1)
    "max_request_kb": ("max_request_bytes", KB),
    "max_upload_mb": ("max_upload_bytes", MB),
    "max_file_mb": ("max_file_bytes", MB),
    "max_files": ("max_files", 1),
    "max_chunk_chars": ("max_chunk_chars", 1),
    "shutdown_timeout": ("shutdown_timeout", 1),
    "max_connections": ("max_connections", 1),
    "body_min_rate": ("body_min_rate", 1),
}
#: Settings in seconds that may be fractions (a test's, or a strict deployment's, 0.5 s).
_SECONDS = ("header_timeout", "body_timeout", "upload_parse_seconds")


@dataclass(frozen=True)
class ConnectionLimits:
    """What `ragwright.server.connections` holds a connection to, below the application."""

    header_timeout: float = 15.0  # seconds for a request's headers to arrive
    body_timeout: float = 30.0  # seconds a body may pause between two parts
    max_connections: int = 256  # connections open at once
    #: Bytes per second a body must average once it has taken ``body_timeout`` seconds: a
    #: byte sent just before each pause ends would otherwise hold a connection for days.
    body_min_rate: int = 500


@dataclass(frozen=True)
class ServerSettings:
    keys: tuple[ApiKey, ...] = ()
    max_request_bytes: int = 1024 * KB
    max_upload_bytes: int = 100 * MB
    max_file_bytes: int = 50 * MB
    max_files: int = 100
    max_chunk_chars: int = DEFAULT_INGEST.max_chunk_chars
    #: Seconds one upload request may spend parsing its files, all together (each file also
    #: under ingest's per-file limit); the files left when they are spent are skipped.
    upload_parse_seconds: float = 300.0
    shutdown_timeout: int = 60
    #: Slowloris guards below the application (`ragwright.server.connections`).
    header_timeout: float = ConnectionLimits.header_timeout
    body_timeout: float = ConnectionLimits.body_timeout
    max_connections: int = ConnectionLimits.max_connections
    body_min_rate: int = ConnectionLimits.body_min_rate
    #: What ``/v1/search`` does with the fields a request leaves out: the ``[search]`` table.
    search: SearchRequest = field(default_factory=SearchRequest)

    @property
    def auth_required(self) -> bool:
        return bool(self.keys)

    @property
    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(
            self.header_timeout, self.body_timeout, self.max_connections, self.body_min_rate
        )

    @classmethod
    def from_config(cls, config: Config) -> ServerSettings:
        table = config.section("server")
        where = f"{config.where} [server]"
        values: dict[str, Any] = {}
        for name, value in table.items():
            if name == "keys":
                values["keys"] = _keys(value, where)
            elif name in _NUMBERS or name in _SECONDS:
                if (
                    not isinstance(value, int | float)
                    or isinstance(value, bool)
                    or not (
                        0 < value < math.inf  # nan and inf (valid TOML) are not limits
                    )
                ):
                    raise ConfigError(f"{where}: {name} must be a positive number, not {value!r}")
                if name in _SECONDS:
                    values[name] = float(value)
                else:
                    field, unit = _NUMBERS[name]
                    values[field] = max(1, int(value * unit))
            else:
                known = ", ".join(["keys", *_NUMBERS, *_SECONDS])
                raise ConfigError(f"{where}: unknown setting {name!r}; known: {known}")
        return cls(**values, search=SearchRequest.from_config(config))


def _keys(table: object, where: str) -> tuple[ApiKey, ...]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: keys must be a table of [server.keys.NAME] tables")
    keys = []
    for name, entry in table.items():
        here = f"{where} keys.{name}"
        if not KEY_NAME.match(name):
            raise ConfigError(f"{here}: key names use letters, digits, '-' and '_' only")
        if not isinstance(entry, dict):
            raise ConfigError(f"{here}: must be a table with hash and scope")
        digest, scope = entry.get("hash"), entry.get("scope")
        if not isinstance(digest, str) or not digest.startswith(HASH_PREFIX):
            raise ConfigError(f"{here}: hash must be a string starting with {HASH_PREFIX!r}")
        if scope not in {s.value for s in Scope}:
            raise ConfigError(f"{here}: scope must be 'read' or 'write', not {scope!r}")
        principals = entry.get("principals")
        if principals is not None and not isinstance(principals, list):
            raise ConfigError(f'{here}: principals must be a list such as ["group:hr"]')
        bound = None
        if principals is not None:
            bound = tuple(check_principal(p, f"{here} principals") for p in principals)
        keys.append(ApiKey(name, Scope(scope), digest, bound))
    return tuple(keys)


def default_table() -> dict[str, int | float]:
    """The ``[server]`` keys at their defaults, in the table's units (``ragwright init``)."""
    defaults = ServerSettings()
    table: dict[str, int | float] = {
        key: getattr(defaults, name) // unit for key, (name, unit) in _NUMBERS.items()
    }
    return table | {key: getattr(defaults, key) for key in _SECONDS}
