"""Which parser reads which file, by extension.

Built-in parsers register through the ``ragwright.parsers`` entry-point group like any plugin.
Parsers are constructed on first use, so a plugin whose optional dependency is missing only
fails (with its ``pip install`` line) when a file of its type is actually read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path

from ragwright.errors import ParseError, RegistryError
from ragwright.parsers.options import ParserOptions
from ragwright.ports import Parser

ENTRY_POINT_GROUP = "ragwright.parsers"


@dataclass
class _Entry:
    name: str
    extensions: tuple[str, ...]
    factory: Callable[[], Parser]
    instance: Parser | None = field(default=None)

    def parser(self) -> Parser:
        if self.instance is None:
            self.instance = self.factory()
        return self.instance


class ParserRegistry:
    """Maps lower-case file extensions to parsers; one claim per extension.

    A parser is registered under a name (by default its class name without ``Parser``, lower
    case: ``TextParser`` → ``text``). A second claim on an extension raises ``RegistryError``
    naming both parsers, unless the newcomer ``replaces`` the other by name: the replaced parser
    then leaves entirely, with all its extensions.
    """

    def __init__(self, parsers: Iterable[Parser] = ()) -> None:
        self._entries: dict[str, _Entry] = {}
        self._by_extension: dict[str, _Entry] = {}
        for parser in parsers:
            self.register(parser)

    @classmethod
    def from_entry_points(
        cls, group: str = ENTRY_POINT_GROUP, options: ParserOptions | None = None
    ) -> ParserRegistry:
        """A registry of every installed parser plugin, the built-ins included.

        A plugin class may set ``replaces = "name"`` to take over a parser; those register last,
        so the parser they replace is already there whatever the plugin order. With
        ``options``, a class that offers ``from_options`` is built by it.
        """
        registry = cls()
        loaded = []
        for point in sorted(entry_points(group=group), key=lambda point: point.name):
            try:
                loaded.append((point.name, point.load()))
            except Exception as exc:  # a broken plugin must say which one it is
                raise RegistryError(
                    f"parser plugin {point.name!r} ({point.value}) failed to load: {exc}"
                ) from exc
        loaded.sort(key=lambda item: getattr(item[1], "replaces", None) is not None)
        for name, parser_class in loaded:
            build = getattr(parser_class, "from_options", None)
            registry.register_factory(
                partial(build, options) if options is not None and build else parser_class,
                name,
                _extensions_of(parser_class, name),
                replaces=getattr(parser_class, "replaces", None),
            )
        return registry

    def register(
        self, parser: Parser, name: str | None = None, replaces: str | None = None
    ) -> None:
        """Register a parser instance for the extensions it claims."""
        name = name or _default_name(parser)
        self.register_factory(
            lambda: parser, name, _extensions_of(parser, name), replaces, instance=parser
        )

    def register_factory(
        self,
        factory: Callable[[], Parser],
        name: str,
        extensions: Iterable[str],
        replaces: str | None = None,
        *,
        instance: Parser | None = None,
    ) -> None:
        """Register a parser to be built on first use (e.g. a class with a no-arg constructor)."""
        replaced = self._replaced(replaces, by=name)
        if name in self._entries and self._entries[name] is not replaced:
            raise RegistryError(f"a parser named {name!r} is already registered")
        entry = _Entry(name, tuple(_normalize(ext) for ext in extensions), factory, instance)
        for extension in entry.extensions:
            holder = self._by_extension.get(extension)
            if holder is not None and holder is not replaced:
                raise RegistryError(
                    f"parsers {holder.name!r} and {name!r} both claim {extension!r}; register "
                    f"one with replaces={holder.name!r} to choose it"
                )
        if replaced is not None:  # only now, so a refused registration changes nothing
            del self._entries[replaced.name]
            for extension in replaced.extensions:
                del self._by_extension[extension]
        self._entries[name] = entry
        self._by_extension.update(dict.fromkeys(entry.extensions, entry))

    def parser_for(self, path: str | Path) -> Parser:
        """The parser for a file, by its extension (case-insensitive)."""
        entry = self._lookup(path)
        if entry is None:
            suffix = Path(path).suffix.lower()
            what = f"extension {suffix!r}" if suffix else "files without an extension"
            supported = ", ".join(self.extensions) or "none"
            raise ParseError(str(path), f"no parser for {what}; supported: {supported}")
        return entry.parser()

    def supports(self, path: str | Path) -> bool:
        return self._lookup(path) is not None

    @property
    def extensions(self) -> tuple[str, ...]:
        """Every claimed extension, sorted."""
        return tuple(sorted(self._by_extension))

    @property
    def names(self) -> tuple[str, ...]:
        """The registered parsers' names, sorted."""
        return tuple(sorted(self._entries))

    def _lookup(self, path: str | Path) -> _Entry | None:
        # Longest compound suffix first, so a parser may claim e.g. ".tar.gz" over ".gz".
        suffixes = [suffix.lower() for suffix in Path(path).suffixes]
        for index in range(len(suffixes)):
            entry = self._by_extension.get("".join(suffixes[index:]))
            if entry is not None:
                return entry
        return None

    def _replaced(self, name: str | None, by: str) -> _Entry | None:
        if name is None:
            return None
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(self.names) or "none"
            raise RegistryError(
                f"parser {by!r} replaces {name!r}, which is not registered (registered: {known})"
            )
        return entry


def _default_name(parser: object) -> str:
    class_name = type(parser).__name__
    return (class_name.removesuffix("Parser") or class_name).lower()


def _extensions_of(parser: object, name: str) -> tuple[str, ...]:
    extensions = getattr(parser, "extensions", None)
    if not isinstance(extensions, tuple | list) or not all(isinstance(e, str) for e in extensions):
        raise RegistryError(f"parser {name!r} must declare extensions as a tuple of strings")
    return tuple(extensions)


def _normalize(extension: str) -> str:
    extension = extension.strip().lower()
    return extension if extension.startswith(".") else f".{extension}"
