"""Samplers that beat uniform: spend fewer audit rounds on clean trials, reach failure modes sooner.

`cluster` groups a task's passing trials by what their diffs do (token trigrams of the changed
lines with local names blanked, files touched, detector signals). A failure mode shared by many
trials is usually one group, and one audit of it refutes the whole group by replay, so every
group gets one audit before any group gets a second. Within that order a trial scores by:
- detector suspicion (tampering, sniffing, literal collisions);
- deviation from its group's consensus (what most diffs in a big group do and this one lacks);
- shortfall against the reference patch (a much smaller diff often implements only the tested
  surface);
- novelty: unlike every trial already audited clean (similar code is probably clean too);
discounted by the audits already spent on its group, so no group is starved.

Only what the engine knows is used: diffs, the reference patch, detector evidence and the
outcomes of audits. Deterministic for a given seed (ties broken by a seeded RNG).
tests/perf/sampling_sim.py measures it against uniform.
"""
from __future__ import annotations

import builtins
import keyword
import random
import re

from testjack_tui.engine.detectors import collect_static_evidence, parse_diff
from testjack_tui.engine.detectors.signals import Evidence
from testjack_tui.engine.sampling import SamplerContext, SamplerState, register_sampler
from testjack_tui.model import Task, Trial

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|[^\s\w]")
_COMMENT = re.compile(r"^\s*(#|//)")
_KEEP = set(keyword.kwlist) | set(dir(builtins))


def _normalise_tokens(line: str) -> list[str]:
    """Tokens of a code line with local names blanked: renaming a variable is incidental,
    calling a different method or using a different constant is not."""
    toks = _TOKEN.findall(line)
    out = []
    for i, tok in enumerate(toks):
        if (tok[0].isalpha() or tok[0] == "_") and tok not in _KEEP:
            after_dot = i > 0 and toks[i - 1] == "."
            called = i + 1 < len(toks) and toks[i + 1] == "("
            if not (after_dot or called):
                tok = "_"
        out.append(tok)
    return out


def diff_features(patch: str) -> frozenset[str]:
    """What a diff does, as a set: token trigrams of changed code lines, files touched."""
    feats: set[str] = set()
    for f in parse_diff(patch or ""):
        feats.add(f"file:{f.path}")
        for sign, lines in (("+", f.added), ("-", f.removed)):
            for line in lines:
                if not line.text.strip() or _COMMENT.match(line.text):
                    continue  # comments and blank lines are incidental
                toks = _normalise_tokens(line.text)
                if len(toks) < 3:
                    feats.add(sign + " ".join(toks))
                for i in range(len(toks) - 2):
                    feats.add(sign + " ".join(toks[i:i + 3]))
    return frozenset(feats)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def cluster(features: dict[str, frozenset[str]], threshold: float = 0.5) -> list[list[str]]:
    """Average-linkage agglomerative clustering; merges while mean similarity >= threshold.

    Deterministic: ids are processed in sorted order and ties go to the lexicographically first
    pair. Quadratic memory, fine for the hundreds of trials a task has.
    """
    ids = sorted(features)
    sim = {(a, b): jaccard(features[a], features[b]) for i, a in enumerate(ids) for b in ids[i + 1:]}

    def s(a: str, b: str) -> float:
        return sim[(a, b)] if a < b else sim[(b, a)]

    groups = [[i] for i in ids]
    while len(groups) > 1:
        best, pair = -1.0, None
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                g, h = groups[i], groups[j]
                mean = sum(s(a, b) for a in g for b in h) / (len(g) * len(h))
                if mean > best:
                    best, pair = mean, (i, j)
        if best < threshold or pair is None:
            break
        i, j = pair
        groups[i] = sorted(groups[i] + groups[j])
        del groups[j]
    return sorted(groups, key=lambda g: g[0])


def _source_lines(patch: str) -> int:
    """Added lines of implementation code (tests, config and docs-like files left out)."""
    from testjack_tui.engine.detectors import categorize

    return sum(len(f.added) for f in parse_diff(patch or "") if categorize(f.path) is None)


def _evidence_of(task: Task, trial: Trial, given: dict | None) -> Evidence:
    if given:
        try:
            return Evidence.from_dict(given)
        except (TypeError, ValueError):
            pass
    return collect_static_evidence(task, trial)


class ClusterSampler:
    """Groups (by diff similarity) + deviation from each group's consensus + detector suspicion,
    discounted by similarity to trials already audited clean and by audits already spent on
    the group. See the module docstring for why."""

    name = "cluster"
    CORE_SHARE = 0.5  # a feature most of a group's diffs have is part of its consensus
    MIN_GROUP = 8  # smaller groups have no meaningful consensus
    SHORTFALL_WEIGHT = 1.0
    VISITED_PENALTY = 10.0  # larger than any score: visited groups only after all unvisited ones

    def __init__(self, task: Task, seed: int, context: SamplerContext | None = None,
                 threshold: float = 0.5):
        self.task = task
        self.rng = random.Random(f"{seed}:{task.id}:cluster")
        self.threshold = threshold
        trials = list(context.trials) if context else []
        self._given = dict(context.evidence) if context else {}
        self.features: dict[str, frozenset[str]] = {}
        self.suspicion: dict[str, float] = {}
        self.shortfall: dict[str, float] = {}
        self._reference_size = _source_lines(task.reference.patch or "")
        self.signals: dict[str, frozenset[str]] = {}
        for t in trials:
            self._describe(t)
        self.groups = cluster(self.features, threshold) if self.features else []
        self.group_of = {tid: gi for gi, g in enumerate(self.groups) for tid in g}
        self.deviation: dict[str, float] = {}
        self.signature: dict[str, frozenset[str]] = {}
        self._profile()

    # -- what we know about each trial ------------------------------------------------------
    def _describe(self, trial: Trial) -> None:
        ev = _evidence_of(self.task, trial, self._given.get(trial.id))
        self.features[trial.id] = diff_features(trial.patch)
        self.suspicion[trial.id] = ev.suspicion_score()
        # A diff much smaller than G's often implements only the surface T0 touches.
        size = _source_lines(trial.patch)
        self.shortfall[trial.id] = (max(0.0, min(1.0, 1.0 - size / self._reference_size))
                                    if self._reference_size else 0.0)
        self.signals[trial.id] = frozenset(f"sig:{s.detector}/{s.kind}" for s in ev.signals
                                           if s.severity in ("suspicious", "high"))

    def _profile(self) -> None:
        """Per trial: how much of its group's consensus it lacks, and its deviation signature."""
        for members in self.groups:
            counts: dict[str, int] = {}
            for tid in members:
                for f in self.features[tid]:
                    counts[f] = counts.get(f, 0) + 1
            # Consensus needs a group big enough for a majority to mean something.
            core = ({f for f, n in counts.items() if n / len(members) > self.CORE_SHARE}
                    if len(members) >= self.MIN_GROUP else set())
            shared = {f for f, n in counts.items() if n >= 2}
            for tid in members:
                feats = self.features[tid]
                missing = core - feats
                extra = (feats - core) & shared
                self.deviation[tid] = len(missing) / len(core) if core else 0.0
                self.signature[tid] = (frozenset("-" + f for f in missing)
                                       | frozenset("+" + f for f in extra) | self.signals[tid])
        top = max(self.deviation.values(), default=0.0)
        if top > 0:
            self.deviation = {tid: d / top for tid, d in self.deviation.items()}

    def _ensure(self, active: list[Trial]) -> None:
        """A trial the context did not list (should not happen) becomes its own group."""
        for t in active:
            if t.id not in self.group_of:
                self._describe(t)
                self.groups.append([t.id])
                self.group_of[t.id] = len(self.groups) - 1
                self.deviation[t.id] = 0.0
                self.signature[t.id] = self.signals[t.id]

    # -- choosing ---------------------------------------------------------------------------
    def rank(self, active: list[Trial], state: SamplerState) -> list[tuple[float, str]]:
        """(score, trial id) for every active trial, best first."""
        self._ensure(active)
        audited = set(state.audited) | set(state.clean)
        clean = [tid for tid in dict.fromkeys(list(state.clean)) if tid in self.signature]
        group_audits: dict[int, int] = {}
        for tid in audited:
            if tid in self.group_of:
                gi = self.group_of[tid]
                group_audits[gi] = group_audits.get(gi, 0) + 1
        ranked = []
        for t in active:
            sig = self.signature[t.id]
            # Similar to a trial audited clean -> probably clean too (same choices, same code).
            seen = max((jaccard(sig, self.signature[c]) for c in clean), default=0.0)
            novelty = 1.0 - seen
            gi = self.group_of[t.id]
            pressure = group_audits.get(gi, 0) / len(self.groups[gi])
            interest = (0.1 + self.deviation[t.id] + min(1.0, self.suspicion[t.id] / 3.0)
                        + self.SHORTFALL_WEIGHT * self.shortfall[t.id])
            score = interest * (0.2 + novelty) / (1.0 + pressure)
            # Groups nobody audited yet come first: a failure mode is usually one group.
            visited = 1 if group_audits.get(gi, 0) else 0
            ranked.append((round(score, 9) - visited * self.VISITED_PENALTY, t.id))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return ranked

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        if not active:
            raise ValueError("cannot sample from an empty active set")
        ranked = self.rank(active, state)
        best = ranked[0][0]
        tied = sorted(tid for score, tid in ranked if score == best)
        chosen = self.rng.choice(tied)
        return next(t for t in active if t.id == chosen)


register_sampler("cluster", ClusterSampler,
                 "groups trials by diff similarity and detector evidence; audits unvisited groups "
                 "and suspicious trials first, never starves a group")
