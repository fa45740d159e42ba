"""The run, world and check tables as typed records (engine/records_runs.py): what is written
reads back the same, and rows an older TestJack wrote (fields missing, NULLs) read with defaults."""
from __future__ import annotations

import dataclasses
import sqlite3

from testjack_tui.engine.records_runs import (AuditRow, CanaryCheck, CanaryVerdict, GraderReport, LedgerTotals, Proof,
                                              ProofKind, RunHeader, StoredRun, TaskCheckRow, TrialCheckRow,
                                              WorldKindName)
from testjack_tui.engine.store import SessionStore


def _stamped(record, at):
    return dataclasses.replace(record, at=at)


def test_records_round_trip_through_the_store(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    try:
        run = StoredRun("k1", "task", "task/model/t1", "t1", ("w1",), ("tests/test_a.py",), True,
                        {"tests/test_a.py::test_x": {"status": "failed", "message": "E  assert 1 == 2"}},
                        1, False, "head", "tail", 0.25)
        store.put_run(run)
        [stored] = store.runs()
        assert stored == _stamped(run, stored.at) and stored.at > 0
        assert store.get_run("k1") == stored and store.runs_by_key(["k1", "nope"]) == {"k1": stored}
        assert store.run_headers() == [RunHeader("k1", "task", "task/model/t1", "t1", ("w1",), stored.at)]
        assert store.count_runs() == 1 and store.get_run("nope") is None
        # A run of the task's own test.sh keeps what its grader reported, with the inputs it ran.
        graded = dataclasses.replace(run, key="k2", world="task/reference", trial_id=None, candidate_ids=(),
                                     grader=GraderReport("d1", ("suite a", "suite b")))
        store.put_run(graded)
        assert store.get_run("k2") == _stamped(graded, store.get_run("k2").at)
        assert store.graded_runs("task") == {"k2": GraderReport("d1", ("suite a", "suite b"))}
        assert store.graded_runs("other") == {}

        check = TaskCheckRow("task", False, ("no reference",), ("t0::vacuous",), ("t1",), ("t0::guard",),
                             ("t0::flaky",))
        store.put_task_check(check)
        assert store.task_checks() == {"task": check}
        trial = TrialCheckRow("t1", "task", False, "patch does not apply", model="m", agent="a",
                              official_pass=True, reward=1.0, excluded=False, tampered=("tests/conftest.py",))
        store.put_trial_check(trial)
        assert store.trial_checks() == {"t1": trial}

        canary = CanaryCheck("k1", "task", "t1", "task/model/t1", CanaryVerdict.TAMPERED, ("forged",))
        store.put_canary_check(canary)
        [got] = store.canary_checks(trial_id="t1")
        assert got == _stamped(canary, got.at) and store.canary_checks(key="k1") == [got]
        assert got.verdict is CanaryVerdict.TAMPERED

        store.put_world("task/model/t1", "task", "model", "t1", "img:1", ["tests/conftest.py"])
        [world] = store.worlds()
        assert world.kind is WorldKindName.MODEL and world.tampered == ("tests/conftest.py",)
        assert (world.name, world.trial_id, world.image, world.error) == ("task/model/t1", "t1", "img:1", "")

        store.add_ledger("audit", "gpt-x", 100, 20, 0.5, True, "c1", "task", "t1")
        store.add_ledger("explainer", "gpt-x", 10, 2, 0.25, False, "c2", "task", None)
        assert [(e.role, e.trial_id, e.estimated) for e in store.ledger()] == [
            ("audit", "t1", True), ("explainer", None, False)]
        assert store.ledger_totals() == LedgerTotals(tokens=132, usd=0.75, estimated=True, calls=2)

        store.put_audit("task", "t1", {"notes": "n", "findings": []})
        assert store.get_audit("task", "t1") == {"notes": "n", "findings": []}
        [audit] = store.audits()
        assert audit == AuditRow("task", "t1", {"notes": "n", "findings": []}, audit.at)

        store.put_proof("task", "t1", ProofKind.HARNESS_EFFECT, "t0", {"files": ["conftest.py"]})
        [proof] = store.proofs("t1")["t1"]
        assert proof == Proof("t1", "task", ProofKind.HARNESS_EFFECT, "t0",
                              {"files": ["conftest.py"], "kind": "harness_effect"}, proof.at)
    finally:
        store.close()


def test_old_shaped_rows_read_with_defaults(tmp_path):
    """Rows as an older TestJack (or a crash between writes) left them: a task check without
    its data, a trial check with only some of its fields, a run with NULL output columns."""
    path = tmp_path / "old.db"
    SessionStore(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO task_checks(task_id, well_formed, problems, vacuous, data) "
               "VALUES ('task', 1, '[]', '[]', NULL)")
    db.execute("INSERT INTO trial_checks(trial_id, task_id, reproduced, reason, data) "
               "VALUES ('t1', 'task', 1, NULL, '{\"model\": \"m\"}')")
    db.execute("INSERT INTO runs(key, task_id, world, trial_id, candidate_ids, test_ids, isolate, outcomes, "
               "exit_code, timed_out, head, tail, duration, at) "
               "VALUES ('k', 'task', 'task/reference', NULL, NULL, '[\"a\"]', 0, NULL, NULL, 0, NULL, NULL, NULL, 1.0)")
    db.execute("INSERT INTO ledger(at, role, model, prompt_tokens, completion_tokens, usd, estimated) "
               "VALUES (1.0, 'audit', 'gpt-x', NULL, 5, NULL, NULL)")
    db.commit()
    db.close()
    store = SessionStore(path)
    try:
        assert store.task_checks() == {"task": TaskCheckRow("task", True)}
        assert store.trial_checks() == {"t1": TrialCheckRow("t1", "task", True, "", model="m")}
        run = store.get_run("k")
        assert run == StoredRun("k", "task", "task/reference", None, (), ("a",), False, {}, None, False,
                                "", "", 0.0, 1.0)
        [entry] = store.ledger()
        assert (entry.prompt_tokens, entry.completion_tokens, entry.usd, entry.estimated) == (0, 5, 0.0, False)
        assert (entry.call_id, entry.task_id, entry.trial_id) == ("", "", None)
        assert store.ledger_totals() == LedgerTotals(tokens=0, usd=0.0, estimated=False, calls=1)
    finally:
        store.close()
