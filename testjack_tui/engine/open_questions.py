"""Open questions about P (an underspecified-prompt finding without a refuting witness).

A test that passes on the reference and fails on some trial, judged QUESTIONABLE by the
reviewer, the model or the operator, says P may not settle that point; so does the audit agent
reporting "P is silent on X". Either is recorded here with who said what, the reference's
behaviour, the trials that differ (the test replayed over every passing trial of the task, as
for rho) and a suggested clarification. It refutes nothing: the trials that differ keep their
verdict and carry the question in their own report.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .ambiguity import suggest_clarification
from .records import FlatRecord, JsonObject
from .records_agent import PromptSilent
from .roles import ApprovalDecision, Candidate, ReviewVerdict
from .runner import is_failing
from .store import SessionStore

PREFIX = "open_question:"  # key of the record in the store's audits table


@dataclass(frozen=True)
class OpenQuestion(FlatRecord):
    """An open question about P, as stored (the audits table, under PREFIX): who said what, the
    test that shows it (none for a bare "P is silent"), the reference's behaviour, the passing
    trials where the test fails and where it passes, and a suggested clarification."""

    task_id: str
    requirement: str
    said: list[str]
    by: str  # "operator", "reviewer" or "audit agent"
    clarification: str
    source_trial: str | None = None
    candidate_id: str = ""
    path: str = ""
    source: str = ""
    test_ids: list[str] = field(default_factory=list)
    reference: str = ""
    fails_on: list[str] = field(default_factory=list)
    passes_on: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: JsonObject) -> OpenQuestion:
        """A stored question (keys this version does not know, the audits row's own, left out)."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def key(self) -> str:
        """Where it is stored: one per candidate, else per trial and requirement."""
        if self.candidate_id:
            return PREFIX + self.candidate_id
        return PREFIX + f"{self.source_trial}:{self.requirement[:80]}"


def is_open_question(verdict: ReviewVerdict, decision: ApprovalDecision) -> bool:
    """The label that stands, or the reviewer's when no person decided yet, is questionable."""
    return decision.label == "questionable" or (decision.by != "operator" and verdict.label == "questionable")


def said_by(verdict: ReviewVerdict, decision: ApprovalDecision) -> list[str]:
    """Who said what, quoted: the reviewer's label and reason, then the operator's, never merged."""
    out = []
    if verdict.reviewer != "operator" or not decision.by == "operator":
        out.append(f'reviewer ({verdict.reviewer or "?"}): {verdict.label}: "{verdict.reason.strip()}"')
    if decision.by == "operator":
        note = decision.note.strip()
        out.append(f'operator: {decision.label}' + (f': "{note}"' if note else ""))
    return out


def question_record(task_id: str, candidate: Candidate, requirement: str, said: list[str], by: str,
                    reference_status: str, statuses: dict[str, str], source_trial: str | None) -> OpenQuestion:
    """The open question a test shows; `statuses`: passing trial id -> the test's status there."""
    return OpenQuestion(
        task_id=task_id, candidate_id=candidate.id, path=candidate.path, source=candidate.source,
        test_ids=list(candidate.test_ids), requirement=requirement, said=said, by=by, reference=reference_status,
        fails_on=sorted(t for t, s in statuses.items() if is_failing(s)),
        passes_on=sorted(t for t, s in statuses.items() if s == "passed"), source_trial=source_trial,
        clarification=suggest_clarification(requirement) if requirement else
        "Say what the task expects on the point this test checks.")


def silent_record(task_id: str, trial_id: str, item: PromptSilent) -> OpenQuestion:
    """The audit agent's "P is silent on X" (its reply's item) without a test of its own."""
    what = item.on.strip()
    return OpenQuestion(
        task_id=task_id, requirement=what, said=[f'audit agent: P is silent: "{(item.why or what).strip()}"'],
        by="audit agent", reference=(item.reference or "").strip(), source_trial=trial_id,
        clarification=(item.clarification or "").strip() or suggest_clarification(what))


def stored(store: SessionStore, task_id: str | None = None) -> list[OpenQuestion]:
    """Every open question of the session (or of one task), oldest first."""
    return [OpenQuestion.from_json({"task_id": a.task_id} | a.data) for a in store.audits()
            if a.key.startswith(PREFIX) and (task_id is None or a.task_id == task_id)]
