"""The LLM's tables in the index's SQLite: the cost ledger and the response cache.

- ``llm_calls``: one row per LLM call that reached a server: when, scope (request, ingest),
  model, prompt and completion tokens, estimated cost (NULL when the model has no price).
- ``llm_cache``: completions by content hash (see `ragwright.llms.cache`), as JSON, with the
  number of times each was reused.
- ``llm_keys``: the random key of the prompts' fence tokens (see `ragwright.llms.prompt`).

Its own connection to the index file (WAL mode lets it sit beside the store's), its own tables,
created on the first write, so reading an index never changes it. Writes here do not bump the
index's write generation: they change nothing a search reads.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragwright.errors import StoreError
from ragwright.models import CacheStats, LedgerRow, Usage
from ragwright.ports import CachedResponse, Completion, RecordedCall
from ragwright.stores.llm_rows import completion_json, completion_of

_DDL = """
CREATE TABLE IF NOT EXISTS llm_calls (
    id                INTEGER PRIMARY KEY,
    at                TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    scope             TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost              REAL
);
CREATE INDEX IF NOT EXISTS llm_calls_model ON llm_calls(model);
CREATE TABLE IF NOT EXISTS llm_keys (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_cache (
    key        TEXT PRIMARY KEY,
    model      TEXT NOT NULL,
    completion TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    hits       INTEGER NOT NULL DEFAULT 0
);
"""


class SQLiteLLMRecords:
    """The ledger and the response cache of one index. Safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ready = False
        self._boundary_key: bytes | None = None
        try:
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as error:
            raise StoreError(f"cannot open {self.path}: {error}") from error

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- ledger --------------------------------------------------------------------------------

    def record_call(self, scope: str, model: str, usage: Usage, cost: float | None) -> None:
        self._write(
            "INSERT INTO llm_calls(scope, model, prompt_tokens, completion_tokens, cost) "
            "VALUES (?, ?, ?, ?, ?)",
            (scope, model, usage.prompt_tokens, usage.completion_tokens, cost),
        )

    def ledger(self) -> list[LedgerRow]:
        """Totals per model, the most used first."""
        rows = self._read(
            "SELECT model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost) "
            "FROM llm_calls GROUP BY model ORDER BY COUNT(*) DESC, model",
            table="llm_calls",
        )
        return [LedgerRow(str(m), int(c), int(p), int(o), s) for m, c, p, o, s in rows]

    # -- response cache -----------------------------------------------------------------------

    def get_response(self, key: str) -> Completion | None:
        rows = self._read("SELECT completion FROM llm_cache WHERE key = ?", (key,), "llm_cache")
        if not rows:
            return None
        self._write("UPDATE llm_cache SET hits = hits + 1 WHERE key = ?", (key,))
        return completion_of(json.loads(rows[0][0]))

    def put_response(self, key: str, completion: Completion) -> None:
        self._write(
            "INSERT OR REPLACE INTO llm_cache(key, model, completion) VALUES (?, ?, ?)",
            (key, completion.model, json.dumps(completion_json(completion), ensure_ascii=False)),
        )

    def cache_stats(self) -> CacheStats:
        rows = self._read("SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM llm_cache", (), "llm_cache")
        return CacheStats(int(rows[0][0]), int(rows[0][1])) if rows else CacheStats(0, 0)

    def clear_cache(self) -> int:
        """Forget every cached response; returns how many there were."""
        return self._write("DELETE FROM llm_cache", ())

    def boundary_key(self) -> bytes:
        """This index's fence-token key: 32 random bytes, made on first use, then kept (read
        once per connection, so a request does not write to the index to learn it)."""
        if self._boundary_key is None:
            rows = self._read("SELECT value FROM llm_keys WHERE name = 'boundary'", (), "llm_keys")
            if not rows:
                self._write(
                    "INSERT OR IGNORE INTO llm_keys(name, value) VALUES ('boundary', ?)",
                    (secrets.token_bytes(32),),
                )
                rows = self._read(
                    "SELECT value FROM llm_keys WHERE name = 'boundary'", (), "llm_keys"
                )
            self._boundary_key = bytes(rows[0][0])
        return self._boundary_key

    # -- copying (ragwright migrate) ------------------------------------------------------------

    def recorded_calls(self) -> list[RecordedCall]:
        rows = self._read(
            "SELECT at, scope, model, prompt_tokens, completion_tokens, cost FROM llm_calls "
            "ORDER BY id",
            table="llm_calls",
        )
        return [RecordedCall(_time(a), s, m, int(p), int(c), o) for a, s, m, p, c, o in rows]

    def cached_responses(self) -> list[CachedResponse]:
        rows = self._read(
            "SELECT key, completion, created_at, hits FROM llm_cache ORDER BY key",
            table="llm_cache",
        )
        return [
            CachedResponse(k, completion_of(json.loads(c)), _time(t), int(h)) for k, c, t, h in rows
        ]

    def stored_boundary_key(self) -> bytes | None:
        rows = self._read("SELECT value FROM llm_keys WHERE name = 'boundary'", (), "llm_keys")
        return bytes(rows[0][0]) if rows else None

    def add_records(
        self,
        calls: Sequence[RecordedCall],
        responses: Sequence[CachedResponse],
        boundary_key: bytes | None,
    ) -> None:
        with self._lock:
            try:
                if not self._ready:
                    self._db.executescript(_DDL)
                    self._ready = True
                with self._db:  # one transaction
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany(
                        "INSERT INTO llm_calls(at, scope, model, prompt_tokens, "
                        "completion_tokens, cost) VALUES (?, ?, ?, ?, ?, ?)",
                        [(_text(c.at), c.scope, c.model, c.prompt_tokens, c.completion_tokens,
                          c.cost) for c in calls],
                    )  # fmt: skip
                    self._db.executemany(
                        "INSERT OR IGNORE INTO llm_cache(key, model, completion, created_at, "
                        "hits) VALUES (?, ?, ?, ?, ?)",
                        [(r.key, r.completion.model, json.dumps(completion_json(r.completion),
                          ensure_ascii=False), _text(r.created_at), r.hits) for r in responses],
                    )  # fmt: skip
                    if boundary_key is not None:
                        self._db.execute(
                            "INSERT OR IGNORE INTO llm_keys(name, value) VALUES ('boundary', ?)",
                            (boundary_key,),
                        )
            except sqlite3.Error as error:
                raise StoreError(f"cannot write the LLM records in {self.path}: {error}") from error
        self._boundary_key = None  # read again: the stored key may be the one just added

    # -- plumbing -----------------------------------------------------------------------------

    def _write(self, sql: str, params: Sequence[object]) -> int:
        """Runs ``sql``, creating the tables first if need be; returns the rows it changed."""
        with self._lock:
            try:
                if not self._ready:
                    self._db.executescript(_DDL)
                    self._ready = True
                return self._db.execute(sql, params).rowcount
            except sqlite3.Error as error:
                raise StoreError(f"cannot write the LLM records in {self.path}: {error}") from error

    def _read(self, sql: str, params: Sequence[object] = (), table: str = "") -> list[Any]:
        """Rows of ``sql``; none while ``table`` does not exist (nothing was written yet)."""
        with self._lock:
            try:
                # Once this connection has created the tables, a read (a cache lookup per LLM
                # call) need not ask sqlite_master whether they exist.
                if not self._ready and not self._has_table(table):
                    return []
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as error:
                raise StoreError(f"cannot read the LLM records in {self.path}: {error}") from error

    def _has_table(self, table: str) -> bool:
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self._db.execute(sql, (table,)).fetchone() is not None


def _time(text: str) -> datetime:
    """A stored time (UTC, ``…T…Z``, as SQLite's ``strftime`` writes it) as an aware datetime."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _text(moment: datetime) -> str:
    """An aware datetime as a stored time (UTC, microseconds kept)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
