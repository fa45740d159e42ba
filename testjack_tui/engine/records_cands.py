"""The candidate pipeline's stored records: candidates, validations, drops, reviewer verdicts
and approvals, as the session store reads and writes them (engine/store.py).

What a reviewer or operator said is data: an approval keeps every field it was given (the
reviewer's label beside the label that stands, the note, the operator's own judgement of the
requirement), and a row an older TestJack wrote reads with its added columns empty.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from enum import StrEnum

from .records import JsonObject
from .roles import ApprovalDecision, Candidate, CandidateAuthor, OperatorJudgement, ReviewLabel



class ValidationOutcome(StrEnum):
    """What the oracle's runs of a candidate showed (engine/oracle.py)."""

    PASSES_REFERENCE = "passes_reference"  # task analysis: passes on R[G], no trial to compare
    FAILS_REFERENCE = "fails_reference"  # needs a repair (or is dropped)
    DISCRIMINATES = "discriminates"  # passes on R[G], fails on the trial: a witness if approved
    PASSES_BOTH = "passes_both"  # shows nothing about the trial
    UNVERIFIABLE = "unverifiable"  # the trial's run was void (its canaries caught a forgery)
    FLAKY = "flaky"  # discriminated once, then not on a re-run: dropped


class DecidedBy(StrEnum):
    """Who took an approval decision."""

    AUTO = "auto"  # the auto-approver, from the reviewer's label
    OPERATOR = "operator"  # a person (the TUI, stdin, a --verdicts table)
    QUEUED = "queued"  # left for a person under auto-approval: not counted


class DecisionKind(StrEnum):
    """How a decision relates to the reviewer's verdict (engine/approval.decision_kind)."""

    AUTO = "auto"  # nobody was asked
    APPROVED = "approved"  # the operator let the reviewer's verdict stand
    OVERRULED = "overruled"  # the operator changed whether the candidate counts
    JUDGED = "judged"  # the operator was the reviewer


def candidate_to_dict(c: Candidate) -> JsonObject:
    """A candidate as JSON (a repair as authored, an audit's stored outcome)."""
    data = dataclasses.asdict(c)
    data["test_ids"] = list(c.test_ids)
    return data


def candidate_from_dict(data: JsonObject) -> Candidate:
    """The candidate `candidate_to_dict` wrote (unknown keys, from a newer version, are left out)."""
    known = {f.name for f in dataclasses.fields(Candidate)}
    values = {k: v for k, v in data.items() if k in known}
    values["test_ids"] = tuple(values.get("test_ids") or ())
    return Candidate(**values)


@dataclass(frozen=True)
class CandidateRecord:
    """A stored candidate and where it was proposed (trial_id None: the task analysis's)."""

    id: str
    task_id: str
    trial_id: str | None
    path: str
    source: str
    requirement: str
    author: CandidateAuthor
    attempt: int
    parent: str | None
    test_ids: tuple[str, ...]
    origin: str
    at: float


@dataclass(frozen=True)
class ValidationRecord:
    """The oracle's verdict on a candidate for one trial ("" : the reference alone)."""

    candidate_id: str
    trial_id: str
    task_id: str
    reference: str  # the candidate's status on R[G]
    model: str  # its status on the trial's world ("" when not run)
    outcome: ValidationOutcome
    reference_run: str | None
    model_run: str | None
    at: float = 0.0  # stamped by the store on write
    # The earlier candidate of the task with the same source whose run on R[G] answered this one
    # (engine/oracle.taken_run); "" when its own run did.
    reference_of: str = ""


@dataclass(frozen=True)
class DropRecord:
    """Why a candidate was dropped (it failed on the reference after its repairs, or was flaky)."""

    candidate_id: str
    task_id: str
    trial_id: str | None
    reason: str
    at: float = 0.0  # stamped by the store on write


@dataclass(frozen=True)
class VerdictRecord:
    """A reviewer's stored verdict (its structured part, cases and coverage, is an audits row:
    engine/approval.review_key)."""

    candidate_id: str
    task_id: str
    trial_id: str | None
    label: ReviewLabel
    requirement: str
    explicit: bool
    quote: str
    reason: str
    reviewer: str
    at: float


@dataclass(frozen=True)
class ApprovalRecord:
    """Who decided what about a candidate: the label that stands and whether it counts, the
    reviewer's label it was decided against, and the operator's note and judgement.
    `reviewer_label` / `decision` are None on rows written before they were stored."""

    candidate_id: str
    request_id: str
    task_id: str
    counts: bool
    label: ReviewLabel
    by: DecidedBy
    note: str = ""
    reviewer_label: ReviewLabel | None = None
    decision: DecisionKind | None = None
    trial_id: str | None = None
    judgement: OperatorJudgement = OperatorJudgement()
    at: float = field(default_factory=time.time)

    @classmethod
    def of(cls, decision: ApprovalDecision, candidate_id: str, request_id: str, task_id: str,
           reviewer_label: ReviewLabel, kind: DecisionKind, trial_id: str | None) -> ApprovalRecord:
        """The record of a decision just taken."""
        return cls(candidate_id, request_id, task_id, decision.counts, decision.label,
                   DecidedBy(decision.by), decision.note, reviewer_label, kind, trial_id,
                   decision.judgement())

    def decided(self) -> ApprovalDecision:
        """The decision as the approver gave it (a resumed session replays it)."""
        return ApprovalDecision(counts=self.counts, label=self.label, by=self.by, note=self.note,
                                requirement=self.judgement.requirement, explicit=self.judgement.explicit,
                                quote=self.judgement.quote)
