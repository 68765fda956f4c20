"""The ``[store.postgres]`` table of ragwright.toml: `PostgresBackend`'s settings for an index
opened by URL, read strictly, passed through `open_backend`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.config import Config, load_config
from ragwright.errors import ConfigError
from ragwright.stores import open_backend
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.options import PostgresOptions

#: Nothing listens here: a test that would connect fails instead of passing by accident.
NOWHERE = "postgresql://nobody@127.0.0.1:9/none"


def _config(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "ragwright.toml"
    path.write_text(text)
    return load_config(path)


def test_the_table_sets_the_backend_options(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        "[store.postgres]\nhnsw_m = 24\nhnsw_ef_construction = 128\nhnsw_ef_search = 60\n"
        "exact_limit = 0\npool_size = 2\nretry_seconds = 3\nconnect_timeout = 1.5\n"
        "hnsw_build_memory_mb = 256\nhnsw_build_workers = 0\nkeyword_cache = false\n"
        "vector_cache_mb = 64\nmetadata_index_mb = 32\n",
    )
    options = PostgresBackend.options_from_table(config.section("store")["postgres"], "here")
    assert options == {
        "hnsw_m": 24,
        "hnsw_ef_construction": 128,
        "hnsw_ef_search": 60,
        "exact_limit": 0,
        "pool_size": 2,
        "retry_seconds": 3.0,
        "connect_timeout": 1.5,
        "hnsw_build_memory_mb": 256,
        "hnsw_build_workers": 0,
        "keyword_cache": False,
        "vector_cache_mb": 64,
        "metadata_index_mb": 32,
    }
    assert isinstance(options["retry_seconds"], float)


def test_keys_left_out_keep_the_backend_defaults() -> None:
    options = PostgresOptions.from_table({"hnsw_ef_search": 150}, "here")
    assert options == PostgresOptions(hnsw_ef_search=150)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("hnsw_mm = 16", r"unknown key 'hnsw_mm'; known: pool_size, .*exact_limit"),
        ('hnsw_m = "16"', r"hnsw_m must be an integer from 1 to 1000, not '16'"),
        ("hnsw_m = 0", r"hnsw_m must be an integer from 1 to 1000"),
        ("hnsw_ef_search = 1001", r"hnsw_ef_search must be an integer from 1 to 1000"),
        ("hnsw_ef_construction = 64.0", r"hnsw_ef_construction must be an integer"),
        ("exact_limit = true", r"exact_limit must be an integer >= 0, not True"),
        ("exact_limit = -1", r"exact_limit must be an integer >= 0"),
        ("pool_size = 0", r"pool_size must be an integer >= 1"),
        ('retry_seconds = "10"', r"retry_seconds must be a number >= 0"),
        ("connect_timeout = 0", r"connect_timeout must be a number >= 0.001"),
        ("keyword_cache = 1", r"keyword_cache must be true or false, not 1"),
        ("hnsw_build_memory_mb = 10", r"hnsw_build_memory_mb must be an integer >= 64"),
        ('durability = "full"', r"'durability' is a \[store\.sqlite\] setting: .*commit"),
        ("private = false", r"'private' is a \[store\.sqlite\] setting"),
    ],
)
def test_wrong_keys_types_and_ranges_are_config_errors_naming_file_and_key(
    tmp_path: Path, line: str, message: str
) -> None:
    config = _config(tmp_path, f"[store.postgres]\n{line}\n")
    with pytest.raises(ConfigError, match=r"ragwright\.toml \[store\.postgres\]: " + message):
        open_backend(NOWHERE, config)  # refused before any connection is tried


def test_store_holds_only_tables_of_installed_stores(tmp_path: Path) -> None:
    for text in ("[store.postgress]\nhnsw_m = 16\n", "[store]\npostgres = 3\n"):
        with pytest.raises(ConfigError, match=r"must be the table of an installed store"):
            open_backend(NOWHERE, _config(tmp_path, text))
    both = "[store.postgres]\nhnsw_m = 16\n[store.postgresql]\nhnsw_m = 24\n"
    with pytest.raises(ConfigError, match=r"repeats the postgresql store's table"):
        open_backend(NOWHERE, _config(tmp_path, both))


@pytest.mark.parametrize(
    ("table", "complaint"),
    [
        ("keyword_cache = false", "unknown key 'keyword_cache'"),
        ('durability = "extra"', 'durability must be "normal" or "full"'),
        ('private = "no"', "private must be true or false"),
        ('ann = "sometimes"', 'ann must be "auto", "on" or "off"'),
        ("ann_ef = 0", "ann_ef must be an integer from 1 to 10000"),
    ],
)
def test_the_sqlite_table_is_read_strictly(tmp_path: Path, table: str, complaint: str) -> None:
    config = _config(tmp_path, f"[store.sqlite]\n{table}\n")
    with pytest.raises(ConfigError, match=complaint):
        open_backend(tmp_path / "index", config)


def test_the_sqlite_table_sets_durability_and_sharing(tmp_path: Path) -> None:
    config = _config(tmp_path, '[store.sqlite]\ndurability = "full"\nprivate = false\n')
    with open_backend(tmp_path / "shared", config).open() as store:  # type: ignore[attr-defined]
        assert store._db.connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert (tmp_path / "shared").stat().st_mode & 0o077 != 0  # the umask's, not 0700


def test_a_directory_index_ignores_the_postgres_table(tmp_path: Path) -> None:
    config = _config(tmp_path, "[store.postgres]\nhnsw_ef_search = 200\n")
    backend = open_backend(tmp_path / "index", config)
    assert backend.location == str(tmp_path / "index")
    backend.close()


def test_open_backend_passes_the_table_to_the_backend(tmp_path: Path, pg_url: str) -> None:
    config = _config(tmp_path, "[store.postgres]\nhnsw_ef_search = 250\nexact_limit = 0\n")
    backend = open_backend(pg_url, config)
    try:
        assert isinstance(backend, PostgresBackend)
        assert (backend.hnsw_ef_search, backend.exact_limit) == (250, 0)
        assert backend.hnsw_m == PostgresOptions().hnsw_m
    finally:
        backend.close()
    plain = open_backend(pg_url)  # no config: the defaults
    try:
        assert isinstance(plain, PostgresBackend)
        assert plain.hnsw_ef_search == PostgresOptions().hnsw_ef_search
    finally:
        plain.close()


def test_the_cli_hands_the_store_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command opens the index with ragwright.toml's [store.*] tables: a bad one is the
    command's error (exit 2, naming the file and key), not ignored."""
    from typer.testing import CliRunner

    from ragwright.cli import app

    (tmp_path / "ragwright.toml").write_text("[store.postgres]\nhnsw_ef_search = 0\n", "utf-8")
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for command in (["stats"], ["collections", "list"], ["docs", "list"]):
        result = runner.invoke(app, [*command, "--index", NOWHERE])
        assert result.exit_code == 2, (command, result.output)
        assert "hnsw_ef_search" in result.stderr
