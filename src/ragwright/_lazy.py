"""Built on first use: a value, once, even when several threads ask at the same time; a
package's public names."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """``Lazy(build).get()`` calls ``build`` the first time and returns its result ever after.
    Models, sessions and tokenizers are loaded this way so that constructing an adapter is
    cheap and read-only commands never load anything."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    def get(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` (PEP 562) that imports each public name of
    ``modules`` (name -> the module defining it) when first asked for, and keeps it in the
    package's namespace, so importing the package (or a submodule) loads none of them."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # the next lookup finds it without this function
        return value

    return __getattr__
