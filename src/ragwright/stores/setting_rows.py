"""The settings rows an index keeps (SQLite's ``meta``, PostgreSQL's ``settings``) whose values
have a shape, and what each must be.

Every reader of such a row goes through `checked`, so a damaged value (broken JSON for the
embedding space, ``chunking`` set to ``[]``, a generation that is not a number) is a
`BrokenSetting` naming the row and `ragwright repair`, never a ``TypeError`` or
``JSONDecodeError`` from whatever parses it; `ragwright check` reads every row with
`problems`. A row that is absent is not broken: each reader has its default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ragwright.errors import BrokenSetting
from ragwright.models import Finding

#: A rule parses a value and raises ValueError (TypeError, KeyError) when it is broken.
Rule = Callable[[str], object]
_SPACE_FIELDS = {"model": str, "dimension": int, "normalized": bool, "metric": str,
                 "fingerprint": str}  # fmt: skip


def _json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None


def _object(value: object, fields: Mapping[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """``value`` as a JSON object holding ``fields`` of these types (and perhaps more)."""
    if not isinstance(value, dict):
        raise ValueError(f"a JSON {type(value).__name__}, not an object")
    for name, kind in fields.items():
        if name not in value:
            raise ValueError(f"no {name!r}")
        found = value[name]
        if not isinstance(found, kind) or (kind is int and isinstance(found, bool)):
            raise ValueError(f"{name!r} is {json.dumps(found)[:40]}")
    return value


def space_of(value: object) -> dict[str, Any]:
    """An embedding space's fields, checked (``EmbeddingSpace(**fields)`` cannot fail)."""
    fields = _object(value, _SPACE_FIELDS)
    if set(fields) != set(_SPACE_FIELDS):
        raise ValueError(f"fields {sorted(fields)}, not {sorted(_SPACE_FIELDS)}")
    if fields["dimension"] < 0:  # 0: a keyword-only index's space (eval's BM25 runs)
        raise ValueError(f"dimension {fields['dimension']}")
    return fields


def _space(raw: str) -> object:
    return space_of(_json(raw))


def _chunking(raw: str) -> object:
    found = _object(_json(raw), {"name": str})
    if not found["name"]:
        raise ValueError("an empty chunker name")
    if not isinstance(found.get("options", {}), dict):
        raise ValueError(f"'options' is {json.dumps(found['options'])[:40]}")
    return found


def _names(value: object, what: str) -> None:
    if not isinstance(value, list) or not all(isinstance(n, str) and n.strip() for n in value):
        raise ValueError(f"{what} is not a list of field names")


def _parser_options(raw: str) -> object:
    found = _object(_json(raw), {"text_fields": list, "meta_fields": list})
    _names(found["text_fields"], "text_fields")
    _names(found["meta_fields"], "meta_fields")
    return found


def _space_slot(raw: str) -> object:
    found = _object(_json(raw), {"space": dict, "embedder": str})
    space_of(found["space"])
    return found


def _chunking_slot(raw: str) -> object:
    found = _object(_json(raw), {"chunker": str, "space": dict, "embedder": str})
    space_of(found["space"])
    return found


def _integer(raw: str) -> object:
    if not raw.strip().lstrip("-").isdigit():
        raise ValueError(f"{raw[:40]!r} is not a whole number")
    return int(raw)


def _present(raw: str) -> object:
    if not raw.strip():
        raise ValueError("empty")
    return raw


def _tokenizer(raw: str) -> object:
    from ragwright.stores.sqlite.schema import FTS_TOKENIZERS  # the names both stores use

    if raw not in FTS_TOKENIZERS:
        raise ValueError(f"{raw[:60]!r} is not one of {', '.join(FTS_TOKENIZERS)}")
    return raw


def one_of(values: Iterable[str]) -> Rule:
    choices = tuple(values)

    def rule(raw: str) -> object:
        if raw not in choices:
            raise ValueError(f"{raw[:40]!r} is not one of {', '.join(choices)}")
        return raw

    return rule


#: The rows every store keeps whose values have a shape, and what each must be.
RULES: dict[str, Rule] = {
    "schema_version": _integer,
    "embedding_space": _space,
    "chunking": _chunking,
    "parser_options": _parser_options,
    "fts_tokenizer": _tokenizer,
    "derived_cache_key": _present,
    "space_staged": _space_slot,
    "space_previous": _space_slot,
    "chunking_staged": _chunking_slot,
    "chunking_previous": _chunking_slot,
}


def broken(key: str, raw: str, rules: Mapping[str, Rule] = RULES) -> str | None:
    """Why the value ``raw`` of the row ``key`` is broken; None when it is sound (or a row
    without a rule)."""
    rule = rules.get(key)
    if rule is None:
        return None
    try:
        rule(raw)
    except (ValueError, TypeError, KeyError) as error:
        return str(error) or type(error).__name__
    return None


def checked(
    location: str | None, key: str, raw: str | None, remedy: str = BrokenSetting.REMEDY
) -> str | None:
    """``raw``, the value of the row ``key`` of the index at ``location``, once its rule has
    passed; `BrokenSetting` (saying ``remedy``) when it does not."""
    if raw is not None:
        reason = broken(key, raw)
        if reason is not None:
            raise BrokenSetting(location, key, reason, remedy)
    return raw


def problems(rows: Iterable[tuple[str, str]], rules: Mapping[str, Rule] = RULES) -> dict[str, str]:
    """The broken rows among ``rows`` (key, value), with why each is broken."""
    found = {}
    for key, value in rows:
        reason = broken(key, str(value), rules)
        if reason is not None:
            found[key] = reason
    return found


#: The finding names of broken rows start with this, then the key (``setting:chunking``).
PREFIX = "setting:"


def setting_findings(
    rows: list[tuple[str, str]], rules: Mapping[str, Rule], fixes: Mapping[str, str]
) -> list[Finding]:
    """For `ragwright check`: one finding for ``rows`` when all are sound, else one per
    broken row, repairable when ``fixes`` says what `repair` does with it."""
    broken_rows = problems(rows, rules)
    if not broken_rows:
        return [Finding("settings", True, f"{len(rows)} rows, each readable")]
    return [
        Finding(
            PREFIX + key,
            False,
            f"{reason} ({fixes.get(key, 'repair cannot restore it')})",
            repairable=key in fixes,
        )
        for key, reason in broken_rows.items()
    ]


def broken_keys(findings: Iterable[Finding]) -> list[str]:
    """The keys of the rows these findings found broken."""
    return [f.name[len(PREFIX) :] for f in findings if f.name.startswith(PREFIX) and not f.ok]
