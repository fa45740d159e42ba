"""`audit --reuse-runs SESSION`: a session takes the test runs another session already made (same
world snapshot, test ids, files, isolation, re-run number: the run's key) instead of running them
again. A per-trial audit after a lightweight one of the same benchmark then runs only what the
lightweight loop did not, and ends exactly as a per-trial audit of its own (tests/conftest.py's
shared demo audits are such a pair)."""
from __future__ import annotations

from test_engine_loop import build
from testjack_tui.engine.config import BudgetLimits, SessionConfig
from testjack_tui.engine.summary import outcome_view


async def test_a_per_trial_audit_reusing_a_lightweight_sessions_runs_ends_as_its_own_and_runs_only_the_rest():
    fresh, fresh_sandbox, _ = build({"mode": "per-trial", "seed": 3})
    assert await fresh.run() == "finished"
    light, _, _ = build({"seed": 3, "rounds": 2})
    assert await light.run() == "finished"
    deep, deep_sandbox, _ = build({"mode": "per-trial", "seed": 3, "reuse_runs": light.id})
    assert await deep.run() == "finished"

    assert outcome_view(deep.summary()) == outcome_view(fresh.summary())
    fresh_keys = {r.key for r in fresh.store.runs()}
    light_keys = {r.key for r in light.store.runs()}
    deep_keys = {r.key for r in deep.store.runs()}
    # Every run the per-trial audit needs is this session's own, once; none of the lightweight
    # loop's other runs (its task analysis, its batches) comes with them.
    assert deep_keys == fresh_keys and fresh_keys & light_keys
    assert deep.summary().usage.test_runs == fresh.summary().usage.test_runs
    # What the lightweight session had already run was not run again (a run the per-trial audit
    # copies from the same test's earlier run is no container in either: oracle.taken_run).
    ran = {r.key for r in fresh.store.runs() if r.same_as is None}
    assert len(fresh_sandbox.runs()) == len(ran)
    assert len(deep_sandbox.runs()) == len(ran - light_keys)


async def test_a_reused_run_counts_against_the_budget_as_a_run_made_here():
    fresh, _, _ = build({"mode": "per-trial", "seed": 3, "budget": BudgetLimits(test_runs=30)})
    assert await fresh.run() == "paused"
    light, _, _ = build({"seed": 3, "rounds": 2})
    assert await light.run() == "finished"
    deep, _, _ = build({"mode": "per-trial", "seed": 3, "budget": BudgetLimits(test_runs=30), "reuse_runs": light.id})
    assert await deep.run() == "paused"
    assert deep.summary().usage.test_runs == fresh.summary().usage.test_runs <= 30


async def test_reusing_runs_of_no_session_fails_the_session_naming_the_field():
    session, sandbox, _ = build({"reuse_runs": "20990101-000000-abcdef"})
    assert await session.run() == "failed"
    assert "config.reuse_runs" in session.store.get_meta("state_reason") and not sandbox.runs()


def test_a_session_that_reuses_nothing_stores_the_config_it_always_did():
    assert "reuse_runs" not in SessionConfig(benchmark="b").to_dict()
    assert SessionConfig.from_dict(SessionConfig(benchmark="b", reuse_runs="x").to_dict()).reuse_runs == "x"


async def test_runs_of_another_benchmarks_session_are_refused_naming_both():
    light, _, _ = build({"seed": 3, "rounds": 2, "benchmark": "elsewhere"})
    assert await light.run() == "finished"
    deep, sandbox, _ = build({"mode": "per-trial", "seed": 3, "reuse_runs": light.id})
    assert await deep.run() == "failed"
    reason = deep.store.get_meta("state_reason")
    assert "config.reuse_runs" in reason and "'elsewhere'" in reason and "'fake'" in reason
    assert not sandbox.runs()
