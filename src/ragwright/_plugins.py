"""Plugins by name: the entry points of one group, each name claimed once."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from ragwright.errors import RegistryError


def plugins(group: str, kind: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name. Two plugins claiming one name is a
    `RegistryError` naming both (``kind`` says what they are, e.g. "embedder"); the same
    entry point seen twice (an editable install, say) is no clash."""
    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=group):
        if entry.name in found and found[entry.name].value != entry.value:
            raise RegistryError(
                f"two plugins claim the {kind} name {entry.name!r}: "
                f"{found[entry.name].value} and {entry.value}"
            )
        found[entry.name] = entry
    return found
