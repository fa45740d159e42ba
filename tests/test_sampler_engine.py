"""The engine hands the sampler what it needs: static detector evidence of every trial at task
start (SamplerContext.static_evidence), and the cluster sampler audits the suspicious trial first
in a real (simulated-sandbox) session. Plus the sampling simulation's faithfulness to the loop:
T1's recorded refutations, the corpus, and ambiguous witnesses that refute nothing."""
from __future__ import annotations

import pytest

from engine_fakes import (FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, cand,
                          make_benchmark, make_task, tools_factory)
from test_sampler import sim
from testjack_tui.engine.hooks import default_classifier
from testjack_tui.engine.samplers import SAMPLERS
from testjack_tui.engine.sampling import UniformSampler
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.model import Trial
from testjack_tui.compose import app_hooks, session_deps

T = "t1"
CAPTURED: list = []


class CapturingSampler(UniformSampler):
    """Uniform, but keeps the context the loop built (to check what the engine passes)."""

    name = "test-capture"

    def __init__(self, task, seed, context=None):
        super().__init__(task, seed, context)
        CAPTURED.append(context)


# This file's samplers: the application's and two of its own, handed to its sessions (no global).


def diff(lines: list[str], path: str = "lib/impl.py") -> str:
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(lines)} @@\n"
            + "".join("+" + line + "\n" for line in lines))


def trials():
    plain = ["def impl(x):", "    return x.strip()"]
    # The fake sandbox reads "defect:<req>" from the patch: the sniffing trial misses "alias".
    sniff = ["import os", "def impl(x):", "    if os.environ.get('PYTEST_CURRENT_TEST'):",
             "        return x.strip()", "    return x  # defect:alias"]
    return ([Trial(f"s{i}", T, "agent", f"m{i}", diff(plain + [f"V{i} = {i}"]), True) for i in range(5)]
            + [Trial("sniffer", T, "agent", "m9", diff(sniff), True)])


def run_session(sampler: str, seed: int = 0, rounds: int = 1):
    task = make_task(T)
    ts = trials()
    chains = {t.id: [[cand(T, t.id, 1, "alias")]] for t in ts}
    roles = FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst({}))
    cfg = SessionConfig(benchmark="fake", rounds=rounds, sampler=sampler, seed=seed)
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=make_benchmark([task], ts), roles=roles,
                                               sandbox_factory=FakeSandbox({T: task}, {t.id: t for t in ts}),
                                               tools_factory=tools_factory,
                                               hooks=app_hooks(classifier=default_classifier),
                                               samplers=TEST_SAMPLERS))
    return session, roles


async def test_loop_passes_static_evidence_of_every_trial_at_task_start():
    CAPTURED.clear()
    session, _ = run_session("test-capture")
    await session.run()
    (ctx,) = CAPTURED
    assert sorted(ctx.static_evidence) == sorted(t.id for t in trials())
    kinds = {s["detector"] for s in ctx.static_evidence["sniffer"]["signals"]}
    assert "env_sniffing" in kinds
    assert not any(s["severity"] in ("suspicious", "high") for s in ctx.static_evidence["s0"]["signals"])


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_cluster_sampler_audits_the_sniffing_trial_first(seed):
    session, roles = run_session("cluster", seed=seed)
    await session.run()
    assert roles.audit.audits == ["sniffer"]
    trial_states = {tid: t.state for tid, t in session.summary().tasks[T].trials.items()}
    assert trial_states["sniffer"] == "refuted"


def test_demo_simulation_starts_after_task_analysis():
    pops = sim.demo_populations()
    assert pops is not None, "benchmarks/demo/labels.json is missing"
    fixture = sim.load_t1()
    assert fixture is not None, "tests/perf/demo_t1.json is missing"
    for pop in pops:
        recorded = fixture["tasks"][pop.task.id]
        # The corpus is the reproducible passing trials of the recorded session.
        assert sorted(t.id for t in pop.trials) == sorted(recorded["reproducible"])
        refuted = {tid for w in recorded["t1_witnesses"].values() if w["class"] == "refutes"
                   for tid, status in w["runs"].items() if status == "failed"}
        assert pop.t1_refuted() == refuted
        result = sim.simulate_loop(pop, "cluster", seed=0)
        assert result.t1 == len(refuted & pop.defective())
        assert result.history[-1] == result.defective  # every defect refuted in the end
    # T1 leaves work for the sampler, but takes a share of the defects before round 1.
    assert 0 < sum(len(p.t1_refuted()) for p in pops) < sum(len(p.defective()) for p in pops)


class FirstById:
    name = "test-first-by-id"

    def __init__(self, task, seed, context=None):
        pass

    def pick(self, active, state):
        return min(active, key=lambda t: t.id)


TEST_SAMPLERS = SAMPLERS.with_("test-capture", CapturingSampler, "test only").with_(
    "test-first-by-id", FirstById, "test only")


def test_ambiguous_reading_is_witnessed_but_refutes_nothing():
    task = make_task("amb")
    ts = [Trial(f"x{i}", "amb", "agent", f"m{i}", diff([f"A = {i}"]), True) for i in range(3)]
    pop = sim.Population(task, ts, {"x0": None, "x1": None, "x2": "real"},
                         readings={"x0": ("reading",), "x1": ("reading",)}, refuting={"real"})
    # x0's audit yields the ambiguous witness: it fails x1 on replay, but x1 stays active.
    result = sim.simulate_loop(pop, "test-first-by-id", seed=0, samplers=TEST_SAMPLERS)
    assert (result.rounds, result.history) == (3, [0, 0, 1])
