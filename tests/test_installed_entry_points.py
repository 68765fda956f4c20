"""The installed entry points are read once, and again whenever a package may have been
installed or removed (`ragwright._plugins.installed_entry_points`)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from ragwright import _plugins
from ragwright._plugins import installed_entry_points
from ragwright.parsers.registry import ParserRegistry

GROUP = "ragwright.test_entry_point_reads"


def _install(site: Path, name: str) -> None:
    """A package with one entry point of `GROUP`, installed as pip leaves one."""
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {name}:Thing\n")


def _names() -> list[str]:
    return sorted(point.name for point in installed_entry_points(GROUP))


def test_a_package_installed_into_a_folder_already_read_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _install(site, "first_plugin")
    monkeypatch.syspath_prepend(str(site))
    assert _names() == ["first_plugin"]
    _install(site, "second_plugin")  # no change to the import path itself
    assert _names() == ["first_plugin", "second_plugin"]


def test_a_folder_leaving_the_import_path_takes_its_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _install(site, "leaving_plugin")
    with monkeypatch.context() as patched:
        patched.syspath_prepend(str(site))
        assert _names() == ["leaving_plugin"]
    assert str(site) not in sys.path
    assert _names() == []


def test_nothing_changed_reads_the_metadata_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = []

    def counted() -> metadata.EntryPoints:
        reads.append(1)
        return metadata.entry_points()

    monkeypatch.setattr(_plugins, "entry_points", counted)
    monkeypatch.setattr(_plugins, "_read", None)
    for _ in range(3):
        ParserRegistry.from_entry_points()
        installed_entry_points(GROUP)
    assert len(reads) == 1


def test_the_groups_hold_what_importlib_finds() -> None:
    for group in ("ragwright.parsers", "ragwright.embedders", GROUP):
        assert sorted(installed_entry_points(group)) == sorted(metadata.entry_points(group=group))
