"""Progress as plain lines, for stderr that is not a terminal (a log file, a CI job, a pipe):
a live bar cannot be drawn there, and Rich would print nothing until the end."""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape


class LineProgress:
    """A line when a task starts, each time it passes another tenth, and when it is done."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._shown: dict[str, int] = {}  # task → tenths shown
        self._started: dict[str, float] = {}

    def update(self, task: str, done: int, total: int | None, detail: str = "") -> None:
        tenths = 10 * done // total if total else (10 if total == 0 else 0)
        if task in self._shown and tenths <= self._shown[task]:
            return
        self._started.setdefault(task, time.monotonic())
        self._shown[task] = tenths
        line = f"{task}: {done:,}/{total:,}" if total is not None else f"{task}: {done:,}"
        line += f" {detail}" if detail else ""
        if total is not None and done >= total:
            line += f" (done in {time.monotonic() - self._started[task]:.1f} s)"
        self.console.print(escape(line), soft_wrap=True, highlight=False)
