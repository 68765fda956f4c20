"""Layering rules that keep the stores swappable: surfaces reach a store only through `Index`
or a narrow port, never a concrete store; every port in ports.py has a consumer."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Protocol

import pytest

from ragwright import Index, ports
from ragwright.testing import HashingEmbedder

SOURCE = Path(ports.__file__).parent
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
