"""The LLM's tables in PostgreSQL: the cost ledger and the response cache of one index.

The same records as `ragwright.stores.sqlite.llm_records` (which documents them), in the schema
``ragwright`` beside the collections: ``llm_calls``, ``llm_cache``, ``llm_keys``. The tables
are created on the first write, so reading an index never changes it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql
from psycopg.types.json import Jsonb

from ragwright.models import CacheStats, LedgerRow, Usage
from ragwright.ports import CachedResponse, Completion, RecordedCall
from ragwright.stores.llm_rows import completion_json, completion_of
from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.schema import INDEX_SCHEMA

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.connections import Connections

_DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.llm_calls (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at                timestamptz NOT NULL DEFAULT now(),
    scope             text NOT NULL,
    model             text NOT NULL,
    prompt_tokens     integer NOT NULL,
    completion_tokens integer NOT NULL,
    cost              double precision
);
CREATE INDEX IF NOT EXISTS llm_calls_model ON {s}.llm_calls (model);
CREATE TABLE IF NOT EXISTS {s}.llm_keys (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.llm_cache (
    key        text PRIMARY KEY,
    model      text NOT NULL,
    completion jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    hits       integer NOT NULL DEFAULT 0
);
"""


class PostgresLLMRecords:
    """The ledger and the response cache of one PostgreSQL index. Safe to share between
    threads; it uses its backend's pool (closing it closes nothing the backend owns)."""

    def __init__(self, backend: Connections) -> None:
        self.backend = backend
        self._ready = False
        self._boundary_key: bytes | None = None
        self._schema = sql.Identifier(INDEX_SCHEMA)

    def close(self) -> None:
        """Nothing to release: the connections are the backend's."""

    # -- ledger --------------------------------------------------------------------------------

    def record_call(self, scope: str, model: str, usage: Usage, cost: float | None) -> None:
        self._write(
            "INSERT INTO {s}.llm_calls (scope, model, prompt_tokens, completion_tokens, cost) "
            "VALUES (%s, %s, %s, %s, %s)",
            (scope, model, usage.prompt_tokens, usage.completion_tokens, cost),
        )

    def ledger(self) -> list[LedgerRow]:
        """Totals per model, the most used first."""
        rows = self._read(
            "SELECT model, count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost) "
            "FROM {s}.llm_calls GROUP BY model ORDER BY count(*) DESC, model",
        )
        return [
            LedgerRow(str(m), int(c), int(p), int(o), None if s is None else float(s))
            for m, c, p, o, s in rows
        ]

    # -- response cache -----------------------------------------------------------------------

    def get_response(self, key: str) -> Completion | None:
        """The cached completion for ``key`` (counting the hit), or None."""
        rows = self._read(
            "UPDATE {s}.llm_cache SET hits = hits + 1 WHERE key = %s RETURNING completion", (key,)
        )
        return completion_of(rows[0][0]) if rows else None

    def put_response(self, key: str, completion: Completion) -> None:
        self._write(
            "INSERT INTO {s}.llm_cache (key, model, completion) VALUES (%s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET model = excluded.model, "
            "completion = excluded.completion, created_at = now(), hits = 0",
            (key, completion.model, Jsonb(completion_json(completion))),
        )

    def cache_stats(self) -> CacheStats:
        rows = self._read("SELECT count(*), coalesce(sum(hits), 0) FROM {s}.llm_cache")
        return CacheStats(int(rows[0][0]), int(rows[0][1])) if rows else CacheStats(0, 0)

    def clear_cache(self) -> int:
        """Forget every cached response; returns how many there were."""
        return self._write("DELETE FROM {s}.llm_cache", ())

    def boundary_key(self) -> bytes:
        """This index's fence-token key: 32 random bytes, made on first use, then kept."""
        if self._boundary_key is None:
            select = "SELECT value FROM {s}.llm_keys WHERE name = 'boundary'"
            rows = self._read(select)
            if not rows:
                self._write(
                    "INSERT INTO {s}.llm_keys (name, value) VALUES ('boundary', %s) "
                    "ON CONFLICT DO NOTHING",
                    (secrets.token_bytes(32),),
                )
                rows = self._read(select)
            self._boundary_key = bytes(rows[0][0])
        return self._boundary_key

    # -- copying (ragwright migrate) ------------------------------------------------------------

    def recorded_calls(self) -> list[RecordedCall]:
        rows = self._read(
            "SELECT at, scope, model, prompt_tokens, completion_tokens, cost "
            "FROM {s}.llm_calls ORDER BY id"
        )
        return [RecordedCall(a, s, m, int(p), int(c), o) for a, s, m, p, c, o in rows]

    def cached_responses(self) -> list[CachedResponse]:
        rows = self._read(
            "SELECT key, completion, created_at, hits FROM {s}.llm_cache ORDER BY key"
        )
        return [CachedResponse(k, completion_of(c), t, int(h)) for k, c, t, h in rows]

    def stored_boundary_key(self) -> bytes | None:
        rows = self._read("SELECT value FROM {s}.llm_keys WHERE name = 'boundary'")
        return bytes(rows[0][0]) if rows else None

    def add_records(
        self,
        calls: Sequence[RecordedCall],
        responses: Sequence[CachedResponse],
        boundary_key: bytes | None,
    ) -> None:
        def add(conn: Connection[Any]) -> None:
            if not self._ready:
                self._create(conn)
            with conn.cursor() as cursor:
                cursor.executemany(
                    self._sql("INSERT INTO {s}.llm_calls (at, scope, model, prompt_tokens, "
                              "completion_tokens, cost) VALUES (%s, %s, %s, %s, %s, %s)"),
                    [(c.at, c.scope, c.model, c.prompt_tokens, c.completion_tokens, c.cost)
                     for c in calls],
                )  # fmt: skip
                cursor.executemany(
                    self._sql("INSERT INTO {s}.llm_cache (key, model, completion, created_at, "
                              "hits) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING"),
                    [(r.key, r.completion.model, Jsonb(completion_json(r.completion)), r.created_at,
                      r.hits) for r in responses],
                )  # fmt: skip
            if boundary_key is not None:
                conn.execute(
                    self._sql("INSERT INTO {s}.llm_keys (name, value) VALUES ('boundary', %s) "
                              "ON CONFLICT DO NOTHING"),
                    (boundary_key,),
                )  # fmt: skip

        self.backend.run(add, "copying the LLM records")
        self._ready = True
        self._boundary_key = None  # read again: the stored key may be the one just added

    # -- plumbing -----------------------------------------------------------------------------

    def _sql(self, statement: str) -> sql.Composed:
        return sql.SQL(statement).format(s=self._schema)

    def _write(self, statement: str, params: tuple[object, ...]) -> int:
        """Runs ``statement``, creating the tables first if need be; returns its row count."""
        composed = sql.SQL(statement).format(s=self._schema)

        def work(conn: Connection[Any]) -> int:
            if not self._ready:
                self._create(conn)
            return conn.execute(composed, params).rowcount

        count = self.backend.run(work, "writing the LLM records")
        self._ready = True
        return count

    def _read(self, statement: str, params: tuple[object, ...] = ()) -> list[Any]:
        """Rows of ``statement``; none while the tables do not exist (nothing was written)."""
        composed = sql.SQL(statement).format(s=self._schema)

        def work(conn: Connection[Any]) -> list[Any]:
            if not self._ready:
                found = conn.execute("SELECT to_regclass(%s)", (f"{INDEX_SCHEMA}.llm_keys",))
                row = found.fetchone()
                if row is None or row[0] is None:
                    return []
            return conn.execute(composed, params).fetchall()

        return self.backend.run(work, "reading the LLM records")

    def _create(self, conn: Connection[Any]) -> None:
        found = conn.execute("SELECT to_regclass(%s)", (f"{INDEX_SCHEMA}.llm_keys",)).fetchone()
        if found is not None and found[0] is not None:
            return
        lock_schema(conn, INDEX_SCHEMA)
        conn.execute(sql.SQL(_DDL).format(s=self._schema))
