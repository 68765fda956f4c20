"""`ragwright keys add|list|remove`: API keys for `ragwright serve`, stored hashed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragwright.cli._common import (
    ConfigOption,
    JsonOption,
    console,
    counted,
    errors,
    print_json,
    reports_errors,
)
from ragwright.config import CONFIG_FILE, config_path, load_config
from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.permissions import check_principal

app = typer.Typer(
    help="Create, list and remove API keys for `ragwright serve` (stored hashed in the "
    "configuration file's [server.keys] table).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
NameArgument = Annotated[str, typer.Argument(help="A name for the key: letters, digits, - and _.")]
# Keys belong to the configuration file `serve` reads, not to an index; --index (which every
# index command takes) is accepted only to say so.
NoIndexOption = Annotated[str | None, typer.Option("--index", hidden=True)]


def _refuse_index(index: str | None) -> None:
    if index is not None:
        raise ConfigError(
            "API keys are not stored in an index but in the configuration file that "
            "`ragwright serve` reads (--config, $RAGWRIGHT_CONFIG or ./ragwright.toml); "
            "drop --index, and pass --config FILE to choose the file"
        )


def _needs_server_extra(error: ImportError) -> MissingDependencyError:
    """Keys are for `ragwright serve`, whose package (and its FastAPI import) they live in."""
    return MissingDependencyError(
        f"ragwright keys ({error.name} is missing)", "pip install 'ragwright[server]'"
    )


def _target(config: Path | None) -> Path:
    """The file to edit: --config / $RAGWRIGHT_CONFIG (created when missing) or ./ragwright.toml."""
    return config if config is not None else (config_path() or Path(CONFIG_FILE))


@app.command("add")
@reports_errors
def add(
    name: NameArgument,
    scope: Annotated[
        str, typer.Option(help="read (search, ask, fetch) or write (also upload and delete).")
    ] = "read",
    principal: Annotated[
        list[str] | None,
        typer.Option(
            "--principal",
            help="Bind the key to this principal (repeatable): it then reads only documents "
            "everyone may read and those listing one of its principals.",
        ),
    ] = None,
    config: ConfigOption = None,
    index: NoIndexOption = None,
) -> None:
    """Create a key and print it once: only its hash is stored."""
    _refuse_index(index)
    try:
        from ragwright.server.keyfile import add_key
        from ragwright.server.keys import Scope
    except ImportError as error:
        raise _needs_server_extra(error) from None

    if scope not in {s.value for s in Scope}:
        raise ConfigError(f"--scope must be read or write, not {scope!r}")
    path = _target(config)
    principals = tuple(check_principal(p, "--principal") for p in principal or ()) or None
    secret = add_key(path, name, Scope(scope), principals)
    bound = f", as {', '.join(principals)}" if principals else ""
    errors.print(
        f"added key {escape(name)} ({scope}{escape(bound)}) to {escape(str(path))}; "
        "it is shown once:"
    )
    typer.echo(secret)
    # the server reads its keys when it starts: a running one refuses the new key until then
    errors.print("restart `ragwright serve` for a running server to accept it")


@app.command("list")
@reports_errors
def list_keys(
    config: ConfigOption = None, index: NoIndexOption = None, json_output: JsonOption = False
) -> None:
    """The configured keys' names and scopes (never the keys)."""
    _refuse_index(index)
    try:
        from ragwright.server.settings import ServerSettings
    except ImportError as error:
        raise _needs_server_extra(error) from None

    settings = ServerSettings.from_config(load_config(config))
    if json_output:  # names, scopes and principals: never a key or its hash
        print_json({"keys": [_key_json(key) for key in settings.keys]})
        return
    table = Table("name", "scope", "principals", header_style="bold", box=None)
    for key in settings.keys:
        bound = "(all documents)" if key.principals is None else ", ".join(key.principals)
        table.add_row(escape(key.name), key.scope.value, escape(bound))
    console.print(table)
    console.print(f"[dim]{counted(len(settings.keys), 'key')}[/]")


def _key_json(key: Any) -> dict[str, Any]:
    """A configured key's name, scope and principals (null: all documents)."""
    principals = None if key.principals is None else list(key.principals)
    return {"name": key.name, "scope": key.scope.value, "principals": principals}


@app.command("remove")
@reports_errors
def remove(name: NameArgument, config: ConfigOption = None, index: NoIndexOption = None) -> None:
    """Remove a key; requests using it are refused from the server's next start."""
    _refuse_index(index)
    try:
        from ragwright.server.keyfile import remove_key
    except ImportError as error:
        raise _needs_server_extra(error) from None

    path = _target(config)
    if not remove_key(path, name):
        raise ConfigError(f"no key named {name!r} in {path}")
    console.print(f"removed key {escape(name)} from {escape(str(path))}")
    errors.print("restart `ragwright serve` for a running server to refuse it")
