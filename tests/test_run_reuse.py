"""`audit --reuse-runs SESSION` (engine/run_reuse.py): a new session takes the runs a session of
the same benchmark made (same key) instead of making them again, runs every other one itself (the
operator's new test), and bad input is one `error:` line. The real-podman use is
test_lang_operator.py (the operator's witness added to each language's scripted audit)."""
from __future__ import annotations

import asyncio
import dataclasses

from typer.testing import CliRunner

from conftest import DEMO
from testjack_tui.cli import app
from testjack_tui.engine.records_runs import CanaryCheck, CanaryVerdict, StoredRun, TrialCheckRow
from testjack_tui.engine.store import SessionStore, db_path

TRIAL = "merge-list-strategies__kestrel__3"


def _stored(key: str) -> StoredRun:
    return StoredRun(key, "t", "t/null", None, (), ("a",), False, {"a": {"status": "failed", "message": ""}},
                     1, False, "head", "tail", 2.0)


class _Counting:
    """A sandbox that counts the runs it is asked for."""

    def __init__(self) -> None:
        self.runs: list[dict] = []

    async def run_tests(self, world, ids, files=None, timeout=300, isolate_harness=False):
        from testjack_tui.sandbox.api import ExecResult, TestRun

        self.runs.append(dict(files or {}))
        return TestRun(world.name, list(ids), {}, ExecResult([], 0, False, "", "", "", "", None, 0.1))


def test_a_run_the_lender_made_is_read_from_it_and_any_other_runs_here(tmp_path):
    from testjack_tui.engine.budget import Budget
    from testjack_tui.engine.budgeted import BudgetedBackend
    from testjack_tui.engine.config import BudgetLimits
    from testjack_tui.engine.runner import TestRunner, run_key
    from testjack_tui.sandbox.api import WorldRef

    lender, store = SessionStore(tmp_path / "lender.db"), SessionStore(tmp_path / "new.db")
    world = WorldRef(task_id="t", kind="null", trial_id=None, image="img:1", workdir="/w")
    bare = run_key(f"{world.name}@{world.image}", ["a"], {}, False)
    with_file = run_key(f"{world.name}@{world.image}", ["a"], {"t.py": "x"}, False)
    for key in (bare, with_file):
        lender.put_run(_stored(key))
    lender.close()
    lender = SessionStore(tmp_path / "lender.db")
    lender.put_canary_check(CanaryCheck(bare, "t", None, world.name, CanaryVerdict.TAMPERED, ("conftest.py",)))
    sandbox = _Counting()
    runner = TestRunner(BudgetedBackend(sandbox, Budget(store, BudgetLimits(), "s")), store, lambda e: None, "s",
                        lender=lender)

    read = asyncio.run(runner.run(world, ["a"], task_id="t"))
    assert read.cached and read.outcomes == {"a": {"status": "failed", "message": ""}} and sandbox.runs == []
    assert read.canaries == "tampered" and read.tampering == ["conftest.py"]
    # Copied into the new session: complete on its own, counted as its run.
    assert store.get_run(bare) is not None and store.count_runs() == 1
    assert [c.key for c in store.canary_checks(key=bare)] == [bare]

    lent = asyncio.run(runner.run(world, ["a"], {"t.py": "x"}, task_id="t"))  # the same file, the same run
    assert lent.cached and sandbox.runs == [] and store.count_runs() == 2
    asyncio.run(runner.run(world, ["a"], {"t.py": "y"}, task_id="t"))  # a test the lender never ran
    assert sandbox.runs == [{"t.py": "y"}] and store.count_runs() == 3
    assert lender.count_runs() == 2  # the lender is only read


def test_a_run_of_one_test_is_taken_from_the_lenders_run_of_the_same_test_batched_or_not(tmp_path):
    """A per-trial audit validates each test alone on a trial the lightweight loop replayed it on,
    batched with other witnesses and under another file name: the lender's run answers it
    (engine/run_reuse.borrow_same_test), counted here like any lent run; another re-run number,
    another snapshot of the world or another test still runs."""
    from testjack_tui.engine.budget import Budget
    from testjack_tui.engine.budgeted import BudgetedBackend
    from testjack_tui.engine.config import BudgetLimits
    from testjack_tui.engine.roles import Candidate
    from testjack_tui.engine.runner import TestRunner, run_key
    from testjack_tui.sandbox.api import WorldRef

    world = WorldRef(task_id="t", kind="model", trial_id="a1", image="img:1", workdir="/w")
    one, two = "def test_x():\n    assert f(0) == 1\n", "def test_y():\n    assert g() is None\n"
    batch = {"tests/test_tj_zero.py": one, "tests/test_tj_none.py": two}
    ids = ["tests/test_tj_zero.py", "tests/test_tj_none.py::test_y"]
    key = run_key(f"{world.name}@{world.image}", ids, batch, True)
    lender = SessionStore(tmp_path / "lender.db")
    for cid, (path, source) in zip(("w1", "w2"), batch.items()):
        lender.put_candidate(Candidate(cid, path, source, "r", "operator",
                                       test_ids=() if cid == "w1" else ("tests/test_tj_none.py::test_y",)), "t", "a2")
    lender.put_run(StoredRun(key, "t", world.name, "a1", ("w1", "w2"), tuple(ids), True,
                             {"tests/test_tj_zero.py::test_x": {"status": "failed",
                                                                 "message": "tests/test_tj_zero.py:2: assert 0 == 1"},
                              "tests/test_tj_none.py::test_y": {"status": "passed", "message": ""}},
                             1, False, "head", "tail", 2.0))
    lender.put_canary_check(CanaryCheck(key, "t", "a1", world.name, CanaryVerdict.UNVERIFIABLE, ("junit",)))
    store, sandbox = SessionStore(tmp_path / "new.db"), _Counting()
    runner = TestRunner(BudgetedBackend(sandbox, Budget(store, BudgetLimits(), "s")), store, lambda e: None, "s",
                        lender=lender)

    mine = "tests/test_tj_zero_a1_op1.py"  # the same test under the name this session gave it
    read = asyncio.run(runner.run(world, [mine], {mine: one}, isolate=True, task_id="t", trial_id="a1",
                                  candidate_ids=["c1"]))
    assert sandbox.runs == [] and read.cached
    assert read.outcomes == {f"{mine}::test_x": {"status": "failed", "message": f"{mine}:2: assert 0 == 1"}}
    assert read.status_of(mine) == "failed" and read.canaries == "unverifiable"
    row = store.get_run(read.key)
    assert row is not None and row.same_as is None and row.candidate_ids == ("c1",) and store.count_runs() == 1

    asyncio.run(runner.run(world, [mine], {mine: one}, isolate=True, task_id="t", candidate_ids=["c1"], repeat=1))
    asyncio.run(runner.run(world, [mine], {mine: one}, task_id="t", candidate_ids=["c1"]))  # not isolated
    other = dataclasses.replace(world, image="img:2")  # another snapshot of the world
    asyncio.run(runner.run(other, [mine], {mine: one}, isolate=True, task_id="t", candidate_ids=["c1"]))
    changed = one.replace("1", "2")
    asyncio.run(runner.run(world, [mine], {mine: changed}, isolate=True, task_id="t", candidate_ids=["c2"]))
    assert sandbox.runs == [{mine: one}] * 3 + [{mine: changed}] and store.count_runs() == 5


def _session(sid: str, benchmark: str, trials: tuple[str, ...] = ()) -> None:
    store = SessionStore.for_session(sid)
    store.set_meta("session_id", sid)
    store.set_meta("config", {"benchmark": benchmark})
    for trial in trials:
        store.put_trial_check(TrialCheckRow(trial, "merge-list-strategies", True, ""))
    store.close()


def _audit(tmp_path, *extra: str):
    mine = tmp_path / "test_mine.py"
    mine.write_text("def test_x():\n    assert True\n")
    args = ["audit", str(DEMO), "--agent", "operator", "--candidate", str(mine), "--reviewer", "scripted",
            "--headless", "--auto-approve", "--out", str(tmp_path / "out"), *extra]
    return CliRunner().invoke(app, args)


def test_bad_reuse_runs_input_is_one_error_line_before_any_world(tmp_path):
    _session("lent", str(DEMO.resolve()), (TRIAL,))
    _session("other", str(tmp_path / "elsewhere"), (TRIAL,))
    cases = {
        ("--reuse-runs", "nope"): "error: audit: --reuse-runs: no session 'nope' (see `testjack-tui sessions`)",
        ("--reuse-runs", "other"): f"error: audit: --reuse-runs: session other audited {tmp_path / 'elsewhere'}, "
                                     f"not {DEMO.resolve()}",
        ("--reuse-runs", "lent", "--trial", "merge-list-strategies__orca__1"):
            "error: audit: --reuse-runs: trial 'merge-list-strategies__orca__1' is not in session lent "
            "(no T0 run of it there)",
    }
    for extra, line in cases.items():
        result = _audit(tmp_path, *extra)
        assert result.exit_code == 2, result.output
        assert [x for x in result.output.splitlines() if x.startswith("error:")] == [line], result.output
    missing = CliRunner().invoke(app, ["audit", str(DEMO), "--agent", "operator", "--candidate",
                                       str(tmp_path / "gone.py"), "--reuse-runs", "lent", "--headless"])
    assert missing.exit_code == 2 and f"error: {tmp_path / 'gone.py'}: --candidate: no such file" in missing.output
    assert not (tmp_path / "out" / "summary.json").exists()
    assert sorted(p.parent.name for p in db_path("lent").parents[1].glob("*/session.db")) == ["lent", "other"]


def test_a_trials_ghost_lines_are_taken_only_from_the_same_world_snapshot_and_t0(tmp_path):
    # A per-trial audit after a lightweight one measured T0's coverage again on every trial the
    # lightweight loop had audited (one container each, the same snapshot): it takes that
    # measurement, and the trial's evidence is the one a coverage run here gives.
    from testjack_tui.engine.detectors import GhostReport, evidence_provider
    from testjack_tui.engine.detectors.ghost import GhostLine
    from testjack_tui.engine.run_reuse import lent_ghost
    from testjack_tui.engine.runner import t0_key
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox.api import WorldRef

    bench = load_benchmark(DEMO)
    trial = next(t for t in bench.trials if t.id == TRIAL)
    task = bench.tasks[trial.task_id]
    world = WorldRef(task_id=task.id, kind="model", trial_id=trial.id, image="img:1", workdir="/app")
    report = GhostReport(task.id, trial.id, "coverage run ...", added_lines=4, executed_lines=3,
                         ghost_lines=[GhostLine("merge/strategies.py", 12, "return fallback(items)")])
    lender = SessionStore(tmp_path / "lender.db")
    lender.put_world(world.name, task.id, "model", trial.id, world.image, ())
    lender.put_evidence(task.id, trial.id, {"trial_id": trial.id, "ghost": report.to_dict(),
                                            "executed_by_witness": {"w": [["merge/strategies.py", 3]]}})
    key = t0_key(task, world)
    assert lent_ghost(lender, trial.id, world.name, world.image, key) is None  # no T0 run of ours there
    lender.put_run(dataclasses.replace(_stored(key), world=world.name, trial_id=trial.id))
    ghost = lent_ghost(lender, trial.id, world.name, world.image, key)
    assert ghost == report.to_dict()
    assert lent_ghost(lender, trial.id, world.name, "img:2", key) is None  # another snapshot
    assert lent_ghost(lender, "other-trial", world.name, world.image, key) is None
    lender.put_evidence(task.id, trial.id, {"trial_id": trial.id,
                                            "ghost": dataclasses.asdict(GhostReport(task.id, trial.id, error="timed out"))})
    assert lent_ghost(lender, trial.id, world.name, world.image, key) is None  # measured nothing: measure here

    taken = asyncio.run(evidence_provider(None, task, trial, {"model": world}, ghost=ghost))
    assert taken["ghost"] == report.to_dict()
    assert [(s["detector"], s["line"]) for s in taken["signals"] if s["detector"] == "ghost_branches"] == \
        [("ghost_branches", 12)]
    assert "executed_by_witness" not in taken  # what the lender's witnesses ran is its own
