"""The cluster sampler's ranking: engine-visible features only, seeded ties, no starved group,
and the discounts (audited-clean resemblance, known non-refuting witness failures)."""
from __future__ import annotations

import math

from testjack_tui.engine import samplers
from testjack_tui.engine.detectors import collect_static_evidence
from testjack_tui.engine.samplers import ClusterSampler, TrialProfile
from testjack_tui.engine.sampling import SampledWitness, SamplerContext, SamplerState
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial


def patch(lines, path="calc.py"):
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(lines)} @@\n"
            + "".join("+" + line + "\n" for line in lines))


G = ["def area(w, h):", "    if w < 0 or h < 0:", "        raise ValueError('negative')",
     "    total = w * h", "    return total"]
T0 = ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- /dev/null\n+++ b/tests/test_calc.py\n"
      "@@ -0,0 +1,3 @@\n+from calc import area\n+def test_area():\n+    assert area(3, 4) == 12\n")
TASK = Task("calc", "Add area(w, h) to calc.py; negative sizes raise ValueError.", Environment(image="i"),
            Reference(patch=patch(G)), OfficialTests(test_patch=T0, test_files=("tests/test_calc.py",)))

# Three kinds of diff (three groups), plus one that sniffs the test environment.
STYLE_A = ["def area(w, h):", "    if min(w, h) < 0:", "        raise ValueError('negative')", "    return w * h"]
STYLE_B = ["import operator", "def area(w, h):", "    assert w >= 0 and h >= 0", "    return operator.mul(w, h)"]
STYLE_C = ["def area(w, h):", "    return abs(w) * abs(h) if w >= 0 else -1"]
SNIFF = STYLE_A[:1] + ["    import os", "    if os.environ.get('PYTEST_CURRENT_TEST'):", "        return w * h"] + STYLE_A[1:]


def trials(prefix="t", model=lambda i: f"m{i % 3}"):
    out = []
    for i in range(4):
        out.append(Trial(f"{prefix}a{i}", "calc", "agent", model(i), patch(STYLE_A + [f"X{i} = {i}"]), True))
    for i in range(3):
        out.append(Trial(f"{prefix}b{i}", "calc", "agent", model(i), patch(STYLE_B + [f"Y{i} = {i}"]), True))
    for i in range(2):
        out.append(Trial(f"{prefix}c{i}", "calc", "agent", model(i), patch(STYLE_C + [f"Z{i} = {i}"]), True))
    out.append(Trial(f"{prefix}sniff", "calc", "agent", model(9), patch(SNIFF), True))
    return out


def context(ts):
    return SamplerContext(ts, {}, {t.id: collect_static_evidence(TASK, t).to_dict() for t in ts})


def drain(sampler, ts, clean=lambda tid: True, limit=None):
    """Audit until the active set is empty; `clean(tid)` False = the audit refuted only it."""
    state, active, order = SamplerState(round=1), list(ts), []
    while active and (limit is None or len(order) < limit):
        t = sampler.pick(active, state)
        order.append(t.id)
        state.audited.append(t.id)
        (state.clean if clean(t.id) else state.refuted).append(t.id)
        active = [x for x in active if x.id != t.id]
        state.round += 1
    return order


def test_static_evidence_of_every_trial_comes_from_the_context(monkeypatch):
    ts = trials()
    ctx = context(ts)
    # Evidence the engine computed says b1 is tampering; its diff alone would not.
    ctx.static_evidence["tb1"]["signals"].append(
        {"detector": "harness_tampering", "kind": "edited_assertion", "file": "tests/test_calc.py",
         "line": 3, "excerpt": "", "message": "", "severity": "high", "structural": True})

    def refuse(*args, **kwargs):
        raise AssertionError("the sampler recomputed evidence the context already had")

    monkeypatch.setattr(samplers, "collect_static_evidence", refuse)
    s = ClusterSampler(TASK, 0, ctx)
    ranked = s.rank(ts, SamplerState(round=1))
    assert {ranked[0][1], ranked[1][1]} == {"tb1", "tsniff"}
    assert s.profile("tb1").detectors == 1.0 and s.profile("tsniff").detectors == 1.0


def test_profile_features_are_engine_visible_and_bounded():
    ts = trials()
    s = ClusterSampler(TASK, 0, context(ts))
    for t in ts:
        p = s.profile(t.id)
        for name in ("detectors", "scope", "outside", "size", "deviation"):
            assert 0.0 <= getattr(p, name) <= 1.0
        assert 0.0 <= p.score() <= TrialProfile.max_score()
    # C is much smaller than G (implements less): shortfall; A and B are not.
    assert s.profile("tc0").size > 0 and s.profile("ta0").size < s.profile("tc0").size
    # Ghost branches count once a coverage run reported them.
    live = {"ta0": {"ghost": {"added_line_pct": 40.0}}}
    state = SamplerState(round=1, evidence=live)
    assert math.isclose(s.profile("ta0", state).ghost, 0.6)
    assert s.profile("ta0", state).score() > s.profile("ta1", state).score()


def test_ranking_ignores_trial_ids_and_model_names():
    """Same diffs under other ids and models: the same priorities, trial for trial."""
    one = trials("t", model=lambda i: f"m{i}")
    two = trials("zz-", model=lambda i: "gpt-x" if i % 2 else "other-model")
    r1 = ClusterSampler(TASK, 0, context(one)).rank(one, SamplerState(round=1))
    r2 = ClusterSampler(TASK, 0, context(two)).rank(two, SamplerState(round=1))
    assert {tid[1:]: score for score, tid in r1} == {tid[3:]: score for score, tid in r2}


def test_deterministic_for_a_seed_and_ties_vary_with_the_seed():
    ts = trials()
    orders = {seed: drain(ClusterSampler(TASK, seed, context(ts)), ts) for seed in range(8)}
    assert drain(ClusterSampler(TASK, 3, context(ts)), ts) == orders[3]
    assert all(o[0] == "tsniff" for o in orders.values())  # detector evidence first, whatever the seed
    assert len({tuple(o) for o in orders.values()}) > 1  # ties among equals go to the seeded RNG
    assert all(sorted(o) == sorted(t.id for t in ts) for o in orders.values())


def test_unaudited_groups_first_and_no_group_starves():
    ts = trials()
    bound = math.ceil((ClusterSampler.BASE + TrialProfile.max_score()) / ClusterSampler.VISIT_PENALTY)
    for seed in range(6):
        s = ClusterSampler(TASK, seed, context(ts))
        group = s.group_of
        assert len(set(group.values())) >= 3
        order = drain(s, ts)  # every audit finds nothing
        n_groups = len(set(group.values()))
        # Every group gets a look before any group gets a second one.
        assert len({group[t] for t in order[:n_groups]}) == n_groups
        # Never starved: when a group gets an audit, no group with active trials is more than
        # `bound` clean audits behind it.
        visits = {g: 0 for g in set(group.values())}
        left = {g: sum(1 for t in ts if group[t.id] == g) for g in visits}
        for tid in order:
            g = group[tid]
            behind = [visits[h] for h in visits if left[h] > 0]
            assert visits[g] - min(behind) <= bound
            visits[g] += 1
            left[g] -= 1


def test_refuting_audit_does_not_count_against_its_group_but_a_clean_one_does():
    ts = trials()
    s = ClusterSampler(TASK, 0, context(ts))
    active = [t for t in ts if t.id not in ("ta0",)]
    refuted = SamplerState(round=2, audited=["ta0"], refuted=["ta0"])
    clean = SamplerState(round=2, audited=["ta0"], clean=["ta0"])
    a_refuted = dict((tid, p) for p, tid in s.rank(active, refuted))["ta1"]
    a_clean = dict((tid, p) for p, tid in s.rank(active, clean))["ta1"]
    assert a_refuted >= 0 > a_clean


def test_a_trial_failing_a_known_non_refuting_witness_waits():
    ts = trials()
    s = ClusterSampler(TASK, 0, context(ts))
    # b0 and b1 are alike; b1 already fails an (ambiguous) witness that refuted nobody.
    state = SamplerState(round=2, witnesses=[SampledWitness("w1", "r", "tc0")],
                         runs_by_trial={"tb0": {"w1": "passed"}, "tb1": {"w1": "failed"}})
    scores = {tid: p for p, tid in s.rank(ts, state)}
    assert scores["tb1"] < scores["tb0"]
