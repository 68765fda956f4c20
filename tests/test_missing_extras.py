"""Every command behind an optional extra says which extra to install when it is missing:
one `error:` line naming the pip line, exit code 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright.cli import app

runner = CliRunner()

# The third-party module each extra provides, and the ragwright packages that import it.
EXTRAS = {
    "server": ("fastapi", ("ragwright.server",)),
    "mcp": ("mcp", ("ragwright.mcp_server",)),
    "rag-connector": ("rag_connector", ("ragwright.datasets", "ragwright.connector")),
    "ray": ("ray", ()),  # ragwright.distributed imports Ray only when a run starts
    "ann": ("faiss", ()),  # imported inside the function that needs it
}


@pytest.fixture
def restored_modules() -> Iterator[None]:
    """sys.modules exactly as before, so modules imported afresh under a hidden dependency do
    not replace the ones the rest of the suite holds."""
    before = dict(sys.modules)
    yield
    sys.modules.clear()
    sys.modules.update(before)
    for name, module in before.items():  # a package's attribute names its submodule too
        parent, _, child = name.rpartition(".")
        if before.get(parent) is not None and module is not None:
            setattr(before[parent], child, module)


def hide(extra: str) -> None:
    """Make ``extra``'s module fail to import, as if it were not installed."""
    module, packages = EXTRAS[extra]
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in packages):
            del sys.modules[name]
        elif name.startswith(module + "."):  # found by full name, it would import anyway
            sys.modules[name] = None  # type: ignore[assignment]
    sys.modules[module] = None  # type: ignore[assignment]


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text("# Tea\n\nGreen tea is steamed.\n")
    index = tmp_path / "kb"
    built = runner.invoke(app, ["ingest", str(tmp_path / "a.md"), "--index", str(index),
                                "--embedder", "hashing"])  # fmt: skip
    assert built.exit_code == 0, built.output
    return index


@pytest.mark.parametrize(
    ("extra", "command"),
    [
        ("server", ["serve", "--index", "{kb}", "--port", "0"]),
        ("server", ["keys", "add", "bot", "--config", "{tmp}/ragwright.toml"]),
        ("server", ["keys", "list", "--config", "{tmp}/ragwright.toml"]),
        ("server", ["keys", "remove", "bot", "--config", "{tmp}/ragwright.toml"]),
        ("mcp", ["mcp", "--index", "{kb}"]),
        ("rag-connector", ["dataset", "build", "{tmp}", "--out", "{tmp}/ds"]),
        ("rag-connector", ["dataset", "export", "--index", "{kb}", "--out", "{tmp}/ds"]),
        ("rag-connector", ["ingest", "--dataset", "{tmp}/ds", "--index", "{kb}"]),
        ("ray", ["ingest", "{tmp}/a.md", "--index", "{kb}", "--engine", "ray"]),
        ("ann", ["index", "--ann", "on", "--index", "{kb}"]),
    ],
)
@pytest.mark.usefixtures("restored_modules")
def test_a_command_without_its_extra_names_the_install_line(
    extra: str, command: list[str], kb: Path, tmp_path: Path
) -> None:
    (tmp_path / "ragwright.toml").write_text("")
    args = [arg.format(kb=kb, tmp=tmp_path) for arg in command]
    hide(extra)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"pip install 'ragwright[{extra}]'" in result.output
