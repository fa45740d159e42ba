"""The reviewer gate and the approvers deciding which verdicts count.

Every oracle-validated candidate gets a reviewer verdict; an Approver then decides whether it
becomes a witness. AutoApprover: a "valid" verdict counts. QueueApprover: the operator decides;
requests are announced as ApprovalRequested events and wait on futures answered through
`AuditSession.answer`, so a pending approval blocks nothing but the work that needs it.
"""
from __future__ import annotations

import asyncio
import dataclasses
import threading
from dataclasses import dataclass
from typing import Callable

from .records_standing import WitnessClassification, WitnessRow
from .events import ApprovalAnswered, ApprovalRequested, ReviewerVerdictEvent
from .records_agent import CaseCoverage, ReviewCase, rows_of, to_json_rows
from .records_cands import ApprovalRecord, DecidedBy, DecisionKind
from .records_verdict import AwaitingRow, DecisionRecord
from .slots import resume_work, waiting_for_person
from .roles import (ApprovalDecision, ApprovalRequest, Approver, AuditContext, Candidate, OperatorVerdict,
                    ReviewLabel, ReviewVerdict, needs_operator, questionable_cases)
from .store import SessionStore

from .env import EngineEnv

QUEUED_NOTE = "questionable or HUMAN_REVIEW: left for the operator, not counted automatically"


class AutoApprover:
    """Counts what the reviewer labelled valid (and did not drop). QUESTIONABLE and HUMAN_REVIEW
    verdicts go to the operator's queue even so: answered there when an operator is present
    (`queue`), otherwise recorded as queued (by "queued") and not counted."""

    def __init__(self, queue: "QueueApprover | None" = None):
        self.queue = queue

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        verdict = request.verdict
        if self.queue is not None and questionable_cases(verdict.cases):
            return await self.queue.decide(request)  # someone is there: the whole candidate is theirs
        if needs_operator(verdict):
            if self.queue is not None:
                return await self.queue.decide(request)
            return ApprovalDecision(counts=False, label=verdict.label, by=DecidedBy.QUEUED, note=QUEUED_NOTE)
        counts = verdict.label == ReviewLabel.VALID and verdict.overall != "DROP_ALL"
        return ApprovalDecision(counts=counts, label=verdict.label, by=DecidedBy.AUTO)


def decision_kind(reviewer_label: str, decision: ApprovalDecision, reviewer_is_operator: bool = False) -> DecisionKind:
    """How a decision relates to the reviewer: "auto" (nobody asked), "judged" (the operator was
    the reviewer), "approved" (the operator let the reviewer's verdict stand) or "overruled"
    (the operator changed whether the candidate counts)."""
    if decision.by != DecidedBy.OPERATOR:
        return DecisionKind.AUTO
    if reviewer_is_operator:
        return DecisionKind.JUDGED
    return DecisionKind.APPROVED if decision.counts == (reviewer_label == ReviewLabel.VALID) else DecisionKind.OVERRULED


def stored_kind(approval: ApprovalRecord) -> DecisionKind:
    """The decision's kind as stored; a row from before kinds were stored: approved when a person
    decided, else auto."""
    return approval.decision or (DecisionKind.APPROVED if approval.by == DecidedBy.OPERATOR else DecisionKind.AUTO)


def decision_record(approval: ApprovalRecord | None) -> DecisionRecord:
    """The stored approval as reports and exports show it (no decision stored: auto)."""
    if approval is None:
        return DecisionRecord()
    return DecisionRecord(approval.by, stored_kind(approval), approval.reviewer_label, approval.note, approval.at,
                          approval.judgement)


class TableApprover:
    """Answers every approval from a table written in advance (`audit --verdicts FILE`), so an
    operator-mode audit runs in CI without a terminal. A candidate is looked up by its id, its
    repo path, its file name or its origin; one the table does not name does not count. The
    entry's requirement / explicit / quote travel with the decision (`ApprovalDecision`)."""

    def __init__(self, table: dict[str, OperatorVerdict], source: str):
        self.table = dict(table)
        self.source = source

    def lookup(self, c: Candidate) -> OperatorVerdict | None:
        for key in (c.id, c.path, c.path.rsplit("/", 1)[-1], c.origin, c.origin.rsplit("/", 1)[-1],
                    c.parent or ""):
            if key and key in self.table:
                return self.table[key]
        return None

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        found = self.lookup(request.candidate)
        if found is None:
            return ApprovalDecision(counts=False, label=ReviewLabel.INVALID, by=DecidedBy.OPERATOR,
                                    note=f"not named in {self.source}: does not count")
        return operator_verdict_decision(found, f"from {self.source}")


def operator_verdict_decision(v: OperatorVerdict, where: str) -> ApprovalDecision:
    """The decision an operator's whole verdict makes: valid counts, the rest does not."""
    return ApprovalDecision(counts=v.label == ReviewLabel.VALID, label=v.label, by=DecidedBy.OPERATOR,
                            note=(v.note + " " if v.note else "") + f"({where})",
                            requirement=v.requirement, explicit=v.explicit, quote=v.quote)


def standing_requirement(verdict: ReviewVerdict, decision: ApprovalDecision, fallback: str = "") -> tuple[str, bool, str]:
    """(requirement, explicit, quote) a witness carries: what the operator said where they said
    it (their judgement decides), the reviewer's otherwise. Whether an explicit quote is P's
    words is checked where witnesses are classified (ambiguity.quote_in_prompt)."""
    requirement = decision.requirement or verdict.requirement or fallback
    if decision.explicit is None:
        return requirement, verdict.explicit, decision.quote or verdict.quote
    return requirement, decision.explicit, decision.quote if decision.explicit or decision.quote else ""


def awaiting_operator(store: SessionStore) -> list[AwaitingRow]:
    """Every judgement left for a person: candidates queued under auto-approval (QUESTIONABLE,
    HUMAN_REVIEW) and, of a KEEP_SOME the engine applied, each case the reviewer called
    QUESTIONABLE (the kept cases count; these wait). Oldest first; none is ever dropped."""
    out: list[AwaitingRow] = []
    verdicts = {v.candidate_id: v for v in store.verdicts()}
    for a in store.approvals():
        cid = a.candidate_id
        verdict = verdicts.get(cid)
        base = AwaitingRow(cid, a.task_id, a.trial_id or (verdict.trial_id if verdict else None) or "",
                           a.reviewer_label or (verdict.label if verdict else None),
                           verdict.requirement if verdict else "", "", a.label, "")
        if a.by == DecidedBy.QUEUED:
            out.append(dataclasses.replace(base, why=(verdict.reason if verdict else "") or a.note))
            continue
        if a.by == DecidedBy.OPERATOR:
            continue  # a person decided it
        review = store.get_audit(a.task_id, review_key(cid)) or {}
        if review.get("overall") != "KEEP_SOME":
            continue
        cases = rows_of(ReviewCase.from_json, review.get("cases"), "cases")
        for test_id in questionable_cases(cases):
            case = next(c for c in cases if c.test_id == test_id)
            out.append(dataclasses.replace(base, case=test_id, label=ReviewLabel.QUESTIONABLE,
                                           why=case.reason or ""))
    return out


def judged_valid_but_ambiguous(store: SessionStore) -> list[WitnessRow]:
    """Witnesses the operator judged valid that the ambiguity rule turned into prompt findings
    (implicit requirement, ρ > 1/2): the run says why, once, and how to say otherwise."""
    approvals = {a.candidate_id: a for a in store.approvals()}
    out = []
    for w in store.witnesses():
        a = approvals.get(w.id)
        if w.classification == WitnessClassification.AMBIGUOUS and a is not None and a.by == DecidedBy.OPERATOR and a.counts:
            out.append(w)
    return out


def request_id_for(candidate_id: str) -> str:
    return f"approval:{candidate_id}"


class QueueApprover:
    """Asks the operator; answers arrive from any thread through `answer()`."""

    def __init__(self, emit: Callable[[object], None]):
        self.emit = emit
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalDecision], asyncio.AbstractEventLoop]] = {}
        self._early: dict[str, ApprovalDecision] = {}  # answers that arrived before the request

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        rid = request_id_for(request.candidate.id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ApprovalDecision] = loop.create_future()
        with self._lock:
            early = self._early.pop(rid, None)
            if early is None:
                self._pending[rid] = (request, future, loop)
        if early is not None:
            return early
        self.emit(ApprovalRequested(request.session_id, request_id=rid, task_id=request.task_id,
                                    trial_id=request.trial_id, candidate_id=request.candidate.id,
                                    label=request.verdict.label, reason=request.verdict.reason))
        try:
            # The task's work slot is free meanwhile; `approve` takes it again once the
            # decision is stored and announced.
            async with waiting_for_person(resume=False):
                return await future
        finally:
            with self._lock:
                self._pending.pop(rid, None)

    def pending(self) -> list[tuple[str, ApprovalRequest]]:
        with self._lock:
            return [(rid, entry[0]) for rid, entry in self._pending.items()]

    def request(self, request_id: str) -> ApprovalRequest | None:
        with self._lock:
            entry = self._pending.get(request_id)
        return entry[0] if entry else None

    def answer(self, request_id: str, decision: ApprovalDecision) -> bool:
        """Resolve a pending request (thread-safe). False if it is not pending now: the decision
        is then kept and answers the request when the engine makes it (a resumed session shows
        the decisions it waited for before the engine, held at a step gate, asks again)."""
        with self._lock:
            entry = self._pending.get(request_id)
            if entry is None:
                self._early[request_id] = decision
        if entry is None:
            return False
        _, future, loop = entry

        def resolve() -> None:
            if not future.done():
                future.set_result(decision)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            resolve()
        else:
            loop.call_soon_threadsafe(resolve)
        return True


@dataclass
class Judgement:
    verdict: ReviewVerdict
    decision: ApprovalDecision
    fresh: bool  # False: both came from the store


async def review(env: EngineEnv, ctx: AuditContext, candidate: Candidate, task_id: str,
                 trial_id: str | None) -> tuple[ReviewVerdict, bool]:
    """The reviewer's verdict on a candidate (stored; a resumed session never asks twice)."""
    row = env.store.get_verdict(candidate.id)
    if row is not None:
        structured = env.store.get_audit(task_id, review_key(candidate.id)) or {}
        verdict = ReviewVerdict(candidate_id=candidate.id, label=row.label,
                                requirement=row.requirement or candidate.requirement,
                                explicit=row.explicit, quote=row.quote, reason=row.reason, reviewer=row.reviewer,
                                overall=structured.get("overall", ""),
                                cases=tuple(rows_of(ReviewCase.from_json, structured.get("cases"), "cases")),
                                coverage=tuple(rows_of(CaseCoverage.from_json, structured.get("coverage"),
                                                       "coverage")),
                                keep=tuple(structured.get("keep") or ()))
        fresh = False
    else:
        env.budget.check_round()
        verdict = await env.roles.reviewer.review(ctx, candidate)
        verdict = dataclasses.replace(verdict, candidate_id=candidate.id,
                                      requirement=verdict.requirement or candidate.requirement,
                                      reviewer=verdict.reviewer or env.roles.reviewer.label)
        if verdict.label not in set(ReviewLabel):
            verdict = dataclasses.replace(verdict, label=ReviewLabel.QUESTIONABLE,
                                          reason=f"unknown label {verdict.label!r}: {verdict.reason}")
        else:  # an agent's reply gives the label as text
            verdict = dataclasses.replace(verdict, label=ReviewLabel(verdict.label))
        env.store.put_verdict(verdict, task_id, trial_id)
        env.store.put_audit(task_id, review_key(candidate.id), {
            "candidate_id": candidate.id, "trial_id": trial_id, "overall": verdict.overall,
            "cases": to_json_rows(verdict.cases), "coverage": to_json_rows(verdict.coverage),
            "keep": list(verdict.keep)})
        fresh = True
    env.emit(ReviewerVerdictEvent(env.session_id, task_id=task_id, trial_id=trial_id,
                                  candidate_id=candidate.id, label=verdict.label,
                                  requirement=verdict.requirement, explicit=verdict.explicit,
                                  reason=verdict.reason))
    return verdict, fresh


def approver_for(env: EngineEnv, task_id: str) -> Approver:
    """The session's approver, except that a verdict resting on an independent implementation G′
    (no-reference mode) goes to the operator whenever one is at the TUI, auto-approval or not."""
    operator = env.operator_approver
    if operator is not None and task_id in env.independent_tasks:
        return operator
    return env.approver


def review_key(candidate_id: str) -> str:
    """Where a verdict's structured part (cases, coverage, overall) is stored (audits table)."""
    return f"review:{candidate_id}"


async def approve(env: EngineEnv, candidate: Candidate, verdict: ReviewVerdict, task_id: str,
                  trial_id: str | None, reference_status: str, model_status: str) -> ApprovalDecision:
    rid = request_id_for(candidate.id)
    row = env.store.get_approval(candidate.id)
    judges = getattr(env.roles.reviewer, "defers_to_approver", False)
    if row is not None:
        decision = row.decided()
        kind = row.decision or decision_kind(verdict.label, decision, judges)
    else:
        request = ApprovalRequest(session_id=env.session_id, task_id=task_id, trial_id=trial_id,
                                  candidate=candidate, verdict=verdict,
                                  reference_status=reference_status, model_status=model_status)
        decision = await approver_for(env, task_id).decide(request)
        kind = decision_kind(verdict.label, decision, judges)
        env.store.put_approval(ApprovalRecord.of(decision, candidate.id, rid, task_id, verdict.label,
                                                 kind, trial_id))
    env.emit(ApprovalAnswered(env.session_id, request_id=rid, candidate_id=candidate.id,
                              counts=decision.counts, label=decision.label, by=decision.by,
                              reviewer_label=verdict.label, decision=kind, note=decision.note,
                              operator=decision.judgement().to_json()))
    await resume_work()  # after a wait for the operator: back to work when a slot is free
    return decision


async def judge(env: EngineEnv, ctx: AuditContext, candidate: Candidate, task_id: str, trial_id: str | None,
                reference_status: str, model_status: str) -> Judgement:
    """Reviewer verdict, the approver's decision, then a step-mode pause when nobody decided.

    The decision comes straight after the verdict: in step mode the operator reaches a pending
    verdict with one key, and a decision the operator gave is itself the step (no second gate).
    A verdict decided automatically stops at the gate so a stepping operator sees it."""
    verdict, fresh = await review(env, ctx, candidate, task_id, trial_id)
    decision = await approve(env, candidate, verdict, task_id, trial_id, reference_status, model_status)
    if fresh and decision.by != "operator":
        await env.control.gate(f"after the verdict on {candidate.id}", task_id)
    return Judgement(verdict, decision, fresh)
