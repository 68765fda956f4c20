"""Import circles between the modules of one package (``import_layers`` counts packages).

    python scripts/module_cycles.py stores.postgres     # each circle of 2+ modules, largest first

Every import counts, lazy and ``TYPE_CHECKING`` ones too, as in ``import_layers``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_layers as layers


def circles(prefix: str) -> list[list[str]]:
    """Strongly connected groups (of two or more) of the modules named ``prefix`` or under it."""
    inside = [
        (arrow.source, arrow.target)
        for arrow in layers.arrows()
        if _under(arrow.source, prefix) and _under(arrow.target, prefix)
    ]
    graph: dict[str, set[str]] = {}
    for source, target in inside:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    groups: list[list[str]] = []
    seen: set[str] = set()
    for node in sorted(graph):
        if node in seen:
            continue
        group = sorted(n for n in _reach(graph, node) if node in _reach(graph, n))
        seen.update(group)
        if len(group) > 1:
            groups.append(group)
    return sorted(groups, key=len, reverse=True)


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    found, todo = {start}, [start]
    while todo:
        for other in graph[todo.pop()]:
            if other not in found:
                found.add(other)
                todo.append(other)
    return found


if __name__ == "__main__":
    for group in circles(sys.argv[1] if len(sys.argv) > 1 else "stores"):
        print(f"{len(group)} modules: {' '.join(group)}")
