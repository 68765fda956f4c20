"""Layering rules: imports run down DESIGN.md's layers and no package imports another that
imports it back (``scripts/import_layers.py``); surfaces reach a store only through `Index` or a
narrow port, never a concrete store; every port in ports.py has a consumer."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Protocol

import pytest

from ragwright import Index, SearchRequest, ports
from ragwright.testing import HashingEmbedder

SOURCE = Path(ports.__file__).parent
LAYERS_SCRIPT = Path(__file__).parent.parent / "scripts" / "import_layers.py"
SURFACES = ("cli", "server", "mcp_server", "connector", "datasets")
CONCRETE_STORES = ("ragwright.stores.sqlite", "ragwright.stores.postgres")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("surface", SURFACES)
def test_surfaces_import_no_concrete_store(surface: str) -> None:
    offenders = [
        f"{path.relative_to(SOURCE)} imports {module}"
        for path in sorted((SOURCE / surface).rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(CONCRETE_STORES)
    ]
    assert offenders == []


def test_one_store_never_imports_the_other() -> None:
    """What both stores share lives in ``stores/`` itself (rows, settings, cached completions):
    each store package can be read, changed and shipped without the other."""
    offenders = [
        f"{path.relative_to(SOURCE)} imports {module}"
        for own, other in zip(CONCRETE_STORES, reversed(CONCRETE_STORES), strict=True)
        for path in sorted((SOURCE / "stores" / own.rsplit(".", 1)[1]).rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(other)
    ]
    assert offenders == []


def test_index_stays_a_thin_facade() -> None:
    """Issue 30: the composition root and facade wires workflow objects and delegates to them;
    what grows goes into a workflow (it had crept to 357 lines)."""
    lines = (SOURCE / "index.py").read_text("utf-8").count("\n")
    assert lines <= 350, f"index.py has {lines} lines"


def test_a_search_request_stays_small() -> None:
    """Issue 30: a step's settings are one nested value (`bm25`, `graph`, `passage`,
    `rerank`), spelled flat only on the surfaces; it had grown to 31 fields, then 20."""
    names = [field.name for field in dataclasses.fields(SearchRequest)]
    assert len(names) <= 18, names


def test_an_index_exposes_no_store(tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert not hasattr(kb, "store")


def test_every_port_has_a_consumer() -> None:
    """A protocol that nothing outside ports.py names is a promise nobody keeps: delete it."""
    protocols = [
        name
        for name, value in vars(ports).items()
        if inspect.isclass(value)
        and Protocol in value.__mro__[1:]
        and value.__module__ == ports.__name__
    ]
    others = [p.read_text("utf-8") for p in SOURCE.rglob("*.py") if p.name != "ports.py"]
    unused = [
        name for name in protocols if not any(re.search(rf"\b{name}\b", text) for text in others)
    ]
    assert protocols and unused == []


def import_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_layers", LAYERS_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_no_import_runs_up_a_layer() -> None:
    layers = import_layers()
    assert [f"{a.source} -> {a.target}" for a in layers.upward(layers.arrows())] == []


def test_no_package_imports_one_that_imports_it() -> None:
    layers = import_layers()
    assert layers.cycles(layers.arrows()) == []


def test_the_postgres_store_modules_import_no_circle() -> None:
    """Its parts depend on `connections` (the port the backend implements), not on the
    backend that opens them: before, 31 of its modules imported each other in one circle."""
    layers = import_layers()
    assert layers.module_cycles(layers.arrows(), "stores.postgres") == []
    circle = [layers.Arrow("stores.postgres.a", "stores.postgres.b")]
    circle.append(layers.Arrow("stores.postgres.b", "stores.postgres.a"))
    assert layers.module_cycles(circle, "stores.postgres") == [
        ["stores.postgres.a", "stores.postgres.b"]
    ]


def test_the_layer_rules_catch_what_they_forbid() -> None:
    """The checks themselves: an arrow from the ports up to the index, and a pair of packages
    importing each other, are found."""
    layers = import_layers()
    up = layers.Arrow("ports", "index")
    back = [layers.Arrow("graph.search", "planner.rules"), layers.Arrow("planner", "graph")]
    assert layers.upward([up]) == [up]
    assert layers.cycles(back) == [["graph", "planner"]]


def test_every_module_has_a_layer() -> None:
    layers = import_layers()
    for module in layers.modules():
        layers.layer(module)  # exits naming the module when none fits
