"""Argument checks shared by the result processors: a bad setting fails at construction."""

from __future__ import annotations

import math

from ragwright.errors import ConfigError


def integer(owner: str, name: str, value: object, *, minimum: int) -> int:
    """``value`` as an int of at least ``minimum`` (bools and floats are refused)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{owner}: {name} must be an integer >= {minimum}; got {value!r}")
    return value


def real(
    owner: str, name: str, value: object, *, low: float = -math.inf, high: float = math.inf
) -> float:
    """``value`` as a finite float within [low, high] (bools and strings are refused)."""
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        bounds = "" if math.isinf(low) and math.isinf(high) else f" in [{low:g}, {high:g}]"
        raise ConfigError(f"{owner}: {name} must be a finite number{bounds}; got {value!r}")
    return float(value)
