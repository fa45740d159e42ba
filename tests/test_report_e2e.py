"""End to end on the bundled demo with the scripted agents and real containers: a per-trial
session, its report (against the demo's labels) and the exported suite checked in worlds.

The session is the shared per-trial demo audit (conftest `demo_per_trial_audit`, run through the
CLI once per test session, taking the runs the shared lightweight audit already made); this
module builds its report and exports once (module fixture).
"""
from __future__ import annotations

import asyncio
import os

import pytest

from conftest import DEMO

pytestmark = [pytest.mark.podman, pytest.mark.timeout(3600)]  # may set up the shared demo audits; slow under load


@pytest.fixture(scope="module")
def outcome(demo_per_trial_audit, tmp_path_factory):
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.export import check_export, plan_export, write_harbor
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_labels import load_labels
    from testjack_tui.engine.report_render import write_report

    session_id = demo_per_trial_audit["session_id"]
    old = os.environ.get("TESTJACK_HOME")
    os.environ["TESTJACK_HOME"] = str(demo_per_trial_audit["home"])
    try:
        report = build_report(session_id)
        out = tmp_path_factory.mktemp("tj-e2e-report")
        write_report(report, out, "md")
        bench = load_benchmark(DEMO)
        exports = plan_export(session_id, bench.tasks)
        trials = {t.id: t for t in bench.trials}

        async def check_all():
            async with Sandbox(session="tj-e2e-export") as sb:
                for exp in exports:
                    await check_export(sb, bench.tasks[exp.task_id], exp, trials)

        asyncio.run(check_all())
        harbor = tmp_path_factory.mktemp("tj-e2e-export")
        for exp in exports:
            write_harbor(exp, bench.tasks[exp.task_id], harbor)
        from testjack_tui.engine.store import SessionStore, db_path

        store = SessionStore(db_path(session_id))
        run_keys = {r.key for r in store.runs() if r.same_as is None}  # a copy is no run
        store.close()
        lender = SessionStore(db_path(demo_per_trial_audit["lender"]))
        lent_keys = {r.key for r in lender.runs()}
        lender.close()
        return {"state": demo_per_trial_audit["summary"]["state"], "report": report.to_json(),
                "labels": load_labels(DEMO / "labels.json"), "exports": exports, "out": out,
                "harbor": harbor, "bench": bench, "run_keys": run_keys,
                "lent_keys": lent_keys, "test_runs": demo_per_trial_audit["summary"]["usage"]["test_runs"]}
    finally:
        if old is None:
            os.environ.pop("TESTJACK_HOME", None)
        else:
            os.environ["TESTJACK_HOME"] = old


def _by_label(outcome, *labels):
    return [tid for tid, info in outcome["labels"].items() if info.label in labels]


def _verdicts(outcome):
    return {t["trial_id"]: t for t in outcome["report"]["trials"]}


def test_session_finishes(outcome):
    assert outcome["state"] == "finished"


def test_the_per_trial_audit_took_the_lightweight_audits_runs_as_its_own(outcome):
    # `--reuse-runs` (conftest): what the lightweight loop had run was not run again, and each
    # such run is this session's own, counted in its runs as if it had run here.
    taken = outcome["run_keys"] & outcome["lent_keys"]
    assert taken and outcome["test_runs"] >= len(outcome["run_keys"])
    print(f"per-trial demo audit: {len(outcome['run_keys'])} runs, {len(taken)} taken from the lightweight one")


def test_ambiguous_trials_are_an_underspecified_prompt_not_refutations(outcome):
    verdicts = _verdicts(outcome)
    ambiguous = _by_label(outcome, "ambiguous")
    assert ambiguous
    tasks = {outcome["labels"][t].task for t in ambiguous}
    under = outcome["report"]["underspecified_prompts"]
    assert tasks <= {u["task"] for u in under}
    assert all(u["rho"] > 0.5 and u["clarification"] for u in under)
    for tid in ambiguous:
        assert not verdicts[tid]["refuted"], tid


def test_sound_trials_are_not_refuted(outcome):
    verdicts = _verdicts(outcome)
    for tid in _by_label(outcome, "sound", "sound_incidental"):
        if tid in verdicts:
            assert not verdicts[tid]["refuted"], (tid, verdicts[tid]["label"])


def test_tampering_and_sniffing_trials_carry_detector_findings(outcome):
    verdicts = _verdicts(outcome)
    for tid in _by_label(outcome, "harness_tampering"):
        if tid in verdicts:
            assert verdicts[tid]["detectors"]["harness_tampering"] == "suspicious", tid
    for tid in _by_label(outcome, "env_sniffing"):
        assert verdicts[tid]["detectors"]["env_sniffing"] == "suspicious", tid
        assert verdicts[tid]["label"] == "REWARD_HACK", verdicts[tid]["justification"]


def test_corrected_resolution_rate_matches_the_labels(outcome):
    s = outcome["report"]["scoring"]
    assert s["rate_after_ours"] == s["rate_after_labels"], s
    assert s["recall"] == 1.0 and s["precision"] == 1.0, s
    assert (outcome["out"] / "report.md").exists()


def test_exported_suite_applies_passes_on_g_and_fails_on_every_refuted_trial(outcome):
    assert outcome["exports"]
    refuted = {t["trial_id"] for t in outcome["report"]["trials"] if t["refuted"]}
    covered = set()
    for exp in outcome["exports"]:
        assert exp.check is not None and exp.check.ok, exp.check
        assert exp.check.applies and exp.check.passes_on_reference
        covered |= {t for t, failing in exp.check.fails_on_refuted.items() if failing}
        assert (outcome["harbor"] / exp.task_id / "tests" / "config.json").exists()
    assert refuted <= covered


def test_explanations_are_the_agents_findings_and_every_claim_points_at_evidence(outcome):
    from claims_check import unbacked

    bench, verdicts = outcome["bench"], _verdicts(outcome)
    trials = {t.id: t for t in bench.trials}
    problems, by_agent = [], set()
    for tid, v in verdicts.items():
        task = bench.tasks[v["task_id"]]
        t0 = set(task.tests.ids)
        for f in v["findings"]:
            problems += [f"{tid}: {p}" for p in unbacked(
                f["claims"], prompt=task.instruction, patch=trials[tid].patch, run_keys=outcome["run_keys"],
                test_ids=set(f["test_ids"]) | {f["path"]} | t0)]
            if any(c["by"] == "audit agent" and c["part"] == "what_is_wrong" for c in f["claims"]):
                by_agent.add(tid)
    assert not problems, problems[:10]
    # The recorded audits that carry structured findings (agent-scripts): their words explain.
    assert {"parse-duration-compound__orca__3", "recordset-metadata__kestrel__1",
            "cache-async-memoize__orca__2"} <= by_agent
