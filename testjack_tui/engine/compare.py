"""Lightweight loop against per-trial audit on the same benchmark (the paper's comparison).

Per-trial mode audits every passing trial on its own; the lightweight loop audits a sample and
shares witnesses. With a finished session of each mode on the same benchmark, the lightweight
loop's recall is the share of per-trial refutations it also makes, and its cost is what it
spent as a share of what per-trial spent (LLM dollars when both used an LLM; test runs and wall
time always).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field

from .config import Mode
from .store import SessionStore, db_path
from .summary import SessionSummary, build_summary
from .records import JsonObject


@dataclass
class Comparison:
    """A lightweight session against a per-trial one on the same benchmark."""

    lightweight_session: str | None
    per_trial_session: str | None
    trials: int  # passing trials in both
    refuted_per_trial: int
    refuted_lightweight: int
    recall: float | None
    missed: list[str]
    extra: list[str]
    cost_usd: float | None  # the lightweight session's cost as a share of the per-trial one's
    cost_test_runs: float | None
    cost_seconds: float | None
    # What the two sessions did not share (trials, agents, the operator's candidates and their
    # requirements, budget): a comparison with differences is refused unless forced.
    differences: list[str] = field(default_factory=list)
    forced: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.differences) and not self.forced

    def to_json(self) -> JsonObject:
        return asdict(self)


def _refuted(summary: SessionSummary) -> tuple[set[str], set[str]]:
    trials = summary.trials()
    return {tid for tid, t in trials.items() if t.state == "refuted"}, set(trials)


def _summary(session_id: str) -> tuple[SessionSummary, dict[str, str]]:
    store = SessionStore(db_path(session_id))
    try:
        return build_summary(store), operator_candidates(store)
    finally:
        store.close()


def operator_candidates(store: SessionStore) -> dict[str, str]:
    """The operator's own test files of a session: source digest -> the requirement given."""
    out = {}
    for c in store.candidates():
        if c.author == "operator":
            out[hashlib.sha256(c.source.encode()).hexdigest()[:12]] = c.requirement
    return out


def _trial_ids(summary: SessionSummary) -> set[str]:
    """The trials a session was asked to judge: its `--trial` selection, else every passing
    trial of its tasks."""
    chosen = summary.config.trials if summary.config else None
    return set(chosen) if chosen else set(summary.trials())


def differences(a: SessionSummary, b: SessionSummary, cands_a: dict[str, str], cands_b: dict[str, str]) -> list[str]:
    """What keeps two sessions from being compared like with like, one phrase each."""
    out = []
    ta, tb = _trial_ids(a), _trial_ids(b)
    if ta != tb:
        only_a, only_b = sorted(ta - tb), sorted(tb - ta)
        out.append("trials differ" + (f" (only in {a.session_id}: {', '.join(only_a[:3])}"
                                      + ("…" if len(only_a) > 3 else "") + ")" if only_a else "")
                   + (f" (only in {b.session_id}: {', '.join(only_b[:3])}" + ("…" if len(only_b) > 3 else "") + ")"
                      if only_b else ""))
    agents_a, agents_b = a.config.agents if a.config else {}, b.config.agents if b.config else {}
    for role in sorted(set(agents_a) | set(agents_b)):
        if agents_a.get(role) != agents_b.get(role):
            out.append(f"{role} agent differs ({agents_a.get(role)} vs {agents_b.get(role)})")
    if set(cands_a) != set(cands_b):
        out.append(f"the operator's candidates differ ({len(cands_a)} vs {len(cands_b)} file(s), "
                   f"{len(set(cands_a) ^ set(cands_b))} not in both)")
    else:
        changed = sorted(k for k in cands_a if cands_a[k] != cands_b[k])
        if changed:
            out.append(f"requirements differ for {len(changed)} operator candidate(s) "
                       f"(\"{cands_a[changed[0]][:60]}\" vs \"{cands_b[changed[0]][:60]}\")")
    budget_a, budget_b = (a.config.budget.to_dict() if a.config else {}), (b.config.budget.to_dict() if b.config else {})
    if budget_a != budget_b:
        keys = sorted(k for k in set(budget_a) | set(budget_b) if budget_a.get(k) != budget_b.get(k))
        out.append("budget differs (" + ", ".join(f"{k}: {budget_a.get(k)} vs {budget_b.get(k)}" for k in keys) + ")")
    return out


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def compare(lightweight: SessionSummary, per_trial: SessionSummary) -> Comparison:
    """Recall and cost of a lightweight session's summary against a per-trial one's."""
    light, light_trials = _refuted(lightweight)
    full, full_trials = _refuted(per_trial)
    common = light_trials & full_trials
    light, full = light & common, full & common
    lu, fu = lightweight.usage, per_trial.usage
    return Comparison(
        lightweight_session=lightweight.session_id, per_trial_session=per_trial.session_id,
        trials=len(common), refuted_per_trial=len(full), refuted_lightweight=len(light),
        recall=_ratio(len(light & full), len(full)),
        missed=sorted(full - light), extra=sorted(light - full),
        cost_usd=_ratio(lu.usd, fu.usd), cost_test_runs=_ratio(lu.test_runs, fu.test_runs),
        cost_seconds=_ratio(lu.seconds, fu.seconds))


def find_counterpart(session_id: str, benchmark: str | None, mode: str | None) -> str | None:
    """The newest finished session of the other mode on the same benchmark."""
    from .session import list_sessions

    if not benchmark or mode not in set(Mode):
        return None
    for s in list_sessions():
        if s["id"] != session_id and s.get("benchmark") == benchmark and s.get("state") == "finished" \
                and s.get("mode") in set(Mode) and s.get("mode") != mode:
            return str(s["id"])
    return None


def mode_comparison(session_id: str, summary: SessionSummary, other_id: str | None = None,
                    force: bool = False) -> Comparison | None:
    """The comparison for this session's report, when a counterpart session exists. Sessions
    that did not share trials, agents, candidates, requirements and budget are not compared
    like with like: the comparison lists the `differences` and is `refused` unless `force`."""
    other_id = other_id or find_counterpart(session_id, summary.benchmark, summary.mode)
    if other_id is None:
        return None
    other, other_cands = _summary(other_id)
    _, my_cands = _summary(session_id)
    diffs = differences(summary, other, my_cands, other_cands)
    result = compare(summary, other) if summary.mode == Mode.LIGHTWEIGHT else compare(other, summary)
    result.differences, result.forced = diffs, force
    return result


def refusal_line(c: Comparison) -> str:
    """The one line a refused comparison prints instead of its numbers."""
    return (f"lightweight {c.lightweight_session} and per-trial {c.per_trial_session} not compared: "
            + "; ".join(c.differences) + " (--force compares them anyway)")
