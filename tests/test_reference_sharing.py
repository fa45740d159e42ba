"""One run per test and world (engine/oracle.taken_run): a candidate whose test (source and ids,
in the same folder) already ran on a world of the task, for an earlier candidate or in a
witness's replay, takes that stored run instead of a container of its own, and says so (the
copied run's `same_as`; on the reference, the validation's `reference_of`; the report's cost
line). Counted on the simulated sandbox
(engine_fakes.py), whose scenario's audits propose the same test for several trials, as the demo's
scripted agents do; the demo audits bound it on real worlds (test_audit_cmd_e2e.py,
test_report_e2e.py)."""
from __future__ import annotations

import dataclasses

from engine_fakes import FakeSandbox, cand
from test_engine_loop import T, build, scenario
from test_resume_engine import fresh_deps
from testjack_tui.engine.events import CandidateValidated
from testjack_tui.engine.oracle import REFERENCE_RUNS
from testjack_tui.engine.report import build_report
from testjack_tui.engine.report_render import session_markdown
from testjack_tui.engine.session import AuditSession
from testjack_tui.engine.summary import outcome_view
from testjack_tui.services.approvals import approval_context


def reference_runs(sandbox: FakeSandbox) -> list[tuple]:
    """The sandbox's runs of candidate files on the reference world."""
    return [c for c in sandbox.runs(f"{T}/reference") if c[3]]


def sources_of(session) -> dict[str, str]:
    """candidate id -> its test's source, for every candidate of the session."""
    return {c.id: c.source for c in session.store.candidates()}


async def test_a_test_proposed_for_several_trials_runs_on_the_reference_once_per_rerun():
    session, sandbox, _ = build({"mode": "per-trial"})
    await session.run()
    sources = sources_of(session)
    validations = session.store.validations(T)
    assert len(validations) == len(sources) == 8  # every candidate is validated, copies included
    distinct = set(sources.values())
    assert len(distinct) == 5  # a2's and a5's alias test are one; a1's, a3's and a4's quote test too
    # Each test's first run once, and the flaky control's re-runs once for a test that
    # discriminated on some trial: 13 runs, where each candidate ran its own (16).
    discriminated = {sources[v.candidate_id] for v in validations if v.outcome == "discriminates"}
    assert len(reference_runs(sandbox)) == len(distinct) + (REFERENCE_RUNS - 1) * len(discriminated) == 13
    shared = {v.candidate_id: v.reference_of for v in validations if v.reference_of}
    assert sorted(shared) == [f"{T}:a3:1.v1", f"{T}:a4:2.v1", f"{T}:a5:1.v1"]
    order = [v.candidate_id for v in validations]
    for mine, theirs in shared.items():  # an earlier candidate's run of the same test
        assert sources[mine] == sources[theirs] and order.index(theirs) < order.index(mine)


async def test_a_shared_reference_run_is_stored_under_the_candidates_own_names():
    session, _, _ = build({"mode": "per-trial"})
    seen: list[CandidateValidated] = []
    session.subscribe(lambda e: seen.append(e) if isinstance(e, CandidateValidated) else None)
    await session.run()
    a5 = next(v for v in session.store.validations(T) if v.candidate_id == f"{T}:a5:1.v1")
    mine, theirs = session.store.candidate(a5.candidate_id), session.store.candidate(a5.reference_of)
    assert mine.path != theirs.path and mine.source == theirs.source  # renamed per trial by the book
    copy = session.store.get_run(a5.reference_run)
    original = session.store.get_run(copy.same_as)
    assert copy.same_as and original.same_as is None and original.candidate_ids == (theirs.id,)
    assert copy.candidate_ids == (mine.id,) and list(copy.outcomes) == [f"{mine.path}::test_it"]
    assert list(copy.outcomes.values()) == list(original.outcomes.values())
    # What the operator's approval screen shows of it: its own run on the reference, by its name.
    assert approval_context(session.store, mine.id).reference.status == "passed"
    # The event the CLI and the TUI show names whose run answered.
    assert [e.reference_of for e in seen if e.candidate_id == mine.id] == [theirs.id]
    # The budget counts runs made: a copy is not one.
    assert session.store.count_runs() == len([r for r in session.store.runs() if r.same_as is None])
    assert "(6 more taken from the same test's earlier run on the same world, not run again)" in \
        session_markdown(build_report(session.id))


async def test_the_flaky_control_still_reruns_a_shared_test_it_never_reran():
    # a3's quote test passes on both worlds (run once on R[G]); a4, which misses "quote", proposes
    # the same test: it takes a3's first run but makes its own two control re-runs, and they
    # catch a test that passes on R[G] only the first time.
    task, trials, chains = scenario()
    chains = {"a3": chains["a3"], "a4": [[cand(T, "a4", 1, "quote")]]}
    sandbox = FakeSandbox({task.id: task}, {t.id: t for t in trials})
    calls = {"n": 0}
    original = sandbox._candidate_status

    def first_time_only(world, trial, source):
        if world.kind == "reference":
            calls["n"] += 1
            return "passed" if calls["n"] == 1 else "failed"
        return original(world, trial, source)

    sandbox._candidate_status = first_time_only
    session, _, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains, sandbox=sandbox)
    await session.run()
    a4 = next(v for v in session.store.validations(T) if v.candidate_id == f"{T}:a4:1.v1")
    assert a4.reference_of == f"{T}:a3:1.v1" and a4.outcome == "flaky"
    assert len(reference_runs(sandbox)) == REFERENCE_RUNS  # a3's first run, a4's two re-runs
    drops = {d.candidate_id: d.reason for d in session.store.drops()}
    assert drops[a4.candidate_id].startswith("flaky: passed on the reference world, then failed on re-run 2")


async def test_a_test_in_another_folder_or_with_other_ids_is_another_test():
    task, trials, _ = scenario()
    chains = {"a2": [[cand(T, "a2", 1, "alias")]],
              "a5": [[cand(T, "a5", 1, "alias", path="other/test_tj_alias.py")]],
              "a1": [[dataclasses.replace(cand(T, "a1", 1, "alias"), test_ids=("tests/test_tj_alias.py::test_it",))]]}
    session, sandbox, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains)
    await session.run()
    assert not [v for v in session.store.validations(T) if v.reference_of]
    assert len({c[3] for c in reference_runs(sandbox)}) == 3


async def test_a_per_trial_session_resumed_after_a_crash_anywhere_repeats_no_run_and_names_the_same_runs():
    reference, ref_sandbox, _ = build({"mode": "per-trial"})
    await reference.run()
    expected = outcome_view(reference.summary())
    shared = {v.candidate_id: v.reference_of for v in reference.store.validations(T)}
    total = len(ref_sandbox.runs())
    task, trials, _ = scenario()
    for crash_at in range(1, total, 2):
        crashing = FakeSandbox({task.id: task}, {t.id: t for t in trials}, fail_after=crash_at)
        session, _, _ = build({"mode": "per-trial"}, sandbox=crashing)
        assert await session.run() == "failed"
        healthy = FakeSandbox({task.id: task}, {t.id: t for t in trials})
        again = AuditSession.open(session.id, fresh_deps(session, healthy))
        assert await again.run() == "finished"
        assert outcome_view(again.summary()) == expected, f"crash after {crash_at} runs"
        assert len(crashing.runs()) + len(healthy.runs()) == total, "stored runs are not repeated"
        assert {v.candidate_id: v.reference_of for v in again.store.validations(T)} == shared


async def test_a_witness_is_not_replayed_where_the_same_test_already_ran():
    # a1's and a3's audits proposed the quote test and ran it on their own worlds (it passes
    # there); a4's audit proposes it too, it discriminates on a4 and is replayed on every other
    # trial: on a1 and a3 the validation runs answer, no container; the per-trial audit's 44 runs
    # against 47 when every replay ran.
    session, sandbox, _ = build({"mode": "per-trial"})
    await session.run()
    store = session.store
    witness = store.candidate(f"{T}:a4:2.v1")
    runs = {r.trial_id: r for r in store.witness_runs(T) if r.witness_id == witness.id}
    for trial in ("a1", "a3"):
        own = next(v for v in store.validations(T) if v.trial_id == trial and
                   store.candidate(v.candidate_id).source == witness.source)
        copy = store.get_run(runs[trial].run_key)
        assert copy.same_as == own.model_run and copy.trial_id == trial and runs[trial].status == "passed"
        assert list(copy.outcomes) == [f"{witness.path}::test_it"]
        assert not [c for c in sandbox.runs(f"{T}/model/{trial}") if witness.path in c[3]]
    assert len(sandbox.runs()) == 44
    copies = [r for r in store.runs() if r.same_as]
    assert session.summary().usage.same_test_runs == len(copies) == 6  # 3 on R[G], 3 on trials' worlds


async def test_the_tui_shows_whose_run_answered_a_candidate_on_the_reference():
    from rich.console import Console

    from testjack_tui.tui.live_state import LiveSession
    from testjack_tui.tui.widgets.candidates import candidate_detail

    session, _, _ = build({"mode": "per-trial"})
    events: list = []
    session.subscribe(events.append)
    await session.run()
    live = LiveSession(session.id)
    live.apply_all(events)
    view = live.candidates[f"{T}:a5:1.v1"]
    # a2's witness was replayed on a5 before a5's audit proposed the same test: both runs taken
    assert view.reference == view.model == "passed" and view.reference_of == view.model_of == f"{T}:a2:1.v1"
    console = Console(width=200, record=True)
    console.print(candidate_detail(view))
    shown = console.export_text()
    assert f"reference: the run of {T}:a2:1.v1 (the same test)" in shown
    assert f"trial: the run of {T}:a2:1.v1 (the same test)" in shown
    assert not live.candidates[f"{T}:a2:1.v1"].reference_of


def test_a_copy_lent_by_another_session_is_a_lent_run_here(tmp_path):
    # --reuse-runs: a run the lender took from its own same test's run is, for the borrower, a
    # lent run like any other (counted against its budget, and as its run): not marked as a copy
    # of a run the borrower never held.
    from testjack_tui.engine.records_runs import StoredRun
    from testjack_tui.engine.run_reuse import borrow
    from testjack_tui.engine.store import SessionStore

    lender, mine = SessionStore(tmp_path / "lender.db"), SessionStore(tmp_path / "mine.db")
    lender.put_run(StoredRun("k2", "t", "t/reference", None, ("c2",), ("tests/test_b.py",), False,
                             {"tests/test_b.py::test_it": {"status": "passed", "message": ""}}, 0, False,
                             "", "", 1.0, same_as="k1"))
    reserved: list[int] = []
    run = borrow(lender, mine, "k2", "t", None, ["mine2"], lambda: reserved.append(1))
    assert run is not None and run.same_as is None and mine.get_run("k2").same_as is None
    assert reserved == [1] and mine.count_runs() == 1


def test_a_copy_under_another_file_name_answers_in_the_graders_scheme_too():
    # The export reads a witness's ids in the grader's scheme from its run on R[G]; a copied run
    # carried only our runner's `path::test` ids, so the rust fixture's witness (copied from
    # kestrel's tests/tj_range.rs to lumen's tests/tj_range_lumen_2_1.rs) exported no id at all.
    from testjack_tui.sandbox.runners import moved_grader_ids

    cargo = ["numerals::tj_range: top_of_the_range", "tests/tj_range.rs", "tests/tj_range.rs::top_of_the_range",
             "numerals::convert: subtractive_forms"]
    assert moved_grader_ids("cargo", "tests/tj_range.rs", "tests/tj_range_2.rs", cargo) == {
        "numerals::tj_range: top_of_the_range": "numerals::tj_range_2: top_of_the_range"}
    go = ["example.com/textkit.TestTJ", "x_tj_test.go::TestTJ", "example.com/textkit.TestOther"]
    assert moved_grader_ids("go", "x_tj_test.go", "x_2_tj_test.go", go) == {
        "example.com/textkit.TestTJ": "example.com/textkit.TestTJ"}  # a package's id names no file
    js = ["test/a.tj.test.ts: decodes + > as a space", "test/a.tj.test.ts::decodes + > as a space"]
    assert moved_grader_ids("vitest", "test/a.tj.test.ts", "test/a_2.tj.test.ts", js) == {
        "test/a.tj.test.ts: decodes + > as a space": "test/a_2.tj.test.ts: decodes + > as a space"}
    django = ["test_a (app.test_x.Class)", "app/test_x.py::Class::test_a", "test_b (app.test_y.Class)"]
    assert moved_grader_ids("django", "app/test_x.py", "app/test_x_2.py", django) == {
        "test_a (app.test_x.Class)": "test_a (app.test_x_2.Class)"}
