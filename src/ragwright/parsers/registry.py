"""Which parser reads which file: by extension, confirmed by the file's first bytes.

Built-in parsers register through the ``ragwright.parsers`` entry-point group like any plugin.
Parsers are constructed on first use, so a plugin whose optional dependency is missing only
fails (with its ``pip install`` line) when a file of its type is actually read.

A parser claims extensions and content types (``extensions``, ``content_types``) and may
declare ``magic``: byte signatures its files start with (``(b"%PDF-",)``), and
``magic_within``: how many bytes may come before the signature (0, the default: none; PDF
readers accept a header anywhere in the first 1,024 bytes, and so does the PDF parser). A file
whose extension claims a format its bytes do not show is refused with a `ParseError` that says
what the file starts with, instead of being handed to a parser that would fail obscurely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ragwright._plugins import installed_entry_points
from ragwright.errors import ParseError, RegistryError
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.sniff import describe, sniff

if TYPE_CHECKING:  # the ports import numpy, which a parse worker would import for nothing
    from ragwright.ports import Parser

ENTRY_POINT_GROUP = "ragwright.parsers"


#: How many bytes of a file ``parser_for`` needs to check magic signatures.
MAGIC_BYTES = 16


@dataclass
class _Entry:
    name: str
    extensions: tuple[str, ...]
    factory: Callable[[], Parser]
    instance: Parser | None = field(default=None)
    content_types: tuple[str, ...] = ()
    magic: tuple[bytes, ...] = ()
    magic_within: int = 0

    def parser(self) -> Parser:
        if self.instance is None:
            self.instance = self.factory()
        return self.instance


class ParserRegistry:
    """Maps lower-case file extensions and content types to parsers; one claim per each.

    A parser is registered under a name (by default its class name without ``Parser``, lower
    case: ``TextParser`` → ``text``). A second claim on an extension or a content type raises
    ``RegistryError`` naming both parsers, unless the newcomer ``replaces`` the other by name:
    the replaced parser then leaves entirely, with all its claims.
    """

    def __init__(self, parsers: Iterable[Parser] = ()) -> None:
        self._entries: dict[str, _Entry] = {}
        self._by_extension: dict[str, _Entry] = {}
        self._by_content_type: dict[str, _Entry] = {}
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
        for point in sorted(installed_entry_points(group), key=lambda point: point.name):
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
                content_types=_content_types_of(parser_class, name),
                magic=_magic_of(parser_class, name),
                magic_within=_magic_within_of(parser_class, name),
            )
        return registry

    def register(
        self, parser: Parser, name: str | None = None, replaces: str | None = None
    ) -> None:
        """Register a parser instance for the extensions it claims."""
        name = name or _default_name(parser)
        self.register_factory(
            lambda: parser,
            name,
            _extensions_of(parser, name),
            replaces,
            instance=parser,
            content_types=_content_types_of(parser, name),
            magic=_magic_of(parser, name),
            magic_within=_magic_within_of(parser, name),
        )

    def register_factory(
        self,
        factory: Callable[[], Parser],
        name: str,
        extensions: Iterable[str],
        replaces: str | None = None,
        *,
        instance: Parser | None = None,
        content_types: Iterable[str] = (),
        magic: Iterable[bytes] = (),
        magic_within: int = 0,
    ) -> None:
        """Register a parser to be built on first use (e.g. a class with a no-arg constructor)."""
        replaced = self._replaced(replaces, by=name)
        if name in self._entries and self._entries[name] is not replaced:
            raise RegistryError(f"a parser named {name!r} is already registered")
        entry = _Entry(
            name,
            tuple(_normalize(ext) for ext in extensions),
            factory,
            instance,
            tuple(kind.strip().lower() for kind in content_types),
            tuple(magic),
            magic_within,
        )
        self._check_claims(self._by_extension, entry.extensions, entry, replaced, "")
        self._check_claims(
            self._by_content_type, entry.content_types, entry, replaced, "content type "
        )
        if replaced is not None:  # only now, so a refused registration changes nothing
            del self._entries[replaced.name]
            for extension in replaced.extensions:
                del self._by_extension[extension]
            for kind in replaced.content_types:
                del self._by_content_type[kind]
        self._entries[name] = entry
        self._by_extension.update(dict.fromkeys(entry.extensions, entry))
        self._by_content_type.update(dict.fromkeys(entry.content_types, entry))

    @staticmethod
    def _check_claims(
        holders: dict[str, _Entry],
        claims: tuple[str, ...],
        entry: _Entry,
        replaced: _Entry | None,
        what: str,
    ) -> None:
        for claim in claims:
            holder = holders.get(claim)
            if holder is not None and holder is not replaced:
                raise RegistryError(
                    f"parsers {holder.name!r} and {entry.name!r} both claim {what}{claim!r}; "
                    f"register one with replaces={holder.name!r} to choose it"
                )

    def parser_for(self, path: str | Path, head: bytes | None = None) -> Parser:
        """The parser for a file, by its extension (case-insensitive). Given the file's first
        bytes (the whole file, or at least `MAGIC_BYTES` more than the parser's
        ``magic_within``), checks that one of the parser's magic signatures, if it declares
        any, starts within its first ``magic_within`` bytes (at the very start by default).
        Bytes that contradict the extension but belong to another registered format (a Word
        file named ``.pdf``) go to that format's parser."""
        entry = self._lookup(path)
        if entry is None:
            suffix = Path(path).suffix.lower()
            what = f"extension {suffix!r}" if suffix else "files without an extension"
            supported = ", ".join(self.extensions) or "none"
            raise ParseError(str(path), f"no parser for {what}; supported: {supported}")
        if head is not None and entry.magic and not _shows_magic(head, entry):
            actual = self._sniffed(head)
            if actual is None:
                raise ParseError(str(path), _not_this_format(path, head))
            return actual.parser()
        return entry.parser()

    def _sniffed(self, data: bytes) -> _Entry | None:
        """The registered parser of the format the bytes belong to, its own magic checked."""
        extension = sniff(data)
        entry = self._by_extension.get(extension) if extension else None
        if entry is None or (entry.magic and not _shows_magic(data, entry)):
            return None
        return entry

    def supports(self, path: str | Path) -> bool:
        return self._lookup(path) is not None

    @property
    def extensions(self) -> tuple[str, ...]:
        """Every claimed extension, sorted."""
        return tuple(sorted(self._by_extension))

    @property
    def content_types(self) -> tuple[str, ...]:
        """Every claimed content type, sorted."""
        return tuple(sorted(self._by_content_type))

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


def _content_types_of(parser: object, name: str) -> tuple[str, ...]:
    kinds = getattr(parser, "content_types", ())
    if not isinstance(kinds, tuple | list) or not all(isinstance(k, str) for k in kinds):
        raise RegistryError(f"parser {name!r} must declare content_types as a tuple of strings")
    return tuple(kinds)


def _magic_of(parser: object, name: str) -> tuple[bytes, ...]:
    """A parser's optional magic signatures; none means its files are not checked."""
    magic = getattr(parser, "magic", ())
    if not isinstance(magic, tuple | list) or not all(
        isinstance(m, bytes) and 0 < len(m) <= MAGIC_BYTES for m in magic
    ):
        raise RegistryError(
            f"parser {name!r} must declare magic as a tuple of byte strings of 1 to "
            f"{MAGIC_BYTES} bytes"
        )
    return tuple(magic)


def _magic_within_of(parser: object, name: str) -> int:
    within = getattr(parser, "magic_within", 0)
    if not isinstance(within, int) or isinstance(within, bool) or within < 0:
        raise RegistryError(f"parser {name!r} must declare magic_within as an int >= 0")
    return within


def _shows_magic(head: bytes, entry: _Entry) -> bool:
    if not entry.magic_within:
        return head.startswith(entry.magic)
    return any(
        head.find(signature, 0, entry.magic_within + len(signature)) >= 0
        for signature in entry.magic
    )


def _not_this_format(path: str | Path, head: bytes) -> str:
    kind = Path(path).suffix.lstrip(".").upper() or "expected"
    if not head:
        return f"not a {kind} file: it is empty"
    return f"not a {kind} file: it looks like {describe(head[:64])}"


def _normalize(extension: str) -> str:
    extension = extension.strip().lower()
    return extension if extension.startswith(".") else f".{extension}"
