"""The PostgreSQL store's parts that need no server: which settings rows `repair` restores is
data below the schema's reads (`repairable`), and `setting_repair` knows how for each."""

from __future__ import annotations

from ragwright.stores.postgres import setting_repair
from ragwright.stores.postgres.repairable import REPAIRS


def test_every_repairable_row_has_a_repair_and_a_note() -> None:
    assert set(setting_repair._FIXES) == set(REPAIRS)
    assert all(note.startswith("repair ") for note in REPAIRS.values())
