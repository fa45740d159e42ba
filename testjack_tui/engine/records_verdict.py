"""The records of what the engine concludes about a trial, below the findings themselves: a
witness's runs, the proofs a REWARD_HACK rests on, the ambiguous witnesses it fails, who let a
witness count (the decision), the judgements waiting for the operator, the decisions and open
questions a trial's report lists, and the explainer's paragraph.

Each `to_json()` writes the keys, in the order and with the optional keys omitted, that the
reports, the summary and the exports have always shown; `from_json` reads them back (a stored
standing, summary.json). What a reviewer or operator said is kept whole: a decision keeps the
reviewer's label beside the one that stands, the note and the operator's own judgement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from .records import JsonObject, member, member_or_none
from .records_cands import DecidedBy, DecisionKind
from .records_runs import ProofKind
from .roles import OperatorJudgement, ReviewLabel

WHERE = "stored verdict"  # what an unknown word in a record read back is named after


def _label(value: object, where: str) -> ReviewLabel | None:
    return member_or_none(ReviewLabel, value, WHERE, where)


def _word(label: ReviewLabel | None) -> str:
    return str(label) if label is not None else ""


@dataclass(frozen=True)
class WitnessRun:
    """A witness's run on one world, as a finding quotes it."""

    status: str  # passed / failed / error / timed_out / not_found (failure_kinds refine it)
    message: str = ""
    run_key: str | None = None

    def to_json(self) -> JsonObject:
        return {"status": self.status, "message": self.message, "run_key": self.run_key}

    @classmethod
    def from_json(cls, data: JsonObject) -> WitnessRun:
        return cls(str(data["status"]), str(data.get("message") or ""), data.get("run_key"))


@dataclass(frozen=True)
class VerdictProof:
    """Proof that a trial games its tests (verdicts.PROOF_KINDS): what REWARD_HACK rests on."""

    kind: ProofKind
    message: str
    files: tuple[str, ...] = ()
    tests: dict[str, str] = field(default_factory=dict)  # T0 test id -> its status (harness effect)

    def to_json(self) -> JsonObject:
        return {"kind": self.kind, "message": self.message, "files": list(self.files), "tests": dict(self.tests)}

    @classmethod
    def from_json(cls, data: JsonObject) -> VerdictProof:
        kind = member(ProofKind, data.get("kind"), WHERE, "proofs.kind")
        values = (kind, str(data.get("message") or ""), tuple(data.get("files") or ()), dict(data.get("tests") or {}))
        # The varied replay's proofs were always written files first (verdicts.environment_proofs).
        return ReplayProof(*values) if list(data) == ReplayProof.KEYS else cls(*values)


@dataclass(frozen=True)
class ReplayProof(VerdictProof):
    """A refuting witness that passes on the trial only under the usual test environment
    (the varied replay, sandbox/channels.py): stored with its keys in their own order."""

    KEYS = ["kind", "files", "tests", "message"]

    def to_json(self) -> JsonObject:
        return {"kind": self.kind, "files": list(self.files), "tests": dict(self.tests), "message": self.message}


@dataclass(frozen=True)
class AmbiguousFinding:
    """An ambiguous witness a trial fails: reported as a prompt defect, never counted."""

    witness_id: str
    requirement: str
    rho: float | None
    path: str
    model_status: str

    def to_json(self) -> JsonObject:
        return {"witness_id": self.witness_id, "requirement": self.requirement, "rho": self.rho,
                "path": self.path, "model_status": self.model_status}

    @classmethod
    def from_json(cls, data: JsonObject) -> AmbiguousFinding:
        return cls(str(data["witness_id"]), str(data.get("requirement") or ""), data.get("rho"),
                   str(data.get("path") or ""), str(data.get("model_status") or ""))


@dataclass(frozen=True)
class DecisionRecord:
    """Who let a witness count (approval.decision_record): the stored approval as reports and
    exports show it; no approval stored: counted automatically."""

    by: DecidedBy = DecidedBy.AUTO
    decision: DecisionKind = DecisionKind.AUTO
    reviewer_label: ReviewLabel | None = None
    note: str = ""
    at: float | None = None
    operator: OperatorJudgement = OperatorJudgement()  # written only when the operator said something

    def to_json(self) -> JsonObject:
        said = self.operator.to_json()
        return {"by": self.by, "decision": self.decision, "reviewer_label": _word(self.reviewer_label),
                "note": self.note, "at": self.at, **({"operator": said} if said else {})}

    @classmethod
    def from_json(cls, data: JsonObject) -> DecisionRecord:
        return cls(member(DecidedBy, data.get("by"), WHERE, "decision.by"),
                   member(DecisionKind, data.get("decision"), WHERE, "decision.decision"),
                   _label(data.get("reviewer_label"), "decision.reviewer_label"), str(data.get("note") or ""),
                   data.get("at"), OperatorJudgement.from_json(data.get("operator") or {}))


class Awaiting(StrEnum):
    """A judgement that waits for the operator, as the trial's decisions list it."""

    QUESTIONABLE = "questionable-awaiting"


@dataclass(frozen=True)
class AwaitingRow:
    """A judgement left for a person (approval.awaiting_operator): a candidate queued under
    auto-approval, or one QUESTIONABLE case of a KEEP_SOME. Never dropped, never counted."""

    candidate_id: str
    task_id: str
    trial_id: str
    reviewer_label: ReviewLabel | None
    requirement: str
    case: str  # "" : the whole candidate
    label: ReviewLabel
    why: str  # the reviewer's reason (or the queued note)

    def to_json(self) -> JsonObject:
        return {"candidate_id": self.candidate_id, "task_id": self.task_id, "trial_id": self.trial_id,
                "reviewer_label": _word(self.reviewer_label), "requirement": self.requirement,
                "case": self.case, "label": self.label, "why": self.why}

    @classmethod
    def from_json(cls, data: JsonObject) -> AwaitingRow:
        return cls(str(data["candidate_id"]), str(data.get("task_id") or ""), str(data.get("trial_id") or ""),
                   _label(data.get("reviewer_label"), "awaiting_operator.reviewer_label"),
                   str(data.get("requirement") or ""), str(data.get("case") or ""),
                   member(ReviewLabel, data.get("label"), WHERE, "awaiting_operator.label"),
                   str(data.get("why") or ""))


@dataclass(frozen=True)
class TrialDecision:
    """One decision on a trial's candidates (standing.trial_decisions), the reviewer's label
    beside the one that stands, or a judgement still waiting for the operator."""

    candidate_id: str
    case: str
    reviewer: str
    reviewer_label: ReviewLabel | None
    reviewer_reason: str
    decision: DecisionKind | Awaiting
    label: ReviewLabel | None
    counts: bool
    by: DecidedBy
    note: str
    operator: OperatorJudgement
    at: str  # UTC, "YYYY-MM-DD HH:MM:SSZ"; "" while it waits

    def to_json(self) -> JsonObject:
        return {"candidate_id": self.candidate_id, "case": self.case, "reviewer": self.reviewer,
                "reviewer_label": _word(self.reviewer_label), "reviewer_reason": self.reviewer_reason,
                "decision": self.decision, "label": _word(self.label), "counts": self.counts, "by": self.by,
                "note": self.note, "operator": self.operator.to_json(), "at": self.at}

    @classmethod
    def from_json(cls, data: JsonObject) -> TrialDecision:
        word = data.get("decision")
        decision: DecisionKind | Awaiting = (Awaiting(word) if word in set(Awaiting)
                                             else member(DecisionKind, word, WHERE, "decisions.decision"))
        return cls(str(data["candidate_id"]), str(data.get("case") or ""), str(data.get("reviewer") or ""),
                   _label(data.get("reviewer_label"), "decisions.reviewer_label"),
                   str(data.get("reviewer_reason") or ""), decision,
                   _label(data.get("label"), "decisions.label"), bool(data.get("counts")),
                   member(DecidedBy, data.get("by"), WHERE, "decisions.by"), str(data.get("note") or ""),
                   OperatorJudgement.from_json(data.get("operator") or {}), str(data.get("at") or ""))


@dataclass(frozen=True)
class QuestionRef:
    """An open question about P on which a trial differs from the reference, as its report lists it."""

    candidate_id: str
    requirement: str
    said: tuple[str, ...]
    reference: str
    clarification: str
    path: str

    def to_json(self) -> JsonObject:
        return {"candidate_id": self.candidate_id, "requirement": self.requirement, "said": list(self.said),
                "reference": self.reference, "clarification": self.clarification, "path": self.path}

    @classmethod
    def from_json(cls, data: JsonObject) -> QuestionRef:
        return cls(str(data.get("candidate_id") or ""), str(data.get("requirement") or ""),
                   tuple(data.get("said") or ()), str(data.get("reference") or ""),
                   str(data.get("clarification") or ""), str(data.get("path") or ""))


@dataclass(frozen=True)
class Explanation:
    """The explainer's paragraph for one way of failing a witness (engine/failure_patterns.py),
    shared by the trials failing that way."""

    text: str
    by: str = ""  # the explainer's label
    trials: tuple[str, ...] = ()
    witness: str = ""
    failing: str = ""

    def to_json(self) -> JsonObject:
        return {"text": self.text, "by": self.by, "trials": list(self.trials), "witness": self.witness,
                "failing": self.failing}

    @classmethod
    def from_json(cls, data: JsonObject) -> Explanation:
        return cls(str(data.get("text") or ""), str(data.get("by") or ""), tuple(data.get("trials") or ()),
                   str(data.get("witness") or ""), str(data.get("failing") or ""))
