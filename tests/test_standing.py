"""A trial's standing is decided once, when its task's audit ends, and stored: the report reads
it; a session without stored standings (older, or a task that never finished) is decided on
read. One copy per witness is decided as witnesses are stored, and an older database is
grouped once when opened."""
from __future__ import annotations

import sqlite3

from engine_fakes import make_benchmark
from test_dedup import A, B
from test_engine_loop import build, scenario
from testjack_tui.engine.records_standing import Standing, VerdictLabel, WitnessRow
from testjack_tui.engine.report import build_report
from testjack_tui.engine.store import SCHEMA_VERSION, SessionStore


async def test_standings_are_stored_when_the_audit_ends_and_the_report_reads_them():
    session, _, _ = build({"mode": "per-trial"})
    assert await session.run() == "finished"
    task, trials, _ = scenario()
    bench = make_benchmark([task], trials)
    stored = session.store.standings(task.id)
    passing = {t.id for t in trials if t.official_pass}
    assert set(stored) == passing  # every passing trial, the unreproducible ones included
    decided = build_report(session.id, benchmark=bench)
    by_trial = {t.trial_id: t for t in decided.trials}
    assert {tid: s.label for tid, s in stored.items()} == {tid: by_trial[tid].label for tid in stored}
    assert all(isinstance(s.label, VerdictLabel) for s in stored.values())
    assert by_trial["a1"].refuted and by_trial["a1"].label == "INCORRECT_DESPITE_PASS"

    # The report renders what was decided: it does not decide again.
    a3 = stored["a3"]
    session.store.put_standing(Standing(a3.trial_id, a3.task_id, a3.label, a3.confidence,
                                        dict(a3.report, justification="as decided")))
    reread = {t.trial_id: t for t in build_report(session.id, benchmark=bench).trials}
    assert reread["a3"].justification == "as decided"

    # Without stored standings (a session from before them), the same report is decided on read.
    session.store.drop_standings(task.id)
    on_read = build_report(session.id, benchmark=bench)
    assert [t.to_json() for t in on_read.trials] == [t.to_json() for t in decided.trials]
    assert session.store.standings(task.id) == {}  # reading never writes


def test_each_witness_names_its_first_copy_as_it_is_stored(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    try:
        for wid, task_id, source in (("w1", "t", A), ("w2", "t", B), ("w3", "u", B)):
            store.put_witness(WitnessRow(id=wid, task_id=task_id, source_trial=None, requirement="r",
                                         explicit=True, quote="", path="tests/test_x.py", source=source))
        assert {w.id: w.first_copy for w in store.witnesses()} == {"w1": "w1", "w2": "w1", "w3": "w3"}
    finally:
        store.close()


def test_a_database_without_first_copies_is_grouped_once_when_opened(tmp_path):
    path = tmp_path / "old.db"
    SessionStore(path).close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE witnesses DROP COLUMN first_copy")
    for i, source in enumerate((A, B)):
        db.execute("INSERT INTO witnesses(id, task_id, source_trial, requirement, explicit, quote, path, source, "
                   "test_ids, round, label, classification, rho, note, at) "
                   "VALUES (?, 't', NULL, 'r', 1, '', 'tests/test_x.py', ?, '[]', NULL, 'valid', 'refutes', "
                   "NULL, '', ?)", (f"w{i + 1}", source, float(i)))
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    store = SessionStore(path)
    try:
        assert [(w.id, w.first_copy) for w in store.witnesses()] == [("w1", "w1"), ("w2", "w1")]
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()
