"""The ``meta`` table: an index's settings and the embedding space its vectors live in."""

from __future__ import annotations

import json
from dataclasses import asdict

from ragwright.errors import EmbeddingSpaceMismatch
from ragwright.models import EmbeddingSpace
from ragwright.stores.sqlite.database import Database


class SQLiteSettings:
    """Key/value settings; the embedding space is one of them, recorded once."""

    _db: Database
    _space: EmbeddingSpace | None

    def get_setting(self, key: str) -> str | None:
        rows = self._db.query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_setting(self, key: str, value: str) -> None:
        if self.get_setting(key) == value:
            return  # re-runs with the same settings write nothing
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @property
    def space(self) -> EmbeddingSpace | None:
        """The recorded embedding space. Once recorded it never changes, so it is read from
        the database only until it exists (every search asks for it)."""
        if self._space is None:
            raw = self.get_setting("embedding_space")
            self._space = EmbeddingSpace(**json.loads(raw)) if raw else None
        return self._space

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the index's embedding space, or check that ``space`` is the recorded one."""
        with self._db.lock:
            recorded = self.space
            if recorded is None:
                self.set_setting("embedding_space", json.dumps(asdict(space), sort_keys=True))
            elif not recorded.compatible_with(space):
                raise EmbeddingSpaceMismatch(recorded.describe(), space.describe())
