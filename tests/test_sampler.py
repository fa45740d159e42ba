"""The `cluster` sampler: registered, deterministic, prefers unvisited groups and suspicious
trials, never starves a group; and the simulation harness behind tests/perf/sampling_sim.py.
The ranking's finer rules are in test_sampler_ranking.py, the engine wiring in test_sampler_engine.py."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import ROOT
from testjack_tui.engine.samplers import ClusterSampler, cluster, diff_features, jaccard
from testjack_tui.engine.samplers import SAMPLERS
from testjack_tui.engine.sampling import SamplerContext, SamplerState
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial


def _load_sim():
    spec = importlib.util.spec_from_file_location("sampling_sim", ROOT / "tests" / "perf" / "sampling_sim.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sampling_sim"] = module
    spec.loader.exec_module(module)
    return module


sim = _load_sim()


def patch(lines, path="m.py"):
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(lines)} @@\n"
            + "".join("+" + line + "\n" for line in lines))


GOOD = ["def area(w, h):", "    if w < 0 or h < 0:", "        raise ValueError('negative')", "    return w * h"]
BAD = ["def area(w, h):", "    return w * h"]
TASK = Task("t", "Add area(w, h); negative sizes raise ValueError.", Environment(image="i"),
            Reference(patch=patch(GOOD)), OfficialTests())


def trials():
    out = []
    for i in range(6):  # sound trials, renamed variables: the same code
        lines = [line.replace("w", "width") if i % 2 else line for line in GOOD]
        out.append(Trial(f"good{i}", "t", "a", f"m{i}", patch(lines), True))
    for i in range(3):
        out.append(Trial(f"bad{i}", "t", "a", f"m{i}", patch(BAD + [f"# note {i}"]), True))
    sniff = GOOD[:1] + ["    import os", "    if os.environ.get('PYTEST_CURRENT_TEST'): return w * h"] + GOOD[1:]
    out.append(Trial("sniff", "t", "a", "m9", patch(sniff), True))
    return out


def test_registered_and_selectable():
    assert "cluster" in SAMPLERS.names()
    s = SAMPLERS.make("cluster", TASK, 0, SamplerContext(trials()))
    assert isinstance(s, ClusterSampler) and s.name == "cluster"


def test_renames_do_not_change_features_but_behaviour_does():
    a = diff_features(patch(GOOD))
    b = diff_features(patch([line.replace("w", "width") for line in GOOD]))
    assert a == b
    assert jaccard(a, diff_features(patch(BAD))) < 0.6


def test_clusters_group_same_code():
    feats = {t.id: diff_features(t.patch) for t in trials()}
    groups = cluster(feats, 0.5)
    as_sets = [set(g) for g in groups]
    assert {"bad0", "bad1", "bad2"} in as_sets
    assert any({f"good{i}" for i in range(6)} <= g for g in as_sets)


def _linkage_by_hand(features, threshold):
    """Average linkage the plain way: every pair of groups, every round; first pair wins ties."""
    groups = [[i] for i in sorted(features)]
    while len(groups) > 1:
        best, pair = -1.0, None
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                m = sum(jaccard(features[a], features[b]) for a in groups[i] for b in groups[j]) \
                    / (len(groups[i]) * len(groups[j]))
                if m > best:
                    best, pair = m, (i, j)
        if best < threshold or pair is None:
            break
        i, j = pair
        groups[i] = sorted(groups[i] + groups[j])
        del groups[j]
    return groups


def test_clusters_match_plain_average_linkage_ties_included_and_scale_to_hundreds_of_trials():
    import random

    rng = random.Random(7)
    for _ in range(400):
        feats = {}
        for i in range(rng.randrange(1, 16)):
            feats[f"t{i:02d}"] = (rng.choice(list(feats.values())) if feats and rng.random() < 0.3  # ties
                                  else frozenset(f"f{rng.randrange(6)}" for _ in range(rng.randrange(4))))
        threshold = rng.choice([0.0, 0.3, 0.5, 1.0])
        assert cluster(feats, threshold) == _linkage_by_hand(feats, threshold), (feats, threshold)
    # A task with 300 passing trials in 5 styles: the plain way (cubic in the trials) took 6-8 s
    # here, a UI freeze. Every pair similarity the clustering looks up costs one comparison of
    # trial ids: counted, they bound its work at about quadratic (about 10 n² today).
    compared = [0]

    class TrialId(str):
        def __lt__(self, other):
            compared[0] += 1
            return str.__lt__(self, other)

    n = 300
    feats = {TrialId(f"t{i:03d}"): frozenset({f"m{i % 5}-{k}" for k in range(40)}
                                             | {f"n{rng.randrange(400)}" for _ in range(10)})
             for i in range(n)}
    groups = cluster(feats, 0.5)
    assert compared[0] <= 15 * n * n, compared[0]
    assert sorted(len(g) for g in groups) == [60] * 5


ALT = ["import math", "def area(w, h):", "    math.prod([w, h])", "    assert min(w, h) >= 0, 'no'",
       "    return math.prod((w, h))"]


def test_suspicious_first_then_one_trial_per_group_before_any_second_look():
    ts = trials() + [Trial("alt", "t", "a", "m7", patch(ALT), True)]
    s = ClusterSampler(TASK, 0, SamplerContext(ts))
    groups = {tid: gi for gi, g in enumerate(s.groups) for tid in g}
    assert len(set(groups.values())) == 3  # goods (+ sniff), bads, alt
    state, active, picked = SamplerState(round=1), list(ts), []
    for _ in range(3):
        t = s.pick(active, state)
        picked.append(t.id)
        state.audited.append(t.id)
        state.clean.append(t.id)
        active = [x for x in active if x.id != t.id]
    assert picked[0] == "sniff"  # detector evidence first
    assert len({groups[t] for t in picked}) == 3  # then the groups nobody looked at yet
    assert any(t.startswith("bad") for t in picked)


def test_deterministic_per_seed_and_picks_everything_eventually():
    def order(seed):
        ts = trials()
        s = SAMPLERS.make("cluster", TASK, seed, SamplerContext(ts))
        state, active, seen = SamplerState(round=1), list(ts), []
        while active:
            t = s.pick(active, state)
            seen.append(t.id)
            state.audited.append(t.id)
            state.clean.append(t.id)
            active = [x for x in active if x.id != t.id]
        return seen

    assert order(3) == order(3)
    assert sorted(order(5)) == sorted(t.id for t in trials())
    with pytest.raises(ValueError):
        SAMPLERS.make("cluster", TASK, 0, SamplerContext([])).pick([], SamplerState(round=1))


def test_unknown_trial_in_active_set_is_handled():
    s = ClusterSampler(TASK, 0, SamplerContext([]))
    t = Trial("new", "t", "a", "m", patch(BAD), True)
    assert s.pick([t], SamplerState(round=1)).id == "new"


def test_simulation_refutes_every_planted_defect_with_both_samplers():
    pop = sim.synthetic_population(7)
    assert len(pop.trials) == 100 and sum(1 for m in pop.mode.values() if m) == 30
    assert sorted(pop.mode.values(), key=str).count(None) == 70
    for name in ("uniform", "cluster"):
        rounds, history = sim.simulate(pop, name, seed=1)
        assert history[-1] == 30 and rounds == len(history)


def test_simulation_quick_measure_shows_cluster_ahead():
    m = sim.measure(lambda seed: [sim.synthetic_population(seed)], seeds=6)
    assert m["cluster"]["median_rounds"] < m["uniform"]["median_rounds"]
    rows = sim.rows_for("synthetic", m)
    keys = {"name", "ours", "baseline", "ratio", "target", "status"}
    assert [set(r) for r in rows] == [keys, keys, keys | {"note"}, keys | {"note"}]
    assert [r["status"] for r in rows[:2]] == ["INFO", "INFO"]  # the label-knowing bounds
    assert m["oracle-bound"]["median_rounds"] <= m["cluster"]["median_rounds"]
