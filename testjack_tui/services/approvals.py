"""The operator's approvals, for both front ends.

    decision = operator_decision("valid", overrule=True)     # -> counts False, label "invalid"
    context = approval_context(store, candidate_id, task, trial)   # what the operator judges

The CLI asks on stdin and the TUI in a dialog; both turn the answer into a decision here, and
both show the same facts: the candidate, the requirement and the reviewer's quote of the prompt,
the candidate's run on the reference (it must pass) and on the trial (its failing assertion).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from testjack_tui.engine.explanations import run_message
from testjack_tui.engine.records_cands import ApprovalRecord, DecidedBy
from testjack_tui.engine.store import SessionStore
from testjack_tui.engine.records_runs import StoredRun
from testjack_tui.engine.roles import ApprovalDecision, ReviewLabel


def operator_decision(reviewer_label: str, overrule: bool, operator_judges: bool = False,
                      note: str = "", where: str = "", questionable: bool = False) -> ApprovalDecision:
    """The decision an operator's answer stands for.

    With the operator as reviewer (`operator_judges`) there is no label to approve: approve
    means valid (it counts), overrule means invalid. Otherwise approve lets the reviewer's label
    stand (only "valid" counts) and overrule reverses whether the candidate counts."""
    suffix = f" {where}" if where else ""
    if questionable:  # neither counts nor is dropped: an open question about P
        return ApprovalDecision(counts=False, label=ReviewLabel.QUESTIONABLE, by=DecidedBy.OPERATOR,
                                note=note.strip() or f"judged questionable by the operator{suffix}")
    label: ReviewLabel
    if operator_judges:
        counts = not overrule
        label = ReviewLabel.VALID if counts else ReviewLabel.INVALID
        default = f"judged by the operator{suffix}"
    elif overrule:
        counts = reviewer_label != "valid"
        label = ReviewLabel.VALID if counts else ReviewLabel.INVALID
        default = f"operator overruled the reviewer's '{reviewer_label}'{suffix}"
    else:
        counts = reviewer_label == "valid"
        label = ReviewLabel(reviewer_label)  # the reviewer's label stands
        default = f"operator approved the reviewer's '{reviewer_label}'{suffix}"
    return ApprovalDecision(counts=counts, label=label, by=DecidedBy.OPERATOR,
                            note=note.strip() or default)


@dataclass
class RunFacts:
    world: str  # "reference" | "trial"
    status: str  # passed / failed / ... ("" when not run yet)
    message: str = ""  # failing assertion or output tail (untrusted)


@dataclass
class CandidateFacts:
    """Which candidate this is and what it says: the part every view of a candidate shares
    (the approval dialog here, the TUI's candidates table in tui/live_views.py)."""

    candidate_id: str
    task_id: str
    trial_id: str | None
    path: str = ""
    source: str = ""
    requirement: str = ""
    author: str = ""


@dataclass
class ApprovalContext(CandidateFacts):
    """Everything the operator should see before approving or overruling a verdict."""

    label: str = ""  # the reviewer's
    explicit: bool | None = None
    quote: str = ""  # the reviewer's quote of the prompt
    reason: str = ""
    reviewer: str = ""
    prompt: str = ""  # P
    patch: str = ""  # s (the trial's diff), "" for task analysis
    reference: RunFacts = field(default_factory=lambda: RunFacts("reference", ""))
    model: RunFacts = field(default_factory=lambda: RunFacts("trial", ""))
    decision: ApprovalRecord | None = None  # the stored approval, once decided


def approval_context(store: SessionStore, candidate_id: str, task: Any = None, trial: Any = None) -> ApprovalContext:
    """Gather a candidate's facts from the session's store (and P / s from the benchmark)."""
    cand = store.candidate(candidate_id)
    verdict = store.get_verdict(candidate_id)
    ctx = ApprovalContext(
        candidate_id=candidate_id, task_id=(cand.task_id if cand else "") or (verdict.task_id if verdict else ""),
        trial_id=(cand.trial_id if cand else None) or (verdict.trial_id if verdict else None),
        path=cand.path if cand else "", source=cand.source if cand else "",
        requirement=(verdict.requirement if verdict else "") or (cand.requirement if cand else ""),
        author=cand.author if cand else "", label=verdict.label if verdict else "",
        explicit=verdict.explicit if verdict else None, quote=verdict.quote if verdict else "",
        reason=verdict.reason if verdict else "", reviewer=verdict.reviewer if verdict else "",
        prompt=getattr(task, "instruction", "") or "", patch=getattr(trial, "patch", "") or "",
        decision=store.get_approval(candidate_id))
    test_ids = cand.test_ids if cand else ()
    validations = [v for v in store.validations(ctx.task_id or None) if v.candidate_id == candidate_id]
    # The candidate's own trial first; a task-analysis candidate has its replays instead.
    validations.sort(key=lambda v: v.trial_id != (ctx.trial_id or ""))
    if validations:
        v = validations[0]
        ctx.reference = RunFacts("reference", v.reference,
                                 run_message(_run(store, v.reference_run), ctx.path, test_ids))
        ctx.model = RunFacts("trial", v.model, run_message(_run(store, v.model_run), ctx.path, test_ids))
    return ctx


def _run(store: SessionStore, key: str | None) -> StoredRun | None:
    return store.get_run(key) if key else None
