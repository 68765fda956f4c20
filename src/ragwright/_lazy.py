"""A value built on first use, once, even when several threads ask at the same time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """``Lazy(build).get()`` calls ``build`` the first time and returns its result ever after.
    Models, sessions and tokenizers are loaded this way so that constructing an adapter is
    cheap and read-only commands never load anything."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    def get(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]
