"""`ModeName`: a search mode in a pydantic schema (the HTTP API's and the MCP tools'), read
from the mode registry when the schema is made and when a value is checked, so a plugin's mode
is offered and accepted like a built-in (see `ragwright.pipeline.search.modes`)."""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from ragwright.errors import ConfigError
from ragwright.pipeline.search.mode_registry import known_name, mode_names


def known_mode(value: str) -> str:
    try:
        return known_name(value)
    except ConfigError as error:  # pydantic reports a ValueError as the field's error
        raise ValueError(str(error)) from None


class ModeName(str):
    """A mode name the registry knows (validated as a plain `str`)."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(known_mode, core_schema.str_schema())

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "enum": list(mode_names())}


#: The default the surfaces offer to search and to answer (auto is one choice away).
HYBRID = ModeName("hybrid")
