from __future__ import annotations

import threading
import time

import pytest

from ragwright._lazy import Lazy


def test_builds_once_even_when_threads_race() -> None:
    calls: list[int] = []

    def build() -> str:
        calls.append(1)
        time.sleep(0.05)  # widen the window in which a second build could start
        return "model"

    lazy = Lazy(build)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(lazy.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["model"] * 8 and calls == [1]


def test_a_failed_build_is_retried_on_the_next_use() -> None:
    attempts: list[int] = []

    def build() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk hiccup")
        return 42

    lazy = Lazy(build)
    with pytest.raises(OSError):
        lazy.get()
    assert lazy.get() == 42 and len(attempts) == 2
