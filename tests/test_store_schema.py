"""The session store's schema version and migrations."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from testjack_tui.engine import store as store_module
from testjack_tui.engine.store import SCHEMA_VERSION, SessionStore
from testjack_tui.errors import InputError


def test_a_database_from_before_versioning_is_migrated_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    # The approvals table as the first version wrote it: no reviewer_label / decision / trial_id.
    db.executescript("CREATE TABLE approvals (candidate_id TEXT PRIMARY KEY, request_id TEXT, task_id TEXT, "
                     "counts INTEGER, label TEXT, by TEXT, note TEXT, at REAL);"
                     "INSERT INTO approvals VALUES ('c1', 'r1', 't1', 1, 'valid', 'operator', 'ok', 1.0);")
    db.commit()
    db.close()
    store = SessionStore(path)
    try:
        row = store.get_approval("c1")
        assert row["label"] == "valid" and row["by"] == "operator"
        assert row["reviewer_label"] == "" and row["decision"] == ""  # the defaults of added columns
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()
    SessionStore(path).close()  # opening again is a no-op


def test_a_database_from_a_newer_version_is_refused_in_one_line(tmp_path):
    path = tmp_path / "new.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(InputError) as err:
        SessionStore(path)
    assert str(path) in str(err.value) and "user_version" in str(err.value) and "newer" in str(err.value)


def test_every_insert_names_its_columns():
    source = Path(store_module.__file__).read_text()
    assert re.findall(r"INSERT (?:OR \w+ )?INTO \w+ VALUES", source) == []
