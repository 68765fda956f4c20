"""How much of each file in a directory this process holds mapped in memory (Linux)."""

from __future__ import annotations

from pathlib import Path


def mapped_resident_bytes(directory: Path) -> dict[str, int]:
    """Bytes of each file under ``directory`` resident in this process's mappings, by file
    name (from ``/proc/self/smaps``; empty where the platform has none)."""
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return {}
    inside = str(directory.resolve()) + "/"
    resident: dict[str, int] = {}
    name = None
    for line in lines:
        fields = line.split()
        if fields and not fields[0].endswith(":"):  # a mapping's header: range, perms, …, path
            path = fields[5] if len(fields) > 5 else ""
            name = Path(path).name if path.startswith(inside) else None
        elif name is not None and fields[:1] == ["Rss:"]:
            resident[name] = resident.get(name, 0) + int(fields[1]) * 1024
    return resident
