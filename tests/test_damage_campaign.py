"""A damage campaign over every file an index has beside its tables: each derived file
(`cache_kinds.CACHE_SUFFIXES`: BM25 postings, vector matrix, HNSW graph, candidate rows)
truncated, flipped, with two blocks swapped, with its header damaged, deleted, or of an older
format (empty and foreign files: tests/test_derived_files.py), and each settings row whose
value has a shape (`setting_rows.RULES` and SQLite's own) written broken.

For each, through the CLI: `check` names the file or row (exit 1; a deleted or older file is
sound: it is built when needed), every command (search in each mode, ask, stats, ingest)
answers exactly what the undamaged index answered or stops with one line naming the row and
`ragwright repair`, never a traceback, and after `repair` the check passes and the answers are
the undamaged index's. (The damaged database file itself: tests/test_damaged_index.py.)
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from cli_helpers import runner
from ragwright.cli import app
from ragwright.stores.sqlite import derived
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES

QUERY = "install the package on linux"
WORDS = ("alpha beta gamma delta install linux python package manager cats dogs sleep walks "
         "river mountain forest ocean cloud server client database index search query vector "
         "graph node edge token stem chunk answer question").split()  # fmt: skip


COMMANDS = ("bm25", "vector", "hybrid", "ask", "stats", "ingest")
SEARCHES = ("bm25", "vector", "hybrid")


def command_lines(docs: Path) -> dict[str, list[str]]:
    return {
        "bm25": ["search", QUERY, "--mode", "bm25", "--json"],
        "vector": ["search", QUERY, "--mode", "vector", "--json"],
        "hybrid": ["search", QUERY, "--mode", "hybrid", "--json"],
        "ask": ["ask", f"how do I {QUERY}?", "--json"],
        "stats": ["stats", "--json"],
        "ingest": ["ingest", str(docs), "--json"],
    }


def invoke(index: Path, arguments: list[str]) -> Result:
    """A command run in-process on ``index``, once its background builds are done (a build
    started by one command would otherwise write its file while the next one runs)."""
    result = runner.invoke(app, [*arguments, "--index", str(index)])
    for thread in threading.enumerate():
        if thread.name.startswith("ragwright") and thread is not threading.current_thread():
            thread.join(timeout=60)
    assert "Traceback" not in result.output, (arguments, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        arguments,
        result.exception,
    )
    return result


def rounded(value: Any) -> Any:
    """``value`` with its floats to 10 significant digits: BM25 from the postings file and
    from FTS5 (which answers while the file is built again) differ in the last bit."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def answer(name: str, result: Result) -> Any:
    """What a command answered, without what may differ between two equal indexes (the
    files' sizes on disk)."""
    found = json.loads(result.stdout)
    if name == "stats":
        found.pop("database_bytes", None)
        found.pop("index", None)
    return rounded(found)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """An index of 60 small notes with every derived file (the graph too: ``ann on``), and
    what each command answers on it."""
    root = tmp_path_factory.mktemp("campaign")
    docs, index = root / "docs", root / "index"
    docs.mkdir()
    rng = random.Random(1)
    for n in range(60):
        paragraphs = [" ".join(rng.choices(WORDS, k=40)) + "." for _ in range(3)]
        (docs / f"note{n:02d}.txt").write_text("\n\n".join(paragraphs), "utf-8")
    assert invoke(index, ["ingest", str(docs), "--embedder", "hashing"]).exit_code == 0
    assert invoke(index, ["index", "--ann", "on"]).exit_code == 0
    expected = {}
    for name, arguments in command_lines(docs).items():
        result = invoke(index, arguments)
        assert result.exit_code == 0, result.output
        expected[name] = answer(name, result)
    for suffix in CACHE_SUFFIXES:
        assert derived.read_arrays(cache_file(index, suffix)) is not None, suffix
    assert invoke(index, ["check"]).exit_code == 0
    return root, expected


def cache_file(index: Path, suffix: str) -> Path:
    return index / ("index.sqlite3" + suffix)


# -- the damage -------------------------------------------------------------------------------


def truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flipped(path: Path) -> None:
    """20 bytes of the file's second half inverted (the arrays' data)."""
    data = bytearray(path.read_bytes())
    for at in random.Random(7).sample(range(len(data) // 2, len(data)), 20):
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def swapped(path: Path) -> None:
    """The last two 4 KiB blocks swapped: the same words in another order."""
    data = bytearray(path.read_bytes())
    assert len(data) >= 4 * 4096
    first, second = len(data) - 2 * 4096, len(data) - 4096
    data[first:second], data[second:] = data[second:], data[first:second]
    path.write_bytes(bytes(data))


def header_flipped(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[60] ^= 0x01  # inside the JSON header
    path.write_bytes(bytes(data))


def deleted(path: Path) -> None:
    path.unlink()


def older(path: Path) -> None:
    """The file as version 1 of the format would start (sum and xor checksums)."""
    path.write_bytes(b"RGWDRV1\n" + path.read_bytes()[8:])


#: Damage to a derived file, and whether `check` should call the index damaged for it.
FILE_DAMAGE: dict[str, tuple[Callable[[Path], None], bool]] = {
    "truncated": (truncated, True),
    "flipped": (flipped, True),
    "swapped": (swapped, True),
    "header_flipped": (header_flipped, True),
    "deleted": (deleted, False),
    "older": (older, False),
}


def set_row(database: Path, key: str, value: str) -> None:
    with closing(sqlite3.connect(database)) as db, db:
        db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


#: Broken settings rows: (key, value).
ROW_DAMAGE = {
    "space_broken_json": ("embedding_space", '{"dimension": 256, '),
    "space_not_an_object": ("embedding_space", "[]"),
    "space_missing_field": ("embedding_space", '{"model": "m", "dimension": 256}'),
    "chunking_list": ("chunking", "[]"),
    "chunking_broken_json": ("chunking", '{"name": '),
    "chunking_options_list": ("chunking", '{"name": "recursive", "options": []}'),
    "parser_options_string": ("parser_options", '"fields"'),
    "generation_text": ("generation", "many"),
    "cache_key_empty": ("derived_cache_key", " "),
    "tokenizer_unknown": ("fts_tokenizer", "klingon"),
    "ann_unknown": ("ann", "sideways"),
    "pruned_text": ("chunk_changes_pruned_through", "x"),
    "staged_space_broken": ("space_staged", "{"),
    "previous_chunking_broken": ("chunking_previous", '{"chunker": 1}'),
}


def copied(built: tuple[Path, dict[str, Any]], tmp_path: Path) -> Path:
    root, _ = built
    index = tmp_path / "index"
    shutil.copytree(root / "index", index)
    return index


def run_commands(
    index: Path,
    docs: Path,
    expected: dict[str, Any],
    broken_row: str | None = None,
    names: tuple[str, ...] = COMMANDS,
) -> None:
    """Every command (of ``names``) answers as the undamaged index did, or (a broken
    settings row) stops with one line naming the row and the repair."""
    for name, arguments in command_lines(docs).items():
        if name not in names:
            continue
        result = invoke(index, arguments)
        if result.exit_code == 0:
            assert answer(name, result) == expected[name], (name, broken_row)
            continue
        assert broken_row is not None, (name, result.output)
        assert result.exit_code == 2, (name, result.output)
        message = result.stderr.strip()
        assert message.count("\n") == 0 and message.startswith("error: the index"), message
        assert repr(broken_row) in message and "`ragwright repair`" in message, message


def failed_findings(index: Path) -> tuple[int, dict[str, str]]:
    result = invoke(index, ["check", "--json"])
    [report] = json.loads(result.stdout)
    details = {f["name"]: f["detail"] for f in report["findings"]}
    return result.exit_code, {n: d for n, d in details.items() if not report_ok(report, n)}


def report_ok(report: dict[str, Any], name: str) -> bool:
    return next(f["ok"] for f in report["findings"] if f["name"] == name)


def repaired(index: Path, docs: Path, expected: dict[str, Any]) -> None:
    result = invoke(index, ["repair"])
    assert result.exit_code == 0, result.output
    assert failed_findings(index) == (0, {})
    run_commands(index, docs, expected, names=SEARCHES)


@pytest.mark.parametrize("damage", list(FILE_DAMAGE))
@pytest.mark.parametrize("suffix", CACHE_SUFFIXES)
def test_a_damaged_derived_file_is_named_never_served_and_rebuilt(
    built: tuple[Path, dict[str, Any]], tmp_path: Path, suffix: str, damage: str
) -> None:
    index = copied(built, tmp_path)
    docs, expected = built[0] / "docs", built[1]
    path = cache_file(index, suffix)
    harm, is_damage = FILE_DAMAGE[damage]
    harm(path)
    code, failed = failed_findings(index)
    name = f"derived:{path.name}"
    if is_damage:
        assert code == 1 and set(failed) == {name}, failed
    else:
        assert code == 0 and failed == {}
    run_commands(index, docs, expected)
    repaired(index, docs, expected)
    assert derived.read_arrays(path) is not None or suffix == ".ann"  # built again when used


@pytest.mark.parametrize("damage", list(ROW_DAMAGE))
def test_a_broken_settings_row_is_named_stops_with_one_line_and_is_repaired(
    built: tuple[Path, dict[str, Any]], tmp_path: Path, damage: str
) -> None:
    index = copied(built, tmp_path)
    docs, expected = built[0] / "docs", built[1]
    key, value = ROW_DAMAGE[damage]
    set_row(index / "index.sqlite3", key, value)
    code, failed = failed_findings(index)
    assert code == 1 and f"setting:{key}" in failed, failed
    assert set(failed) <= {f"setting:{key}", "vectors"}, failed  # vectors: not examined
    run_commands(index, docs, expected, broken_row=key)
    repaired(index, docs, expected)


def test_a_broken_schema_version_is_named_and_repair_refuses_it(
    built: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    index = copied(built, tmp_path)
    set_row(index / "index.sqlite3", "schema_version", "two")
    code, failed = failed_findings(index)
    assert code == 1 and {"schema", "setting:schema_version"} <= set(failed), failed
    for name, arguments in command_lines(built[0] / "docs").items():
        result = invoke(index, arguments)
        assert result.exit_code == 2 and "records no schema version" in result.stderr, name
    result = invoke(index, ["repair"])
    assert result.exit_code == 1 and "setting:schema_version" in result.stderr
