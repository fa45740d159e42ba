"""The task analysis's suspicious-patch features steer the cluster sampler toward the trials
whose added lines match them, once the analysis is in."""
from __future__ import annotations

from test_sampler_ranking import STYLE_A, TASK, patch

from testjack_tui.engine.records_agent import SuspiciousFeature
from testjack_tui.engine.samplers import ClusterSampler, feature_share
from testjack_tui.engine.sampling import SamplerContext, SamplerState
from testjack_tui.model import Trial

FEATURES = [SuspiciousFeature("F1", "negative sizes raise ValueError", r"return\s+12",
                               "the tested answer, hard-coded", "none"),
            SuspiciousFeature("F2", "negative sizes raise ValueError", "abs(", "negative sizes made positive",
                              "abs of a difference")]


def test_feature_share_matches_added_lines_by_regex_or_literal():
    assert feature_share(patch(["    return 12"]), FEATURES) == 0.5
    assert feature_share(patch(["    return abs(w) * 12"]), FEATURES) == 0.5  # "abs(" is no regex: literal
    assert feature_share(patch(["    return abs(w)", "    return 12"]), FEATURES) == 1.0
    assert feature_share(patch(["x = 1"]), []) == 0.0


def test_flagged_trials_rank_first_once_features_arrive():
    plain = [Trial(f"p{i}", "calc", "a", "m", patch(STYLE_A + [f"X{i} = {i}"]), True) for i in range(3)]
    flagged = Trial("flagged", "calc", "a", "m", patch(STYLE_A + ["X9 = 9", "    return 12"]), True)
    context = SamplerContext(trials=plain + [flagged])
    sampler = ClusterSampler(TASK, 0, context)
    state = SamplerState(round=1)
    before = dict((tid, score) for score, tid in sampler.rank(plain + [flagged], state))
    context.features[:] = FEATURES  # what the loop does when the task analysis is in
    after = sampler.rank(plain + [flagged], state)
    assert after[0][1] == "flagged" and after[0][0] > before["flagged"]
    assert all(score == before[tid] for score, tid in after if tid != "flagged")
