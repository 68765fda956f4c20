"""The file-system source (``type = "files"``, ``paths = [...]``): folders synced by
`ragwright.pipeline.sync.folder_sync.FolderSync`, the change detection `ragwright watch` uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.sources.settings import SourceSettings


@dataclass(frozen=True, slots=True)
class FolderSource:
    """Folders to keep a collection equal to (relative ones are under the config's folder)."""

    roots: tuple[Path, ...]


def open_files(settings: SourceSettings) -> FolderSource:
    paths = settings.strings("paths")
    if not paths:
        raise ConfigError(f'{settings.where}: a files source needs paths = ["folder", ...]')
    return FolderSource(tuple(settings.path(p) for p in paths))
