"""Find the files an ingest run should read, applying the safety limits before any parsing.

Folders are walked recursively in sorted order (so runs are reproducible), dot-directories and
dot-files are skipped, symlinks are refused unless followed on purpose, and files over the size
limit are reported rather than read. An entry that cannot be examined (a link the walk may not
follow, a name the file system refuses) is reported, and the walk goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import IngestLimitExceeded


@dataclass(frozen=True, slots=True)
class Candidate:
    path: Path
    source: str
    size: int
    #: The modification time seen when the file was found (what the watcher compares).
    mtime_ns: int = 0


@dataclass(frozen=True, slots=True)
class Rejection:
    source: str
    reason: str
    #: False for a file met inside a folder and left alone on purpose (a symbolic link);
    #: True for a file that should have been read (named explicitly, too large, ...).
    failed: bool = True
    #: True when the entry could not be examined at all (a folder that cannot be listed, a
    #: file that cannot be stat-ed): the walk saw less than is there.
    unexamined: bool = False


@dataclass(frozen=True, slots=True)
class Discovery:
    candidates: list[Candidate]
    rejected: list[Rejection]
    #: Sources under the walked roots that exist but were not candidates (skipped or refused).
    present: set[str]

    @property
    def complete(self) -> bool:
        """Whether every entry under the roots was examined: only then may a file missing
        from the walk be taken for deleted."""
        return not any(r.unexamined for r in self.rejected)


def source_name(path: Path, base: Path) -> str:
    """How a file is named in the index: relative to ``base`` (the folder holding the index
    directory) when inside it, else absolute. The name does not depend on the working
    directory, so re-runs from anywhere find the same documents."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return absolute.as_posix()


def source_path(source: str, base: Path) -> Path:
    """The file a source name stands for (the inverse of `source_name`)."""
    path = Path(source)
    return path if path.is_absolute() else base / path


def discover(
    paths: list[Path],
    *,
    base: Path,
    supports: Callable[[Path], bool],
    max_file_size: int,
    follow_symlinks: bool = False,
    named: bool = True,
) -> Discovery:
    """Walk ``paths``. Files named explicitly are always candidates (an unsupported one is a
    rejection); files found in folders are candidates only when a parser supports them.
    ``named=False`` treats files in ``paths`` as found in a folder (the watcher's changed
    files: an unsupported one is skipped, not failed)."""
    candidates: list[Candidate] = []
    rejected: list[Rejection] = []
    present: set[str] = set()
    unsupported: set[str] = set()
    for root in paths:
        if not os.path.lexists(root):
            missing = Rejection(source_name(root, base), "no such file or directory", True, True)
            rejected.append(missing)
            continue
        explicit = named and not _is_folder(root, follow_symlinks)
        for path in _walk(root, follow_symlinks, rejected, base):
            source = source_name(path, base)
            if source in present and not (explicit and source in unsupported):
                continue
            if source in unsupported:  # found in a folder, then named: reported as named
                rejected = [r for r in rejected if r.source != source]
            present.add(source)
            try:
                problem = _problem(path, explicit, supports, max_file_size, follow_symlinks)
                found = path.stat() if problem is None else None
            except OSError as error:
                problem = f"cannot be read: {error.strerror or error}"
                rejected.append(Rejection(source, problem, unexamined=True))
                continue
            if problem == "":  # an unsupported file inside a folder: skipped, not failed
                unsupported.add(source)
                rejected.append(Rejection(source, _no_parser(path), failed=False))
            elif problem is not None:
                refused_link = not (explicit or follow_symlinks) and _is_link(path)
                rejected.append(Rejection(source, problem, failed=not refused_link))
            elif found is not None:
                candidates.append(Candidate(path, source, found.st_size, found.st_mtime_ns))
    return Discovery(candidates, rejected, present)


def _no_parser(path: Path) -> str:
    kind = f"{path.suffix.lower()} files" if path.suffix else "files without an extension"
    return f"unsupported file type: no parser reads {kind}"


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:
        return False


def _is_folder(path: Path, follow_symlinks: bool) -> bool:
    """Whether the walk goes into ``path``: a folder, and no link unless links are followed.
    A path that cannot be examined is none: it is yielded as a file, and reported."""
    if _is_link(path) and not follow_symlinks:
        return False
    try:
        return path.is_dir()
    except OSError:
        return False


def _problem(
    path: Path,
    explicit: bool,
    supports: Callable[[Path], bool],
    max_file_size: int,
    follow_symlinks: bool,
) -> str | None:
    """Why a file cannot be ingested, "" to skip it silently, None when it is fine."""
    if path.is_symlink() and not follow_symlinks:
        return "is a symbolic link (use --follow-symlinks to read links)"
    if not supports(path):
        return "no parser for this file type" if explicit else ""
    if not path.is_file():
        return "is not a regular file"
    size = path.stat().st_size
    if size > max_file_size:
        return _too_large(size, max_file_size)
    return None


def read_within(path: Path, max_file_size: int) -> bytes:
    """The file's bytes, never more than ``max_file_size`` of them: a file that grew past the
    limit since it was discovered is `IngestLimitExceeded`, not read whole."""
    with path.open("rb") as file:
        data = file.read(max_file_size + 1)
    if len(data) > max_file_size:
        raise IngestLimitExceeded(f"the file {_too_large(path.stat().st_size, max_file_size)}")
    return data


def _too_large(size: int, max_file_size: int) -> str:
    return f"is {size:,} bytes, over the --max-file-size limit of {max_file_size:,}"


def _walk(
    root: Path,
    follow_symlinks: bool,
    rejected: list[Rejection],
    base: Path,
    visited: set[Path] | None = None,
) -> Iterator[Path]:
    if not _is_folder(root, follow_symlinks):
        yield root
        return
    visited = set() if visited is None else visited
    real = root.resolve()
    if real in visited:  # a followed link that loops back
        return
    visited.add(real)
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as error:  # an unreadable folder is reported; the walk goes on
        reason = f"cannot list the folder: {error.strerror or error}"
        rejected.append(Rejection(source_name(root, base), reason, unexamined=True))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if _is_folder(entry, follow_symlinks):
            yield from _walk(entry, follow_symlinks, rejected, base, visited)
        else:
            yield entry
