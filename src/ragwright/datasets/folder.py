"""Reading and writing dataset folders through rag-connector's own reader and writer, so every
folder written here is verified end to end and every folder read has its hashes checked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rag_connector.base import ChunkRecord
from rag_connector.dataset import (
    MANIFEST_FILE,
    Dataset,
    DatasetIntegrityError,
    read_dataset_folder,
    write_dataset_folder,
)

from ragwright.errors import DatasetError


def read_dataset(folder: Path) -> Dataset:
    """A verified dataset, or a `DatasetError` that names the file at fault."""
    try:
        return read_dataset_folder(folder)
    except FileNotFoundError as error:
        raise DatasetError(
            f"{folder / MANIFEST_FILE}: not found; {folder} is not a dataset folder"
        ) from error
    except (DatasetIntegrityError, ValueError, TypeError, KeyError) as error:
        raise DatasetError(f"{folder}: {error}") from error


def write_dataset(
    out: Path, records: Iterable[ChunkRecord], *, name: str, chunking: Mapping[str, Any]
) -> Dataset:
    """Write a new dataset folder (``out`` must not exist or be empty) and read it back."""
    records = list(records)
    if not records:
        raise DatasetError(f"{out}: nothing to write; a dataset needs at least one chunk")
    try:
        return write_dataset_folder(out, records, name=name, chunking=chunking)
    except (FileExistsError, ValueError) as error:
        raise DatasetError(f"{out}: {error}") from error
