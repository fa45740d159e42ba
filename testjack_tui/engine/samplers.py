"""Samplers that beat uniform: spend fewer audit rounds on clean trials, reach failure modes sooner.

`cluster` groups a task's passing trials by what their diffs do (token trigrams of the changed
lines with local names blanked, files touched). A failure mode shared by many trials is usually
one group, and one audit of it refutes the whole group by replay, so groups nobody audited yet
come first. Each active trial gets a suspicion score from what the engine knows about it
(`TrialProfile`):
- static detector evidence, which the loop computes for every trial at task start: harness
  tampering, test-environment sniffing and literal collisions (structural), and edits to existing
  tests, harness, CI or build files;
- ghost branches (share of added lines T0 never runs), once a coverage run is available;
- source files touched outside the reference patch's file set;
- a diff much smaller than the reference patch (it often implements only the tested surface);
- deviation from its group's consensus (what most diffs of a big group do and this one lacks);
- the task analysis's suspicious-patch features its added lines match, once the analysis is in.
What the loop learns as it goes re-ranks every round (`learned_bonus`): a trial that resembles a
trial refuted so far (by task analysis or an audit) moves up -- it passed that witness, but it
made the same kind of choices, and defects come in families -- and so does a trial whose model's
record is bad: the share of that model's trials, over the whole session, with structural
detector evidence (`model_record`; computed once from static evidence, so it does not depend on
which task finishes first). The score is discounted when the trial resembles a trial already audited clean (similar code is
probably clean too) and when it already fails a known witness that did not refute it (its finding
is known: an ambiguous reading), and the audits already spent on its group are subtracted, so no
group is starved: see `ClusterSampler.rank`. Scores within `TIE` of the best are a tie, broken by
the seeded RNG: weak evidence must not become a fixed blind spot.

Only what the engine knows is used -- diffs, the reference patch, T0, detector evidence, audit
and replay outcomes, the model that wrote a trial -- never trial ids or labels. Deterministic for
a given seed.
tests/perf/sampling_sim.py measures it against uniform.
"""
from __future__ import annotations

import builtins
import dataclasses
import keyword
import math
import random
import re
from dataclasses import dataclass
from typing import Sequence

from testjack_tui.engine.detectors import collect_static_evidence, parse_diff
from testjack_tui.engine.detectors.signals import Evidence
from testjack_tui.engine.runner import is_failing
from testjack_tui.engine.sampling import UNIFORM, SamplerContext, SamplerState
from testjack_tui.model import Task, Trial
from .records import JsonObject
from .records_agent import SuspiciousFeature

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

    Deterministic: groups are ordered by their first id and ties go to the first pair in that
    order. Each group keeps its best later partner, so a merge revisits only the groups whose
    partner it changed: about quadratic time in the trials, not cubic (300 trials: 7.6 s before).
    """
    ids = sorted(features)
    sim = {(a, b): jaccard(features[a], features[b]) for i, a in enumerate(ids) for b in ids[i + 1:]}

    def s(a: str, b: str) -> float:
        return sim[(a, b)] if a < b else sim[(b, a)]

    def mean(g: list[str], h: list[str]) -> float:  # g before h: the same sum in the same order
        return sum(s(a, b) for a in g for b in h) / (len(g) * len(h))

    # A group is named by its first id; `order` lists the live groups in that (sorted) order.
    members: dict[str, list[str]] = {i: [i] for i in ids}
    order = list(ids)
    best: dict[str, tuple[float, str | None]] = {}

    def best_after(k: str) -> tuple[float, str | None]:
        top, partner = -1.0, None
        for other in order[order.index(k) + 1:]:
            m = mean(members[k], members[other])
            if m > top:
                top, partner = m, other
        return top, partner

    for k in order:
        best[k] = best_after(k)
    while len(order) > 1:
        top, pair = -1.0, None
        for k in order:  # the first group holding the highest mean, with its first partner
            m, partner = best[k]
            if partner is not None and m > top:
                top, pair = m, (k, partner)
        if top < threshold or pair is None:
            break
        g, h = pair
        members[g] = sorted(members[g] + members.pop(h))
        order.remove(h)
        del best[h]
        at = order.index(g)
        for k in order[:at]:  # earlier groups: g changed, h is gone
            m, partner = best[k]
            if partner in (g, h):
                best[k] = best_after(k)
            else:
                new = mean(members[k], members[g])
                if new > m or (new == m and partner is not None and g < partner):
                    best[k] = (new, g)
        best[g] = best_after(g)
        for k in order[at + 1:]:  # later groups: only h could have been a partner of theirs
            if best[k][1] == h:
                best[k] = best_after(k)
    return sorted((members[k] for k in order), key=lambda grp: grp[0])


def _source_lines(patch: str) -> int:
    """Added lines of implementation code (tests, config and docs-like files left out)."""
    from testjack_tui.engine.detectors import categorize

    return sum(len(f.added) for f in parse_diff(patch or "") if categorize(f.path) is None)


def _evidence(task: Task, trial: Trial, *given: JsonObject | None) -> Evidence:
    """The first usable evidence dict given, else static evidence computed here (cheap)."""
    for data in given:
        if data:
            try:
                return Evidence.from_dict(data)
            except (TypeError, ValueError):
                continue
    return collect_static_evidence(task, trial)


def _ghost_share(data: JsonObject | None) -> float | None:
    """Share of the diff's added lines T0 never executes, when a coverage run produced it."""
    ghost = (data or {}).get("ghost") or {}
    pct = ghost.get("added_line_pct")
    if ghost.get("error") or pct is None:
        return None
    return max(0.0, min(1.0, 1.0 - float(pct) / 100.0))


@dataclass(frozen=True)
class TrialProfile:
    """Engine-visible reasons to audit a trial soon, each in 0..1 (see the module docstring)."""

    detectors: float = 0.0  # structural detector signals; one saturates it
    scope: float = 0.0  # edits existing tests / harness / CI / build / config files
    outside: float = 0.0  # share of source files touched that the reference patch does not touch
    size: float = 0.0  # shortfall: how much smaller the diff is than the reference's (log2 / 2)
    deviation: float = 0.0  # share of its group's consensus it lacks (normalised per task)
    ghost: float | None = None  # share of added lines T0 never runs (None: not measured)

    WEIGHTS = {"detectors": 2.0, "scope": 0.6, "outside": 0.3, "size": 0.3, "deviation": 1.0,
               "ghost": 0.5}

    def score(self) -> float:
        w = self.WEIGHTS
        total = (w["detectors"] * self.detectors + w["scope"] * self.scope + w["outside"] * self.outside
                 + w["size"] * self.size + w["deviation"] * self.deviation)
        return total + (w["ghost"] * self.ghost if self.ghost is not None else 0.0)

    @classmethod
    def max_score(cls) -> float:
        return sum(cls.WEIGHTS.values())


def feature_share(patch: str, features: Sequence[SuspiciousFeature]) -> float:
    """Share of the task analysis's suspicious-patch features whose pattern occurs in the lines
    a diff adds (a regular expression when it compiles, else the literal text)."""
    patterns = [f.pattern for f in features or () if f.pattern]
    if not patterns:
        return 0.0
    added = "\n".join(line[1:] for line in (patch or "").splitlines()
                      if line.startswith("+") and not line.startswith("+++"))
    hits = 0
    for pattern in patterns:
        try:
            found = re.search(pattern, added) is not None
        except re.error:
            found = pattern in added
        hits += found
    return hits / len(patterns)


def _flagged(evidence: JsonObject | None) -> bool:
    """Structural detector evidence of suspicious or high severity (tampering, sniffing, literal
    collisions): what a model that cuts corners leaves behind."""
    try:
        ev = Evidence.from_dict(evidence or {})
    except (TypeError, ValueError, KeyError, AttributeError):
        return False
    return any(s.structural and s.severity in ("suspicious", "high") for s in ev.signals)


def model_record(static_evidence: dict[str, JsonObject], model_of: dict[str, str]) -> dict[str, float]:
    """Per model: the share of its trials (over every task of the session) whose static evidence
    is flagged, smoothed by half a flag over one extra trial so that a model with one trial says
    little. A model whose diffs tamper or sniff elsewhere cuts corners more often here too."""
    counts: dict[str, list[int]] = {}
    for trial_id, model in model_of.items():
        if trial_id not in static_evidence:
            continue
        c = counts.setdefault(model or "", [0, 0])
        c[0] += _flagged(static_evidence[trial_id])
        c[1] += 1
    return {model: (flags + 0.5) / (n + 1) for model, (flags, n) in counts.items()}


def learned_bonus(features: frozenset[str], refuted: list[frozenset[str]], model_share: float,
                  like_refuted: float, model_weight: float) -> float:
    """What the loop learned, as priority: like_refuted x the trial's greatest diff similarity to
    a trial refuted so far, plus model_weight x its model's record (`model_record`)."""
    like = max((jaccard(features, r) for r in refuted), default=0.0)
    return like_refuted * like + model_weight * model_share


def _source_files(patch: str) -> set[str]:
    from testjack_tui.engine.detectors import categorize

    return {f.path for f in parse_diff(patch or "") if categorize(f.path) is None}


class ClusterSampler:
    """Groups (by diff similarity) + engine-visible suspicion, discounted by resemblance to
    trials audited clean, by known non-refuting witness failures and by the audits already spent
    on the group. See the module docstring for why."""

    name = "cluster"
    CORE_SHARE = 0.5  # a feature most of a group's diffs have is part of its consensus
    # Smaller groups have no meaningful consensus. Measured (tests/perf/sampling_sim.py): on
    # the demo, a consensus of groups of 5 (3 diffs) misleads more than it finds; the fmtkit
    # benchmark's groups of 7 need theirs (4 diffs) to find a one-token slip.
    MIN_GROUP = 6
    BASE = 0.1  # every trial keeps some interest: nothing is ruled out by missing evidence
    VISIT_PENALTY = 1.0  # per audit already spent on the trial's group
    EXPLAINED = 0.25  # factor for a trial that already fails a known, non-refuting witness
    TIE = 0.05  # priorities this close to the best are a tie, broken by the seeded RNG
    FEATURES = 1.0  # weight of the task analysis's suspicious-patch features a diff matches
    LIKE_REFUTED = 0.5  # per unit of diff similarity to a trial refuted so far
    MODEL = 2.0  # per unit of the model's record (share of its trials flagged, session-wide)

    def __init__(self, task: Task, seed: int, context: SamplerContext | None = None,
                 threshold: float = 0.5):
        self.task = task
        self.rng = random.Random(f"{seed}:{task.id}:cluster")
        self.threshold = threshold
        trials = list(context.trials) if context else []
        self._static = dict(context.static_evidence) if context else {}
        # The loop's live dict: full evidence (with ghost branches) as trials get audited.
        self._live = context.evidence if context else {}
        self._features = context.features if context else []  # filled after the task analysis
        self._models = dict(context.model_record) if context else {}
        self._trials = {t.id: t for t in trials}
        self._reference_size = _source_lines(task.reference.patch or "")
        self._reference_files = _source_files(task.reference.patch or "")
        self.features: dict[str, frozenset[str]] = {}
        self.static: dict[str, TrialProfile] = {}
        self.signals: dict[str, frozenset[str]] = {}
        for t in trials:
            self._describe(t)
        self.groups = cluster(self.features, threshold) if self.features else []
        self.group_of = {tid: gi for gi, g in enumerate(self.groups) for tid in g}
        self.deviation: dict[str, float] = {}
        self.signature: dict[str, frozenset[str]] = {}
        self.has_consensus: dict[str, bool] = {}
        self._profile()

    # -- what we know about each trial ------------------------------------------------------
    def _describe(self, trial: Trial) -> None:
        ev = _evidence(self.task, trial, self._static.get(trial.id), self._live.get(trial.id))
        self.features[trial.id] = diff_features(trial.patch)
        structural = sum(1 for s in ev.signals if s.structural and s.severity in ("suspicious", "high"))
        other = sum(1 for s in ev.signals if not s.structural and s.severity in ("suspicious", "high"))
        # Scope: changes to files that decide how tests run or what they check; a new test file
        # of the trial's own is normal (severity info) and does not count.
        scope = sum(1 for s in ev.signals
                    if s.detector in ("diff_scope", "harness_tampering") and s.severity != "info")
        files = _source_files(trial.patch)
        size = _source_lines(trial.patch)
        # A diff much smaller than G's often implements only the surface T0 touches; a bigger
        # one is not suspicious by itself (own helpers, docs, defensive code).
        if self._reference_size and size:
            size_gap = min(1.0, max(0.0, -math.log2(size / self._reference_size)) / 2.0)
        else:
            size_gap = 1.0 if self._reference_size else 0.0  # no source change at all
        self.static[trial.id] = TrialProfile(
            detectors=min(1.0, structural + 0.5 * other),
            scope=min(1.0, 0.5 * scope),
            outside=(len(files - self._reference_files) / len(files)) if files and self._reference_files else 0.0,
            size=size_gap,
        )
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
            big = len(members) >= self.MIN_GROUP
            core = {f for f, n in counts.items() if n / len(members) > self.CORE_SHARE} if big else set()
            shared = {f for f, n in counts.items() if n >= 2}
            for tid in members:
                feats = self.features[tid]
                missing = core - feats
                extra = (feats - core) & shared
                self.deviation[tid] = len(missing) / len(core) if core else 0.0
                self.has_consensus[tid] = bool(core)
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
                self.has_consensus[t.id] = False
                self.signature[t.id] = self.signals[t.id]

    def profile(self, trial_id: str, state: SamplerState | None = None) -> TrialProfile:
        """The trial's profile now: static parts, its group deviation, ghost branches if known."""
        live = (state.evidence if state is not None and state.evidence else self._live) or {}
        return dataclasses.replace(self.static[trial_id], deviation=self.deviation.get(trial_id, 0.0),
                                   ghost=_ghost_share(live.get(trial_id)))

    def _resemblance(self, a: str, b: str) -> float:
        """How alike two trials' choices are: deviation signatures within a group that has a
        consensus (sharing the consensus says nothing), whole diffs otherwise."""
        if self.has_consensus.get(a) and self.has_consensus.get(b):
            return jaccard(self.signature[a], self.signature[b])
        return jaccard(self.features[a], self.features[b])

    # -- choosing ---------------------------------------------------------------------------
    def rank(self, active: list[Trial], state: SamplerState) -> list[tuple[float, str]]:
        """(priority, trial id) for every active trial, best first.

        priority = interest - VISIT_PENALTY x (audits spent on the trial's group) + what the loop
        learned so far (`learned_bonus`: resemblance to refuted trials, the model's record), where
        interest = (BASE + profile score + FEATURES x share of flagged features matched) x
        resemblance discount x explained discount, in [0, BASE + TrialProfile.max_score() + FEATURES]. So a group is never starved: while it has active
        trials, no other group gets more than ceil(max interest / VISIT_PENALTY) audits beyond its.
        """
        self._ensure(active)
        audited = list(dict.fromkeys(list(state.audited) + list(state.clean)))
        refuted = set(state.refuted)
        clean = [tid for tid in audited if tid not in refuted and tid in self.features]
        # Audits that found nothing weigh on their group. One that refuted its trial does not:
        # the group's other active members passed its witnesses on replay, so they do not
        # share that failure and are no more likely clean than before.
        group_audits: dict[int, int] = {}
        for tid in clean:
            if tid in self.group_of:
                gi = self.group_of[tid]
                group_audits[gi] = group_audits.get(gi, 0) + 1
        refuted_features = [self.features[tid] for tid in sorted(refuted) if tid in self.features]
        ranked = []
        for t in active:
            # Similar to a trial audited clean -> probably clean too (same choices, same code).
            seen = max((self._resemblance(t.id, c) for c in clean), default=0.0)
            # Fails a witness that did not refute it: what is wrong with it is already known.
            runs = state.runs_by_trial.get(t.id, {})
            explained = any(is_failing(status) for status in runs.values())
            flagged = self.FEATURES * feature_share(t.patch, self._features) if self._features else 0.0
            interest = (self.BASE + self.profile(t.id, state).score() + flagged) * (0.5 + 0.5 * (1.0 - seen))
            if explained:
                interest *= self.EXPLAINED
            visits = group_audits.get(self.group_of[t.id], 0)
            learned = learned_bonus(self.features[t.id], refuted_features, self._models.get(t.model, 0.0),
                                    self.LIKE_REFUTED, self.MODEL)
            ranked.append((round(interest - self.VISIT_PENALTY * visits + learned, 9), t.id))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return ranked

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        if not active:
            raise ValueError("cannot sample from an empty active set")
        ranked = self.rank(active, state)
        best = ranked[0][0]
        tied = sorted(tid for score, tid in ranked if score >= best - self.TIE)
        chosen = self.rng.choice(tied)
        return next(t for t in active if t.id == chosen)


# The application's samplers (SessionDeps.samplers' default; the CLI and the TUI offer these).
SAMPLERS = UNIFORM.with_("cluster", ClusterSampler,
                         "groups trials by diff similarity and detector evidence; audits unvisited groups "
                         "and suspicious trials first, re-ranks every round on trials refuted so far "
                         "and each model's record, never starves a group")
