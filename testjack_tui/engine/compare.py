"""Lightweight loop against per-trial audit on the same benchmark (the paper's comparison).

Per-trial mode audits every passing trial on its own; the lightweight loop audits a sample and
shares witnesses. With a finished session of each mode on the same benchmark, the lightweight
loop's recall is the share of per-trial refutations it also makes, and its cost is what it
spent as a share of what per-trial spent (LLM dollars when both used an LLM; test runs and wall
time always).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .store import SessionStore, db_path
from .summary import SessionSummary, build_summary


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _refuted(summary: SessionSummary) -> tuple[set[str], set[str]]:
    trials = summary.trials()
    return {tid for tid, t in trials.items() if t.state == "refuted"}, set(trials)


def _summary(session_id: str) -> SessionSummary:
    store = SessionStore(db_path(session_id))
    try:
        return build_summary(store)
    finally:
        store.close()


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

    if not benchmark or mode not in ("lightweight", "per-trial"):
        return None
    for s in list_sessions():
        if s["id"] != session_id and s.get("benchmark") == benchmark and s.get("state") == "finished" \
                and s.get("mode") in ("lightweight", "per-trial") and s.get("mode") != mode:
            return str(s["id"])
    return None


def mode_comparison(session_id: str, summary: SessionSummary, other_id: str | None = None) -> Comparison | None:
    """The comparison for this session's report, when a counterpart session exists."""
    other_id = other_id or find_counterpart(session_id, summary.benchmark, summary.mode)
    if other_id is None:
        return None
    other = _summary(other_id)
    if summary.mode == "lightweight":
        return compare(summary, other)
    return compare(other, summary)
