"""What became of each task-analysis candidate, for the task's report.

One row per chain (a candidate and its repairs): the versions tried and one fate, so a test that
passed the reference and held on every trial, a repaired version or a dropped candidate is
listed instead of vanishing.
"""
from __future__ import annotations

from typing import Sequence

from .oracle import Validation
from .records import JsonObject
from .records_agent import AnalysisTestFate, AuditTestFate, SuspiciousFeature
from .records_cands import CandidateRecord, ValidationOutcome
from .runner import is_failing
from .store import SessionStore

HELD = "held on every trial"


def _fate(v: Validation, vacuous: set[str], statuses: dict[str, dict[str, str]], trials: list[str]) -> str:
    if v.outcome == "dropped":
        return f"dropped: {v.reason}"
    if v.outcome != "passes_reference":
        return v.outcome
    ran = [t for t in trials if v.candidate.id in statuses.get(t, {})]
    failing = [t for t in ran if is_failing(statuses[t][v.candidate.id])]
    if v.candidate.id in vacuous:
        head = "passes on the null world too (checks nothing the task adds; kept as a regression check)"
    else:
        head = "validated on the reference"
    if failing:
        return f"{head}; fails on {len(failing)} of {len(ran)} trial(s): sent to the reviewer"
    if ran and len(ran) == len(trials):
        return HELD if head.startswith("validated") else f"{head}; {HELD}"
    return f"{head}; not replayed on every trial ({len(ran)} of {len(trials)})"


def fate_rows(validations: list[Validation], vacuous: set[str], statuses: dict[str, dict[str, str]],
              trials: list[str]) -> list[AnalysisTestFate]:
    rows = []
    for v in validations:
        versions = [c.id for c in v.versions] or [v.candidate.id]
        fate = held = _fate(v, vacuous, statuses, trials)
        if len(versions) > 1:
            fate += f" (repaired from {versions[0]}, {len(versions) - 1} repair(s))"
        rows.append(AnalysisTestFate(v.candidate.id, v.candidate.path, v.candidate.requirement, tuple(versions),
                                     fate, held.endswith(HELD)))
    return rows



def withdrawn_features(features: Sequence[SuspiciousFeature], fates: Sequence[AnalysisTestFate]) -> list[JsonObject]:
    """The task analysis's suspicious-patch features that validation disproved: a test checking
    the feature's requirement held on every trial, so no trial's patch breaks it, whatever the
    pattern. Withdrawn from later auditors' requests (a lead already followed to nothing); each
    as {id, requirement, disproved_by: the held test's id}."""
    from .requirements import same_requirement  # one rule for "the same requirement"

    out = []
    for feature in features:
        want = feature.requirement
        held = next((row for row in fates if row.held and want and same_requirement(want, row.requirement)), None)
        if held is not None:
            out.append({"id": feature.id, "requirement": want, "disproved_by": held.id})
    return out


def audit_fate_rows(store: SessionStore, task_id: str) -> list[AuditTestFate]:
    """What became of each trial auditor's test of the task (the operator's too): one row per
    chain (a candidate and its repairs), from what the store recorded: a witness, judged not to
    count, passed on both worlds of its trial, dropped (with the reason) or still open. The
    task analysis's chains are `fate_rows`'."""
    chains: dict[str, list[CandidateRecord]] = {}
    for c in store.candidates(task_id):
        if c.trial_id and c.author != "task_analysis":
            chains.setdefault(c.id.rpartition(".v")[0], []).append(c)
    drops = {d.candidate_id: d.reason for d in store.drops() if d.task_id == task_id}
    validations = {v.candidate_id: v for v in store.validations(task_id)}
    witnesses = {w.id for w in store.witnesses(task_id)}
    rows = []
    for versions in chains.values():
        last = versions[-1]
        cid, trial = last.id, str(last.trial_id)
        verdict = store.get_verdict(cid)
        v = validations.get(cid)
        outcome = v.outcome if v is not None else None
        if cid in drops:
            fate = f"dropped: {drops[cid]}"
        elif cid in witnesses:
            fate = f"witness: passes on the reference, fails on {trial}"
        elif outcome == ValidationOutcome.DISCRIMINATES:
            decided = store.get_approval(cid)
            if decided is not None:
                fate = f"fails on {trial}; {decided.label} ({decided.by}): does not count"
            elif verdict is not None:
                fate = f"fails on {trial}; the reviewer said {verdict.label}: waiting for a decision"
            else:
                fate = f"fails on {trial}: waiting for its judgement"
        elif outcome == ValidationOutcome.PASSES_BOTH:
            fate = f"passed on both worlds of {trial} (shows nothing about it)"
        else:
            fate = str(outcome or "not validated yet")
        if len(versions) > 1:
            fate += f" (repaired from {versions[0].id}, {len(versions) - 1} repair(s))"
        rows.append(AuditTestFate(cid, trial, last.author, last.path, last.requirement,
                                  tuple(c.id for c in versions), fate))
    return rows
