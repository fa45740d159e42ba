"""The engine's loop logic on a simulated sandbox (see engine_fakes.py): task checks, oracle
validation with repairs, reviewer gate, witness sharing by replay, per-trial mode, approvals,
step mode and the classification hook."""
from __future__ import annotations

import asyncio
import threading


from engine_fakes import (FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, cand,
                          make_benchmark, make_task, make_trial, tools_factory)
from testjack_tui.engine.events import (ApprovalRequested, CandidateDropped, Paused, RoundFinished,
                                        TaskChecked)
from testjack_tui.engine.hooks import WitnessClass, default_classifier
from testjack_tui.engine.records_agent import PromptSilent
from testjack_tui.engine.roles import ApprovalDecision
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.engine.summary import outcome_view
from testjack_tui.compose import app_hooks, session_deps

T = "t1"


def scenario():
    task = make_task(T)
    trials = [
        make_trial(T, "a1", "model-A", ["alias"]),
        make_trial(T, "a2", "model-B", ["alias"]),
        make_trial(T, "a3", "model-C"),
        make_trial(T, "a4", "model-A", ["quote"]),
        make_trial(T, "a5", "model-B"),
        make_trial(T, "a6", "model-C", extra="NOAPPLY"),
        make_trial(T, "a7", "model-C", extra="FAILT0"),
        make_trial(T, "a8", "model-C", ["alias"], official_pass=False),
    ]
    chains = {
        # a1: first version fails on G, the repair discriminates; a second candidate passes both.
        "a1": [[cand(T, "a1", 1, "alias", broken=True), cand(T, "a1", 1, "alias", version=2)],
               [cand(T, "a1", 2, "quote")]],
        "a2": [[cand(T, "a2", 1, "alias")]],
        "a3": [[cand(T, "a3", 1, "quote")]],
        # a4: a candidate the reviewer rejects, and a valid one.
        "a4": [[cand(T, "a4", 1, "quote", label="invalid", path="tests/test_tj_exact_error.py")],
               [cand(T, "a4", 2, "quote")]],
        "a5": [[cand(T, "a5", 1, "alias")]],
    }
    return task, trials, chains


def build(config: dict | None = None, *, task=None, trials=None, chains=None, analysis=None,
          sandbox=None, hooks=None, session_id=None):
    if task is None:
        task, trials, chains = scenario()
    tasks = task if isinstance(task, list) else [task]
    benchmark = make_benchmark(tasks, trials)
    sandbox = sandbox or FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials})
    all_chains = dict(chains)
    if analysis:
        all_chains["analysis"] = analysis
    roles = FakeRoles(FakeAudit(all_chains), FakeReviewer(), FakeAnalyst(all_chains))
    cfg = SessionConfig(**{"benchmark": "fake", "rounds": 10, **(config or {})})
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=benchmark, roles=roles, sandbox_factory=sandbox,
                                               tools_factory=tools_factory,
                                               hooks=hooks or app_hooks(classifier=default_classifier)), session_id=session_id)
    return session, sandbox, roles


def states(summary, task_id=T):
    return {tid: t.state for tid, t in summary.tasks[task_id].trials.items()}


async def test_lightweight_loop_refutes_defective_trials_and_shares_witnesses():
    session, sandbox, roles = build()
    events = []
    session.subscribe(events.append)
    assert await session.run() == "finished"
    summary = session.summary()
    assert states(summary) == {"a1": "refuted", "a2": "refuted", "a3": "clean", "a4": "refuted",
                               "a5": "clean", "a6": "not_reproducible", "a7": "not_reproducible"}
    # a8 did not pass officially: not part of the corpus.
    task = summary.tasks[T]
    assert task.well_formed is True
    counts = task.models["model-A"]
    assert counts["passing"] == 2 and counts["refuted"] == 2
    # Witness sharing: some refuted trial was never audited itself.
    audited = set(roles.audit.audits)
    assert {"a1", "a2"} - audited, "one alias trial is refuted by replay, without its own audit"
    # Only approved-valid candidates are witnesses; the invalid one is not.
    witness_ids = {w.id for w in task.witnesses}
    assert not any(":a4:1." in w for w in witness_ids)
    # Every refutation records the witness's runs on both worlds and the requirement.
    for tid in ("a1", "a2", "a4"):
        ref = task.trials[tid].refutations[0]
        assert ref.requirement
        assert ref.reference.status == "passed" and ref.model.status == "failed"
        assert ref.model.tests, "the witness's own test results on the trial are kept"
    kinds = {type(e).__name__ for e in events}
    assert {"SessionStarted", "TaskChecked", "RoundStarted", "CandidateValidated", "ReviewerVerdictEvent",
            "ApprovalAnswered", "WitnessConfirmed", "TrialRefuted", "RoundFinished", "SessionFinished"} <= kinds


async def test_replay_is_batched_one_run_per_trial_per_round():
    session, sandbox, _ = build()
    await session.run()
    rounds = session.store.rounds(T)
    with_witnesses = [r for r in rounds if r.witnesses]
    assert with_witnesses
    # Each isolated run on a model world that is not an oracle run carries all new witness files.
    isolated = [c for c in sandbox.runs(f"{T}/model/") if c[4]]
    per_world: dict[str, int] = {}
    for call in isolated:
        per_world[call[1]] = per_world.get(call[1], 0) + 1
    # oracle runs (one per audited candidate on its trial) + at most one replay per witness round
    oracle_runs = len([v for v in session.store.validations(T) if v.model_run])
    # + the flaky-control re-run of each discriminating candidate on its trial
    reruns = len([v for v in session.store.validations(T) if v.outcome == "discriminates"])
    assert len(isolated) <= oracle_runs + reruns + len(with_witnesses) * 4


async def test_repair_then_drop_after_k_attempts_with_reason():
    task = make_task(T)
    trials = [make_trial(T, "b1", "m", ["alias"])]
    chains = {"b1": [[cand(T, "b1", 1, "alias", broken=True, version=v) for v in (1, 2, 3)]]}
    session, sandbox, roles = build({"k_repairs": 1}, task=task, trials=trials, chains=chains)
    events = []
    session.subscribe(events.append)
    await session.run()
    drops = session.store.drops()
    assert len(drops) == 1 and "after 1 repair" in drops[0].reason
    assert roles.audit.repairs == [f"{T}:b1:1.v1"], "k=1: one repair request, then dropped"
    assert any(isinstance(e, CandidateDropped) for e in events)
    assert states(session.summary()) == {"b1": "clean"}


async def test_candidate_ids_and_paths_are_made_unique_per_task():
    task = make_task(T)
    trials = [make_trial(T, "c1", "m", ["alias"]), make_trial(T, "c2", "m", ["quote"])]
    # Both audits write tests/test_tj_x.py: one must be renamed so a batched replay can carry both.
    chains = {"c1": [[cand(T, "c1", 1, "alias", path="tests/test_tj_x.py")]],
              "c2": [[cand(T, "c2", 1, "quote", path="tests/test_tj_x.py")]]}
    session, _, _ = build({"replay_scope": "all", "mode": "per-trial"}, task=task, trials=trials, chains=chains)
    await session.run()
    paths = sorted(w.path for w in session.store.witnesses(T))
    assert paths == ["tests/test_tj_x.py", "tests/test_tj_x_c2_1.py"]  # named after its id


async def test_not_well_formed_task_is_reported_and_excluded():
    bad = make_task("bad", bad_reference=True)
    good, trials, chains = scenario()
    trials = trials + [make_trial("bad", "z1", "m", ["alias"])]
    session, sandbox, roles = build(task=[good, bad], trials=trials, chains=chains)
    events = []
    session.subscribe(events.append)
    await session.run()
    checked = {e.task_id: e for e in events if isinstance(e, TaskChecked)}
    assert checked["bad"].well_formed is False
    assert any("G does not pass T0" in p for p in checked["bad"].problems)
    summary = session.summary()
    assert summary.tasks["bad"].trials["z1"].state == "excluded"
    assert "z1" not in roles.audit.audits
    assert summary.totals["excluded"] == 1


async def test_task_analysis_tests_refute_trials_that_fail_them():
    task = make_task(T)
    trials = [make_trial(T, "d1", "m1", ["alias"]), make_trial(T, "d2", "m2"), make_trial(T, "d3", "m3")]
    analysis = [[cand(T, None, 1, "alias", broken=True, author="task_analysis"),
                 cand(T, None, 1, "alias", version=2, author="task_analysis")],
                [cand(T, None, 2, "quote", author="task_analysis")]]
    session, _, roles = build({"rounds": 0}, task=task, trials=trials, chains={}, analysis=analysis)
    await session.run()
    summary = session.summary()
    assert states(summary) == {"d1": "refuted", "d2": "unaudited", "d3": "unaudited"}
    w = summary.tasks[T].witnesses
    assert len(w) == 1 and w[0].origin == "task_analysis" and w[0].source_trial is None
    assert roles.task_analysis.repairs == [f"{T}:analysis:1.v1"]


async def test_rounds_limit_leaves_unaudited_trials():
    session, _, roles = build({"rounds": 1, "seed": 3})
    await session.run()
    summary = session.summary()
    assert len(roles.audit.audits) == 1
    sampled = roles.audit.audits[0]
    st = states(summary)
    assert st[sampled] in ("refuted", "clean")
    assert "unaudited" in st.values()
    # Sound trials are never refuted, whatever was sampled.
    assert st["a3"] != "refuted" and st["a5"] != "refuted"


async def test_same_seed_same_result_and_seed_changes_order():
    views, orders = [], []
    for seed in (7, 7, 8, 9, 10):
        session, _, roles = build({"seed": seed})
        await session.run()
        views.append(outcome_view(session.summary()))
        orders.append(tuple(roles.audit.audits))
    assert views[0] == views[1] and orders[0] == orders[1]
    assert len(set(orders)) > 1, "different seeds sample in different orders"
    # The final verdicts do not depend on the order here (every trial is reached).
    assert all(v[T].trials == views[0][T].trials for v in views)


async def test_per_trial_mode_audits_every_passing_trial():
    session, _, roles = build({"mode": "per-trial"})
    await session.run()
    assert sorted(roles.audit.audits) == ["a1", "a2", "a3", "a4", "a5"]
    assert states(session.summary())["a2"] == "refuted"


async def test_operator_approvals_queue_without_blocking_other_tasks():
    t1, t2 = make_task("p1"), make_task("p2")
    trials = [make_trial("p1", "p1a", "m", ["alias"]), make_trial("p2", "p2a", "m", ["alias"])]
    chains = {"p1a": [[cand("p1", "p1a", 1, "alias")]], "p2a": [[cand("p2", "p2a", 1, "alias")]]}
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 2},
                          task=[t1, t2], trials=trials, chains=chains)
    requests: list[ApprovalRequested] = []
    finished_rounds: list[str] = []

    def on_event(event):
        if isinstance(event, ApprovalRequested):
            requests.append(event)
            if event.task_id == "p2":
                # Answer p2 at once, from another thread, overruling the reviewer.
                threading.Thread(target=session.answer, args=(
                    event.request_id, ApprovalDecision(False, "invalid", "operator", "asserts G's wording"))).start()
        if isinstance(event, RoundFinished):
            finished_rounds.append(event.task_id)
            if event.task_id == "p2":
                # p1's approval is still pending while p2 finished its round: nothing blocked.
                pending = [r for r in session.pending_approvals() if r.task_id == "p1"]
                assert pending
                session.answer(f"approval:{pending[0].candidate.id}",
                               ApprovalDecision(True, "valid", "operator"))

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 10) == "finished"
    assert finished_rounds == ["p2", "p1"]
    summary = session.summary()
    assert summary.tasks["p1"].trials["p1a"].state == "refuted"
    assert summary.tasks["p2"].trials["p2a"].state == "clean"  # the operator overruled
    approvals = {a.task_id: a for a in session.store.approvals()}
    assert approvals["p2"].by == "operator" and approvals["p2"].counts is False


async def test_step_mode_pauses_before_rounds_and_after_verdicts():
    session, _, _ = build({"step": True, "rounds": 10})
    paused: list[Paused] = []

    def on_event(event):
        if isinstance(event, Paused):
            paused.append(event)
            asyncio.get_running_loop().call_later(0.001, session.step_next)

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 10) == "finished"
    waits = [p.waiting_for for p in paused]
    assert waits[0].startswith("round 1")
    assert any(w.startswith("after the verdict") for w in waits)
    assert any(w.startswith("round 2") for w in waits)


async def test_classifier_hook_ambiguous_witnesses_do_not_refute():
    def all_ambiguous(task, witnesses, runs_by_trial, trials):
        return {w.id: WitnessClass("ambiguous", 1.0, "say it in P") for w in witnesses}

    session, _, _ = build(hooks=app_hooks(classifier=all_ambiguous))
    await session.run()
    st = states(session.summary())
    assert "refuted" not in st.values()
    assert st["a1"] == "ambiguous" and st["a2"] == "ambiguous"
    assert all(w.classification == "ambiguous" for w in session.summary().tasks[T].witnesses)


async def test_refutation_withdrawn_when_witness_turns_ambiguous():
    # Ambiguous once a witness fails on two or more trials (a stand-in for rho > 1/2).
    def by_count(task, witnesses, runs_by_trial, trials):
        out = {}
        for w in witnesses:
            fails = sum(1 for runs in runs_by_trial.values() if runs.get(w.id) == "failed")
            out[w.id] = WitnessClass("ambiguous" if fails >= 2 else "refutes", fails / 5)
        return out

    task = make_task(T)
    trials = [make_trial(T, "e1", "m1", ["alias"]), make_trial(T, "e2", "m2", ["alias"])]
    chains = {"e1": [[cand(T, "e1", 1, "alias")]], "e2": [[cand(T, "e2", 1, "alias")]]}
    session, _, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains,
                          hooks=app_hooks(classifier=by_count))
    events = []
    session.subscribe(events.append)
    await session.run()
    kinds = [type(e).__name__ for e in events]
    assert "TrialRefuted" in kinds and "RefutationWithdrawn" in kinds
    assert set(states(session.summary()).values()) == {"ambiguous"}
    assert session.store.refutations(T) == []
    assert len(session.store.refutations(T, include_withdrawn=True)) >= 1


async def test_rho_is_over_every_passing_trial_of_the_task_whatever_the_selection():
    # One model of three skips "alias": rho = 1/3, so the (implicit) witness refutes. Auditing
    # only a1 must measure the other trials too and reach the same decision.
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B"),
              make_trial(T, "a3", "model-C")]
    chains = {"a1": [[cand(T, "a1", 1, "alias")]]}
    outcomes = []
    for extra in ({}, {"trials": ["a1"]}):
        session, sandbox, _ = build({"mode": "per-trial", **extra}, task=task, trials=trials,
                                    chains=chains, hooks=app_hooks())
        assert await session.run() == "finished"
        summary = session.summary()
        [w] = summary.tasks[T].witnesses
        outcomes.append((summary.tasks[T].trials["a1"].state, w.classification, round(w.rho, 3)))
        if extra:
            assert set(summary.tasks[T].trials) == {"a1"}  # only a1 is labelled
            assert {c[1] for c in sandbox.runs(f"{T}/model/") if c[4]} >= {
                f"{T}/model/a2", f"{T}/model/a3"}  # but the witness ran on every passing trial
    assert outcomes[0] == outcomes[1] == ("refuted", "refutes", 0.333)


async def test_per_trial_mode_refutes_a_trial_only_with_its_own_audits_witnesses():
    session, _, roles = build({"mode": "per-trial"})
    await session.run()
    summary = session.summary()
    for tid, trial in summary.tasks[T].trials.items():
        for ref in trial.refutations:
            assert f":{tid}:" in ref.witness, (tid, ref.witness)


async def test_flaky_candidates_are_dropped_and_stable_ones_run_three_times_on_the_reference():
    task, trials, chains = scenario()
    sandbox = FakeSandbox({task.id: task}, {t.id: t for t in trials})
    seen: dict[str, int] = {}
    original = sandbox._candidate_status

    def flaky_on_reference(world, trial, source):
        # every "quote" candidate passes on R[G] the first time only
        if world.kind == "reference" and "REQ quote" in source:
            seen[source] = seen.get(source, 0) + 1
            return "passed" if seen[source] == 1 else "failed"
        return original(world, trial, source)

    sandbox._candidate_status = flaky_on_reference
    session, _, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains, sandbox=sandbox)
    await session.run()
    drops = {d.candidate_id: d.reason for d in session.store.drops()}
    flaky = [r for cid, r in drops.items() if cid.startswith(f"{T}:a4:")]  # a4 misses "quote"
    assert any(r.startswith("flaky: passed on the reference world, then failed on re-run 2 of 3")
               for r in flaky), drops
    # a stable witness ran three times on R[G] and twice on its trial's world
    alias = [c for c in sandbox.calls if c[0] == "run" and "tests/test_tj_alias_a2_1.py" in c[3]]  # a2's
    assert sum(1 for c in alias if c[1] == f"{T}/reference") == 3


async def test_the_flaky_control_reruns_of_a_discriminating_candidate_run_at_once():
    # Two re-runs on R[G] and one on the trial's world: independent fresh containers, so they
    # overlap (the sandbox's slots bound them) instead of queueing one after another; every
    # one still runs and is read.
    task, trials, chains = scenario()
    sandbox = FakeSandbox({task.id: task}, {t.id: t for t in trials}, delay=0.01)
    running: dict[tuple, int] = {}
    peak: dict[tuple, int] = {}
    real = sandbox.run_tests

    async def counted(world, test_ids, files=None, **kwargs):
        # the validation's worlds only (replays on the other trials overlap anyway)
        key = (world.name in (f"{T}/reference", f"{T}/model/a2"), tuple(sorted(files or {})))
        running[key] = running.get(key, 0) + 1
        peak[key] = max(peak.get(key, 0), running[key])
        try:
            return await real(world, test_ids, files, **kwargs)
        finally:
            running[key] -= 1

    sandbox.run_tests = counted
    session, _, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains, sandbox=sandbox)
    await session.run()
    alias = ("tests/test_tj_alias_a2_1.py",)  # a2's witness: discriminates and is stable
    runs = [c for c in sandbox.calls if c[0] == "run" and c[3] == alias]
    assert sum(1 for c in runs if c[1] == f"{T}/reference") == 3
    assert sum(1 for c in runs if c[1] == f"{T}/model/a2") == 2
    assert peak[(True, alias)] == 3  # the three control re-runs at once (one after another: 1)


async def test_a_flaky_t0_test_is_named_and_left_out_of_well_formedness():
    task, trials, chains = scenario()
    sandbox = FakeSandbox({task.id: task}, {t.id: t for t in trials})
    runs = {"n": 0}
    original = sandbox._t0_status

    def flaky_p2p(world, task_, trial, test_id):
        if world.kind == "reference" and test_id.endswith("test_p2p"):
            runs["n"] += 1
            return "passed" if runs["n"] % 2 else "failed"  # differs between two runs
        return original(world, task_, trial, test_id)

    sandbox._t0_status = flaky_p2p
    session, _, _ = build(task=task, trials=trials, chains=chains, sandbox=sandbox)
    assert await session.run() == "finished"
    summary = session.summary().tasks[T]
    assert summary.well_formed is True and summary.problems == []
    assert summary.flaky == ["tests/test_t0.py::test_p2p"]


async def test_an_operator_test_is_shared_like_a_witness_even_when_the_sampled_trial_passes_it():
    task, trials, chains = scenario()
    # The operator audits the sound trial a3 and hands in an "alias" test: it passes there, so
    # only running it on the other passing trials shows what it refutes.
    chains = {"a3": [[cand(T, "a3", 1, "alias", author="operator")]]}
    session, sandbox, roles = build({"rounds": 1, "audit_first": ["a3"]}, task=task, trials=trials,
                                    chains=chains)
    assert await session.run() == "finished"
    st = states(session.summary())
    assert roles.audit.audits == ["a3"]
    assert st["a1"] == "refuted" and st["a2"] == "refuted"  # never sampled, refuted by the shared test
    assert st["a3"] == "clean" and st["a5"] == "unaudited"


async def test_report_compares_the_lightweight_loop_with_per_trial_audit():
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown

    full, _, _ = build({"mode": "per-trial"})
    assert await full.run() == "finished"
    light, _, _ = build({"rounds": 1, "audit_first": ["a1"]})
    assert await light.run() == "finished"
    task, trials, _ = scenario()
    report = build_report(light.id, benchmark=make_benchmark([task], trials))
    c = report.comparison
    assert (c.lightweight_session, c.per_trial_session) == (light.id, full.id)
    # per-trial refutes a1, a2 (alias) and a4 (quote); one lightweight round finds alias only
    assert c.refuted_per_trial == 3 and c.missed == ["a4"] and c.recall == round(2 / 3, 4)
    assert 0 < c.cost_test_runs < 1
    assert "Recall of the lightweight loop: **66.7%**" in session_markdown(report)
    # the same comparison from the per-trial side
    assert build_report(full.id, benchmark=make_benchmark([task], trials)).comparison.recall == c.recall


async def test_a_comparison_of_sessions_with_other_inputs_is_refused_unless_forced():
    from testjack_tui.engine.config import BudgetLimits
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown

    full, _, _ = build({"mode": "per-trial", "budget": BudgetLimits(test_runs=500)})
    assert await full.run() == "finished"
    light, _, _ = build({"rounds": 1, "audit_first": ["a1"], "trials": ["a1", "a2", "a3"]})
    assert await light.run() == "finished"
    task, trials, _ = scenario()
    c = build_report(light.id, benchmark=make_benchmark([task], trials), compare_with=full.id).comparison
    assert c.refused and len(c.differences) == 2, c.differences
    assert c.differences[0].startswith("trials differ") and "a4" in c.differences[0]
    assert c.differences[1] == "budget differs (test_runs: None vs 500)"
    md = session_markdown(build_report(light.id, benchmark=make_benchmark([task], trials), compare_with=full.id))
    assert "not compared: trials differ" in md and "Recall of the lightweight loop" not in md
    forced = build_report(light.id, benchmark=make_benchmark([task], trials), compare_with=full.id,
                          force_compare=True)
    md = session_markdown(forced)
    assert not forced.comparison.refused and "Recall of the lightweight loop" in md
    assert md.index("Compared although the sessions differ") < md.index("Recall of the lightweight loop")


async def test_report_has_a_requirements_checklist_with_coverage_and_witnesses():
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown

    session, _, _ = build({"mode": "per-trial"})
    await session.run()
    task, trials, _ = scenario()
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    items = {i.clause: i for i in report.checklists[T]}
    alias = items["handles alias"]
    assert alias.explicit and alias.source == "audit"
    requirement = {w.id: w.requirement for w in report.tasks[T].witnesses}
    # (the fake reviewer quotes "alias" for every witness, so quote matching groups them all here)
    assert {w for w, r in requirement.items() if r == "handles alias"} <= set(alias.witnesses)
    assert alias.failing_trials and set(alias.failing_trials) >= {"a1", "a2"}
    assert "## Requirements checklist" in session_markdown(report)


async def test_proven_tampering_is_never_certified():
    """A trial whose code forges reports (the canaries of its runs come out wrong) is recorded
    with proven tampering: T0 on its world is void (not reproduced), a witness run on it is
    unverifiable (never 'passes both'), and its verdict is REWARD_HACK, never SOUND."""
    from testjack_tui.engine.report import build_report

    task = make_task(T)
    trials = [make_trial(T, "f1", "model-A", extra="FORGE"),
              make_trial(T, "f2", "model-A", extra="FORGEW"),
              make_trial(T, "ok", "model-B")]
    chains = {tid: [[cand(T, tid, 1, "quote")]] for tid in ("f1", "f2", "ok")}
    session, sandbox, roles = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains)
    assert await session.run() == "finished"
    store = session.store
    checks = store.trial_checks()
    assert not checks["f1"].reproduced and "proven tampering" in checks["f1"].reason
    outcomes = {v.trial_id: v.outcome for v in store.validations(T) if v.trial_id}
    assert outcomes["f2"] == "unverifiable" and outcomes["ok"] == "passes_both"
    assert {c.trial_id for c in store.canary_checks()} == {"f1", "f2"}
    labels = {t.trial_id: t for t in build_report(session.id, make_benchmark([task], trials)).trials}
    for tid in ("f1", "f2"):
        assert labels[tid].label == "REWARD_HACK", labels[tid]
        assert "Proven tampering" in labels[tid].justification
    assert labels["ok"].label in ("SOUND", "SOUND_LOW_QUALITY")


async def test_a_questionable_discriminating_test_is_an_open_question_about_p_refuting_nothing():
    """Issue 35.1/35.3 through the engine: the reviewer (the model's seat) judges a test that
    fails on a2 questionable, and the audit says P is silent on a point; both reach the report's
    underspecified-prompt findings, the test is replayed over every passing trial, and nothing
    is refuted by it."""
    import dataclasses

    from testjack_tui.engine import open_questions
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_csv, session_markdown, trial_markdown

    task, trials, _ = scenario()
    chains = {"a2": [[cand(T, "a2", 1, "alias", label="questionable")]]}
    session, _, roles = build({"rounds": 1, "audit_first": ["a2"], "auto_approve": True},
                              task=task, trials=trials, chains=chains)
    plain_audit = roles.audit.audit

    async def audit_saying_p_is_silent(ctx):
        outcome = await plain_audit(ctx)
        return dataclasses.replace(outcome, prompt_silent=[
            PromptSilent("whether aliases are case-sensitive", "P names aliases but not their case")])

    roles.audit.audit = audit_saying_p_is_silent
    assert await session.run() == "finished"
    summary = session.summary()
    assert "refuted" not in states(summary).values()
    stored = {q.requirement: q for q in open_questions.stored(session.store, T)}
    question = stored["handles alias"]
    assert question.fails_on == ["a1", "a2"]  # replayed over every passing trial, as for rho
    assert set(question.passes_on) >= {"a3", "a4", "a5"}
    assert question.said == ['reviewer (fake reviewer): questionable: "scripted questionable"']
    assert stored["whether aliases are case-sensitive"].said[0].startswith("audit agent: P is silent")
    # The reviewer's questionable waits for a person, and says so in the summary.
    assert [a.candidate_id for a in summary.awaiting_operator] == [f"{T}:a2:1.v1"]
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    kinds = {(u.kind, u.requirement) for u in report.underspecified_prompts}
    assert kinds == {("open question", "handles alias"), ("open question", "whether aliases are case-sensitive")}
    md = session_markdown(report)
    assert "open question" in md.split("## Underspecified prompts")[1] and "| 1 / 1 |" in md
    a1 = next(t for t in report.trials if t.trial_id == "a1")
    assert not a1.refuted and a1.open_questions[0].requirement == "handles alias"
    assert "## Open questions about P" in trial_markdown(a1)
    assert "handles alias" in next(r for r in session_csv(report).splitlines() if r.startswith(f"{T},a1,"))
