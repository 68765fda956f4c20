"""The import picture of ``src/ragwright``: package -> package arrows, those that run up a layer,
and package cycles.

    python scripts/import_layers.py            # the arrows, counted, then what breaks the rules
    python scripts/import_layers.py --quiet    # only what breaks the rules (exit 1 if anything)
    python scripts/import_layers.py --modules stores.postgres  # module circles inside a package

A *package* is a top-level package with its subpackages (``ragwright.stores``, whose
``stores.sqlite`` is part of it) or one flow of the pipeline (``ragwright.pipeline.search``); a
module at the package root (``ragwright.index``) is a package of its own. Every import
counts, lazy ones and ``TYPE_CHECKING`` ones too: each is a dependency.

``LAYERS`` is DESIGN.md's picture, bottom first: a module may import its own layer or one
below. A module takes the layer of the longest prefix of its name that ``LAYERS`` lists, so a
package's value modules can sit below the package's algorithms (the graph's records below the
ports that hand them out). ``tests/test_architecture.py`` holds the code to both rules.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "ragwright"

#: Bottom first. A name is a module or a package (its modules, unless a longer name says).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "values",
        (
            "errors",
            "models",
            "_lazy",
            "_http",
            "_surrogates",
            "_url_secrets",
            "_plugins",
            "freed_memory",
            "tracing",
            "config",
            "config_edit",
            "surface_limits",
            "sentences",
            "prose",
            "terms",
            "cjk",
            "filters",
            "permissions",
            "evaluation.metrics",
            "graph.keys",
            "graph.synonyms",
        ),
    ),
    ("ports", ("ports",)),
    (
        "adapters",
        (
            "parsers",
            "chunkers",
            "embedders",
            "stores",
            "llms",
            "sources",
            "ocr",
            "sparse",
            "rerankers",
            "graph.extractors",
        ),
    ),
    ("components", ("graph", "planner", "processors", "query", "answers")),
    ("pipeline", ("pipeline", "distributed", "datasets")),
    (
        "facade",
        (
            "index",
            "async_api",
            "knowledge",
            "reading",
            "federation",
            "collection_pool",
            "evaluation",
            "shapes",
            "connector",
        ),
    ),
    (
        "surfaces",
        ("cli", "server", "mcp_server", "integrations", "testing", "__init__", "__main__"),
    ),
)


@dataclass(frozen=True)
class Arrow:
    source: str  # module names, without the leading "ragwright."
    target: str


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def imported(path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The project modules ``path`` imports (``from package import module`` names the module)."""
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            names = [f"{base}.{alias.name}" for alias in node.names]
            names = [name for name in names if name.removeprefix("ragwright.") in known] or [base]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            if name.startswith("ragwright.") and name.removeprefix("ragwright.") in known:
                yield name.removeprefix("ragwright.")


def arrows() -> list[Arrow]:
    known = modules()
    return sorted(
        {
            Arrow(name, target)
            for name, path in known.items()
            for target in imported(path, known)
            if target != name
        },
        key=lambda arrow: (arrow.source, arrow.target),
    )


def package(module: str) -> str:
    """A top-level package, its subpackages included (``stores`` holds ``stores.sqlite``), or
    one flow of the pipeline (``pipeline.search``); a root module is a package of its own."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "pipeline" and len(parts) > 1 else parts[0]


def layer(module: str) -> int:
    best, found = -1, -1
    for rank, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), rank
    if found < 0:
        raise SystemExit(f"ragwright.{module} is in no layer: add it to LAYERS")
    return found


def upward(found: list[Arrow]) -> list[Arrow]:
    return [arrow for arrow in found if layer(arrow.target) > layer(arrow.source)]


def package_arrows(found: list[Arrow]) -> Counter[tuple[str, str]]:
    return Counter(
        (package(arrow.source), package(arrow.target))
        for arrow in found
        if package(arrow.source) != package(arrow.target)
    )


def cycles(found: list[Arrow]) -> list[list[str]]:
    """Strongly connected groups of packages (Tarjan), each of two or more."""
    return _circles(list(package_arrows(found)))


def module_cycles(found: list[Arrow], prefix: str) -> list[list[str]]:
    """Strongly connected groups of the modules named ``prefix`` or under it (the circles of
    imports inside one package, which `cycles` does not see), each of two or more."""

    def inside(module: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    return _circles([(a.source, a.target) for a in found if inside(a.source) and inside(a.target)])


def _circles(edges: list[tuple[str, str]]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only what breaks the rules")
    parser.add_argument("--modules", metavar="PACKAGE", help="the module circles inside PACKAGE")
    args = parser.parse_args()
    found = arrows()
    if args.modules:
        circles = module_cycles(found, args.modules)
        for group in circles:
            print(f"{len(group)} modules: {' <-> '.join(group)}")
        print(f"{len(circles)} module circles in {args.modules}")
        return 1 if circles else 0
    between = package_arrows(found)
    if not args.quiet:
        packages = {name for pair in between for name in pair}
        print(f"{len(packages)} packages, {len(between)} package -> package arrows")
        for (source, target), count in sorted(between.items()):
            print(f"  {source} -> {target}  ({count})")
    up = upward(found)
    groups = cycles(found)
    print(f"{len(up)} module imports run up a layer; {len(groups)} package cycles")
    for arrow in up:
        source_layer, target_layer = LAYERS[layer(arrow.source)][0], LAYERS[layer(arrow.target)][0]
        print(f"  up: {arrow.source} ({source_layer}) -> {arrow.target} ({target_layer})")
    for group in groups:
        print(f"  cycle: {' <-> '.join(group)}")
    return 1 if up or groups else 0


if __name__ == "__main__":
    sys.exit(main())
