"""One copy per witness: the same test written twice counts once and keeps both refutations."""
from __future__ import annotations

from testjack_tui.engine.dedup import fingerprint, group
from testjack_tui.engine.records_standing import WitnessRow

A = '''from recordkit.durations import parse

def test_three_components():
    """1h30m15s is three components."""
    value = parse("1h30m15s")
    assert value == 5415
'''
B = '''from recordkit.durations import parse


def test_compound_with_seconds():  # same check, other names and layout
    got = parse("1h30m15s")
    assert got == 5415
'''
C = A.replace("5415", "5416")


def test_same_test_written_differently_has_one_fingerprint():
    assert fingerprint(A) == fingerprint(B)
    assert fingerprint(A) != fingerprint(C)
    assert fingerprint("def broken(:\n  pass\n") == fingerprint("def broken(:\n pass\n")
    assert fingerprint("# REQ a\n") != fingerprint("# REQ b\n")  # no code: the text decides


def test_group_keeps_the_first_copy_per_task():
    ws = [WitnessRow(id=wid, task_id=task, source_trial=None, requirement="r", explicit=True, quote="",
                     path="test_x.py", source=source)
          for wid, task, source in (("w1", "t", A), ("w2", "t", B), ("w3", "t", C), ("w4", "u", B))]
    assert group(ws) == {"w1": "w1", "w2": "w1", "w3": "w3", "w4": "w4"}


async def test_summary_and_export_count_a_duplicate_once_and_list_both_refutations():
    from engine_fakes import cand, make_task, make_trial
    from test_engine_loop import build

    task = make_task("t1")
    trials = [make_trial("t1", "a1", "model-A", ["alias"]), make_trial("t1", "a2", "model-B", ["alias"]),
              make_trial("t1", "a3", "model-C")]
    same = cand("t1", "a1", 1, "alias")  # both audits write the same test
    chains = {"a1": [[same]], "a2": [[cand("t1", "a2", 1, "alias")]]}
    session, _, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains)
    assert await session.run() == "finished"
    [w] = session.summary().tasks["t1"].witnesses
    assert w.refutes == ["a1", "a2"] and len(w.duplicates) == 1
    from testjack_tui.engine.export import plan_export
    [exp] = plan_export(session.id, {"t1": task})
    assert len(exp.files) == 1 and exp.refuted == ["a1", "a2"]


async def test_export_writes_t1_and_underspecified_witnesses_apart_from_the_suite(tmp_path):
    from engine_fakes import cand
    from test_engine_loop import T, build, scenario
    from testjack_tui.engine.export import plan_export, write_harbor
    from testjack_tui.compose import app_hooks
    from testjack_tui.engine.hooks import WitnessClass

    def classify(task, witnesses, runs, trials):
        return {w.id: WitnessClass("ambiguous", 0.8, 'Add to the task: "Handles quote."')
                if "quote" in w.requirement else WitnessClass("refutes", 0.2) for w in witnesses}

    analysis = [[cand(T, None, 1, "alias", author="task_analysis")],
                [cand(T, None, 2, "nothing", author="task_analysis")]]
    session, _, _ = build(hooks=app_hooks(classifier=classify), analysis=analysis)
    assert await session.run() == "finished"
    task, trials, _ = scenario()
    [exp] = plan_export(session.id, {T: task})
    assert exp.files and all("quote" not in f.requirement for f in exp.files)
    assert [w["requirement"] for w in exp.underspecified] == ["handles quote"]
    assert exp.underspecified[0]["clarification"].startswith("Add to the task")
    assert "handles nothing" in {t["requirement"] for t in exp.task_analysis}  # T1 every trial passes
    tests_dir = write_harbor(exp, task, tmp_path)
    under = tmp_path / T / "testjack_underspecified"
    assert (under / "README.md").read_text().count("Suggested clarification") == 1
    assert not (tests_dir / "testjack_underspecified").exists()  # not part of the suite
    assert (tmp_path / T / "testjack_task_analysis" / "README.md").exists()
