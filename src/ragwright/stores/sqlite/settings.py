"""The ``meta`` table: an index's settings and the embedding space its vectors live in."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ragwright.errors import EmbeddingSpaceChanged, EmbeddingSpaceMismatch
from ragwright.models import EmbeddingSpace
from ragwright.stores.rows import space_from_json, space_json
from ragwright.stores.setting_rows import checked
from ragwright.stores.sqlite.database import Database


class SQLiteSettings:
    """Key/value settings; the embedding space is one of them, recorded once. What was made
    for one space (the search's vector cache) listens for its change (`on_space_changed`)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._space: EmbeddingSpace | None = None
        self._checked_space: tuple[int, EmbeddingSpace] | None = None
        self._space_listeners: list[Callable[[], None]] = []

    def on_space_changed(self, forget: Callable[[], None]) -> None:
        """Call ``forget`` whenever the recorded space changes (a `reindex` swap)."""
        self._space_listeners.append(forget)

    def get_setting(self, key: str) -> str | None:
        """The row ``key`` of ``meta``; `BrokenSetting` for a value its rule refuses."""
        rows = self._db.query("SELECT value FROM meta WHERE key = ?", (key,))
        return checked(str(self._db.path), key, str(rows[0][0]) if rows else None)

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
        """The recorded embedding space. Only a `reindex` swap changes it once recorded, and
        a search notices that inside its snapshot (`check_space`), so it is read from the
        database only until it exists (every search asks for it)."""
        if self._space is None:
            self._space = space_from_json(self.get_setting("embedding_space"), str(self._db.path))
        return self._space

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the index's embedding space, or check that ``space`` is the recorded one."""
        with self._db.lock:
            recorded = self.space
            if recorded is None:
                self.set_setting("embedding_space", space_json(space))
            elif not recorded.compatible_with(space):
                raise EmbeddingSpaceMismatch(recorded.describe(), space.describe())

    def check_space(self, space: EmbeddingSpace, generation: int) -> None:
        """Inside a read snapshot tagged ``generation``: `EmbeddingSpaceChanged` when the
        recorded space is no longer ``space`` (the one a query was embedded for), after which
        `space` is the new one. A swap is a write, which bumps the generation: so a generation
        already found to hold ``space`` is not read again (every search asks)."""
        if (generation, space) == self._checked_space:
            return
        row = self._db.connection.execute(
            "SELECT value FROM meta WHERE key = 'embedding_space'"
        ).fetchone()
        if row is None:
            return
        recorded = space_from_json(row[0], str(self._db.path))
        if recorded == space:
            self._checked_space = (generation, space)
        elif recorded is not None:
            self.space_changed(recorded)
            raise EmbeddingSpaceChanged(recorded.describe(), space.describe())

    def space_changed(self, space: EmbeddingSpace) -> None:
        """Forget what was made for the old space: the vector cache is made again for this."""
        self._space = space
        for forget in self._space_listeners:
            forget()


def recorded_space(db: sqlite3.Connection) -> EmbeddingSpace | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'embedding_space'").fetchone()
    return space_from_json(row[0]) if row else None
