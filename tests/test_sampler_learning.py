"""The cluster sampler re-ranks every round on what the loop learned (pure logic, no podman):
a trial like one refuted so far moves up, so does a trial whose model's diffs are flagged
elsewhere in the session; the session hands that model record to the sampler; and the perf
simulation's label-knowing bound is searched, not assumed."""
from __future__ import annotations

from test_sampler import sim
from test_sampler_engine import CAPTURED, run_session
from testjack_tui.engine.samplers import ClusterSampler, learned_bonus, model_record
from testjack_tui.engine.sampling import SamplerContext, SamplerState
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

TASK = Task(id="t", instruction="implement area(shape)", environment=Environment(image="x"),
            reference=Reference(patch=""), tests=OfficialTests(test_patch=""))


def patch(lines: list[str], path: str = "geo.py") -> str:
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(lines)} @@\n"
            + "".join("+" + line + "\n" for line in lines))


CIRCLE = ["import math", "def area(shape):", "    if shape.kind == 'circle':",
          "        return math.pi * shape.r ** 2", "    return shape.w * shape.h"]
LOOKUP = ["AREAS = {'square': lambda s: s.w * s.w, 'rect': lambda s: s.w * s.h}",
          "def area(shape):", "    fn = AREAS.get(shape.kind)", "    if fn is None:",
          "        raise ValueError(shape.kind)", "    return fn(shape)"]
WHERE = {"file": "geo.py", "line": 3, "excerpt": "", "message": ""}
FLAGGED = {"signals": [{"detector": "env_sniffing", "kind": "pytest_env_var", "severity": "high",
                        "structural": True, **WHERE}]}
QUIET = {"signals": [{"detector": "diff_scope", "kind": "new_test", "severity": "info", "structural": False,
                      **WHERE}]}


def trial(tid: str, lines: list[str], model: str = "m") -> Trial:
    return Trial(tid, "t", "agent", model, patch(lines), True)


def sampler(trials: list[Trial], models: dict[str, float] | None = None) -> ClusterSampler:
    return ClusterSampler(TASK, 0, SamplerContext(trials, model_record=models or {}))


def order(s: ClusterSampler, active: list[Trial], state: SamplerState) -> list[str]:
    return [tid for _, tid in s.rank(active, state)]


def test_model_record_is_the_smoothed_share_of_flagged_trials_per_model():
    evidence = {"a1": FLAGGED, "a2": QUIET, "b1": QUIET, "b2": QUIET, "c1": {"signals": "garbage"}}
    models = {"a1": "alpha", "a2": "alpha", "b1": "beta", "b2": "beta", "c1": "gamma", "x": "alpha"}
    record = model_record(evidence, models)
    assert record["alpha"] == (1 + 0.5) / (2 + 1)  # "x" has no evidence: not counted
    assert record["beta"] == 0.5 / 3
    assert record["gamma"] == 0.5 / 2  # unreadable evidence counts as not flagged
    assert record["alpha"] > record["gamma"] > record["beta"]


def test_learned_bonus_adds_resemblance_to_refuted_and_the_model_record():
    a, b = frozenset({"x", "y", "z", "w"}), frozenset({"x", "y", "z", "v"})
    assert learned_bonus(a, [], 0.0, 0.5, 2.0) == 0.0
    assert learned_bonus(a, [b, frozenset({"q"})], 0.0, 0.5, 2.0) == 0.5 * (3 / 5)  # the closest refuted
    assert learned_bonus(a, [], 0.25, 0.5, 2.0) == 0.5


def test_a_trial_like_one_just_refuted_moves_up_the_next_round():
    # Two unflagged look-alike families; the refuted trial is a near copy of the "lookup" one.
    circle = trial("circle", CIRCLE)
    lookup = trial("lookup", LOOKUP)
    refuted = trial("refuted", LOOKUP + ["    # cached"])
    s = sampler([circle, lookup, refuted])
    before = {tid: score for score, tid in s.rank([circle, lookup], SamplerState(round=1))}
    after = {tid: score for score, tid in s.rank([circle, lookup], SamplerState(round=2, refuted=["refuted"]))}
    assert after["circle"] - before["circle"] < after["lookup"] - before["lookup"]
    assert order(s, [circle, lookup], SamplerState(round=2, refuted=["refuted"]))[0] == "lookup"


def test_the_trial_of_a_model_flagged_elsewhere_is_audited_first():
    mine, theirs = trial("mine", CIRCLE, model="careful"), trial("theirs", CIRCLE + ["X = 1"], model="sloppy")
    plain = sampler([mine, theirs])
    informed = sampler([mine, theirs], {"careful": 0.05, "sloppy": 0.4})
    state = SamplerState(round=1)
    assert order(informed, [mine, theirs], state)[0] == "theirs"
    # Without the record the two are a tie broken by the seeded RNG, not a fixed order.
    scores = [score for score, _ in plain.rank([mine, theirs], state)]
    assert abs(scores[0] - scores[1]) <= ClusterSampler.TIE


async def test_the_session_hands_every_models_record_to_the_sampler():
    CAPTURED.clear()
    session, _ = run_session("test-capture")
    await session.run()
    (ctx,) = CAPTURED
    # The fake corpus: five clean trials by m0..m4 and one sniffing trial by m9.
    assert set(ctx.model_record) == {"m0", "m1", "m2", "m3", "m4", "m9"}
    assert ctx.model_record["m9"] == 1.5 / 2 and ctx.model_record["m0"] == 0.5 / 2


def small_population(modes: dict[str, str | None], also: dict[str, tuple[str, ...]] | None = None):
    trials = [trial(tid, CIRCLE + [f"V = {i}"]) for i, tid in enumerate(modes)]
    return sim.Population(TASK, trials, dict(modes), dict(also or {}))


def test_label_knowing_bound_is_an_exhaustive_search():
    # Modes a (3 trials), b, c: 3 audits are needed; after 3 every defect can be refuted.
    pop = small_population({"a1": "a", "a2": "a", "a3": "a", "b1": "b", "c1": "c", "ok1": None, "ok2": None})
    assert sim.exact_bounds(pop) == (3, 5)
    # One trial has both b and c: it and one of a refute everything in 2 rounds.
    pop = small_population({"a1": "a", "a2": "a", "b1": "b", "c1": "c", "bc": "b"}, {"bc": ("c",)})
    assert sim.exact_bounds(pop) == (2, 5)
    # One trial with every mode: a single audit refutes all.
    pop = small_population({"x1": "x", "y1": "y", "z1": "z"}, {"x1": ("y", "z")})
    assert sim.exact_bounds(pop) == (1, 3)
    # What T1 refuted counts in the recall, not in the rounds.
    pop = small_population({"a1": "a", "b1": "b", "c1": "c", "d1": "d", "ok": None})
    pop.t1_runs = {"d1": {"w": "failed"}}
    assert sim.exact_bounds(pop) == (3, 4)


def test_the_bound_rows_come_from_the_search():
    pop = small_population({"p1": "p", "p2": "p", "qp": "q", "q1": "q", "r1": "r", "ok": None}, {"qp": ("p",)})
    m = sim.measure(lambda seed: [pop], seeds=3, samplers=("uniform", "oracle-bound"))
    assert m["oracle-bound"]["median_rounds"] == 2 == sim.exact_bounds(pop)[0]
    assert m["oracle-bound"]["recall3"] == 1.0
    assert m["uniform"]["median_rounds"] >= 2


def test_out_of_reach_targets_are_not_gated_and_say_the_computed_bound():
    m = {"uniform": {"median_rounds": 7.0, "mean_rounds": 7.0, "recall3": 0.5, "sampler_recall3": 0.5},
         "cluster": {"median_rounds": 7.0, "mean_rounds": 7.0, "recall3": 0.5, "sampler_recall3": 0.5},
         "oracle-bound": {"median_rounds": 5.0, "mean_rounds": 5.0, "recall3": 0.55, "sampler_recall3": 0.55},
         "detectors-bound": {"median_rounds": 6.0, "mean_rounds": 6.0, "recall3": 0.5, "sampler_recall3": 0.5}}
    rounds, recall = sim.rows_for("x", m)[2:4]
    assert rounds["gate"] is False and "0.714x" in rounds["gate_reason"]
    assert recall["gate"] is False and "1.1x" in recall["gate_reason"]
    m["oracle-bound"]["median_rounds"] = 4.0  # reachable now: the miss gates
    rounds = sim.rows_for("x", m)[2]
    assert rounds["status"] == "FAIL" and "gate" not in rounds
