"""Open questions about P (an underspecified-prompt finding without a refuting witness).

A test that passes on the reference and fails on some trial, judged QUESTIONABLE by the
reviewer, the model or the operator, says P may not settle that point; so does the audit agent
reporting "P is silent on X". Either is recorded here with who said what, the reference's
behaviour, the trials that differ (the test replayed over every passing trial of the task, as
for rho) and a suggested clarification. It refutes nothing: the trials that differ keep their
verdict and carry the question in their own report.
"""
from __future__ import annotations

from typing import Any

from .ambiguity import suggest_clarification
from .roles import ApprovalDecision, Candidate, ReviewVerdict
from .runner import is_failing

PREFIX = "open_question:"  # key of the record in the store's audits table


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
                    reference_status: str, statuses: dict[str, str], source_trial: str | None) -> dict[str, Any]:
    """The stored open question; `statuses`: passing trial id -> the test's status there."""
    fails = sorted(t for t, s in statuses.items() if is_failing(s))
    passes = sorted(t for t, s in statuses.items() if s == "passed")
    return {"task_id": task_id, "candidate_id": candidate.id, "path": candidate.path,
            "source": candidate.source, "test_ids": list(candidate.test_ids), "requirement": requirement,
            "said": said, "by": by, "reference": reference_status, "fails_on": fails, "passes_on": passes,
            "source_trial": source_trial,
            "clarification": suggest_clarification(requirement) if requirement else
            "Say what the task expects on the point this test checks."}


def silent_record(task_id: str, trial_id: str, item: dict[str, Any]) -> dict[str, Any]:
    """The audit agent's "P is silent on X" without a test of its own."""
    what = str(item.get("on") or item.get("requirement") or "").strip()
    return {"task_id": task_id, "candidate_id": "", "path": "", "source": "", "test_ids": [],
            "requirement": what, "said": [f'audit agent: P is silent: "{str(item.get("why") or what).strip()}"'],
            "by": "audit agent", "reference": str(item.get("reference") or "").strip(), "fails_on": [],
            "passes_on": [], "source_trial": trial_id,
            "clarification": str(item.get("clarification") or "").strip() or suggest_clarification(what)}


def key_of(record: dict[str, Any]) -> str:
    if record.get("candidate_id"):
        return PREFIX + str(record["candidate_id"])
    return PREFIX + f"{record.get('source_trial')}:{record.get('requirement', '')[:80]}"


def stored(store: Any, task_id: str | None = None) -> list[dict[str, Any]]:
    """Every open question of the session (or of one task), oldest first."""
    return [{k: v for k, v in ({"task_id": a.task_id} | a.data).items() if k != "trial_id"}
            for a in store.audits() if a.key.startswith(PREFIX) and (task_id is None or a.task_id == task_id)]
