"""The session store's schema version and migrations."""
from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path

import pytest

from testjack_tui.engine import store as store_module
from testjack_tui.engine.approval import decision_record, stored_kind
from testjack_tui.engine.records_cands import (ApprovalRecord, DecidedBy, DecisionKind, DropRecord, ValidationOutcome,
                                               ValidationRecord)
from testjack_tui.engine.roles import Candidate, OperatorJudgement, ReviewLabel, ReviewVerdict
from testjack_tui.engine.store import SCHEMA_VERSION, SessionStore
from testjack_tui.errors import InputError


def _old_database(path: Path, script: str) -> Path:
    """A database as an older version of the store wrote it (SQL `script`)."""
    db = sqlite3.connect(path)
    db.executescript(script)
    db.commit()
    db.close()
    return path


def test_a_database_from_before_versioning_is_migrated_and_keeps_its_rows(tmp_path):
    # The approvals table as the first version wrote it: no reviewer_label / decision / trial_id.
    path = _old_database(tmp_path / "old.db",
                         "CREATE TABLE approvals (candidate_id TEXT PRIMARY KEY, request_id TEXT, task_id TEXT, "
                         "counts INTEGER, label TEXT, by TEXT, note TEXT, at REAL);"
                         "INSERT INTO approvals VALUES ('c1', 'r1', 't1', 1, 'valid', 'operator', 'ok', 1.0);")
    store = SessionStore(path)
    try:
        row = store.get_approval("c1")
        assert row is not None and row.label == "valid" and row.by == "operator" and row.note == "ok"
        assert row.counts is True and row.request_id == "r1" and row.task_id == "t1" and row.at == 1.0
        # the columns added later read empty: no reviewer label, kind or trial stored, nothing said
        assert row.reviewer_label is None and row.decision is None and row.trial_id is None
        assert row.judgement == OperatorJudgement()
        assert stored_kind(row) == DecisionKind.APPROVED  # a person decided it; its kind was not stored
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()
    SessionStore(path).close()  # opening again is a no-op


def test_runs_of_a_version_5_database_gain_the_grader_column_and_read_as_not_graded(tmp_path):
    # The runs table as version 5 wrote it: no `grader` (what a run of test.sh reported).
    path = _old_database(tmp_path / "v5.db",
                         "CREATE TABLE runs (key TEXT PRIMARY KEY, task_id TEXT, world TEXT, trial_id TEXT, "
                         "candidate_ids TEXT, test_ids TEXT, isolate INTEGER, outcomes TEXT, exit_code INTEGER, "
                         "timed_out INTEGER, head TEXT, tail TEXT, duration REAL, at REAL, same_as TEXT);"
                         "INSERT INTO runs VALUES ('k', 't', 't/reference', NULL, '[]', '[\"a\"]', 0, '{}', 0, 0, "
                         "'', '', 1.0, 1.0, NULL);"
                         "PRAGMA user_version = 5;")
    store = SessionStore(path)
    try:
        run = store.get_run("k")
        # An older session's run of test.sh did not keep its grader's ids: an export runs it again.
        assert run is not None and run.grader is None and run.test_ids == ("a",)
        assert store.graded_runs("t") == {}
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()


def test_a_database_from_a_newer_version_is_refused_in_one_line(tmp_path):
    path = _old_database(tmp_path / "new.db", f"PRAGMA user_version = {SCHEMA_VERSION + 1};")
    with pytest.raises(InputError) as err:
        SessionStore(path)
    assert str(path) in str(err.value) and "user_version" in str(err.value) and "newer" in str(err.value)


def test_every_insert_names_its_columns():
    source = Path(store_module.__file__).read_text()
    assert re.findall(r"INSERT (?:OR \w+ )?INTO \w+ VALUES", source) == []


def test_an_approval_with_the_operators_whole_judgement_round_trips_as_a_record(tmp_path):
    said = ApprovalRecord(
        candidate_id="t:a1:1.v2", request_id="approval:t:a1:1.v2", task_id="t", counts=False,
        label=ReviewLabel.INVALID, by=DecidedBy.OPERATOR, note="reads P too broadly (from verdicts.toml)",
        reviewer_label=ReviewLabel.VALID, decision=DecisionKind.OVERRULED, trial_id="a1",
        judgement=OperatorJudgement("handles aliases", True, "It must handle alias and quoting."), at=12.5)
    store = SessionStore(tmp_path / "s.db")
    try:
        store.put_approval(said)
        assert store.get_approval(said.candidate_id) == said
        assert store.approvals() == [said]
        back = store.get_approval(said.candidate_id)
        assert back is not None and type(back.label) is ReviewLabel and type(back.decision) is DecisionKind
        assert decision_record(back).to_json() == {
            "by": "operator", "decision": "overruled", "reviewer_label": "valid",
            "note": "reads P too broadly (from verdicts.toml)", "at": 12.5,
            "operator": {"requirement": "handles aliases", "explicit": True,
                         "quote": "It must handle alias and quoting."}}
        # explicit = false is something said, kept as said; an empty judgement stays empty
        quiet = dataclasses.replace(said, candidate_id="c2", judgement=OperatorJudgement(explicit=False))
        store.put_approval(quiet)
        assert store.get_approval("c2") == quiet and quiet.judgement.to_json() == {"explicit": False}
        assert store.get_approval("c2").decided().explicit is False
    finally:
        store.close()


def test_the_candidate_pipeline_tables_read_as_records(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    try:
        c = Candidate("t:a1:1.v1", "tests/test_tj.py", "def test_x(): pass\n", "handles x", "audit",
                      test_ids=("tests/test_tj.py::test_x",), origin="script.py")
        store.put_candidate(c, "t", "a1")
        (row,) = store.candidates("t")
        assert store.candidate(c.id) == row and row.test_ids == c.test_ids and row.trial_id == "a1"
        store.put_validation(ValidationRecord(c.id, "", "t", "passed", "", ValidationOutcome.PASSES_REFERENCE, "k1", None))
        (v,) = store.validations("t")
        assert v.trial_id == "" and v.outcome is ValidationOutcome.PASSES_REFERENCE and v.model_run is None
        store.put_drop(DropRecord(c.id, "t", "a1", "fails on the reference"))
        assert [(d.candidate_id, d.reason) for d in store.drops()] == [(c.id, "fails on the reference")]
        assert store.get_repair(c.id) == (False, None)
        store.put_repair(c.id, dataclasses.replace(c, id="t:a1:1.v2", attempt=2, parent=c.id))
        assert store.get_repair(c.id) == (True, dataclasses.replace(c, id="t:a1:1.v2", attempt=2, parent=c.id))
        store.put_repair("gave-up", None)
        assert store.get_repair("gave-up") == (True, None)
        store.put_verdict(ReviewVerdict(c.id, ReviewLabel.QUESTIONABLE, "handles x", False, reason="unclear",
                                        reviewer="scripted"), "t", "a1")
        verdict = store.get_verdict(c.id)
        assert verdict is not None and verdict.label is ReviewLabel.QUESTIONABLE and verdict.explicit is False
        assert store.verdicts() == [verdict]
    finally:
        store.close()


def test_a_label_outside_its_closed_set_is_one_line_naming_the_column(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    try:
        store._db.execute("INSERT INTO approvals(candidate_id, request_id, task_id, counts, label, by, note, at) "
                          "VALUES ('c1', 'r1', 't1', 1, 'maybe', 'operator', '', 1.0)")
        with pytest.raises(InputError) as err:
            store.approvals()
        assert "approvals.label" in str(err.value) and "'maybe'" in str(err.value)
    finally:
        store.close()
