"""A trial's standing: its verdict (label, confidence, evidence, findings) with the witnesses,
reviews and decisions it rests on, decided once and stored.

    standings = decide_task(store, facts, summary, task_id, task, trials)   # TrialReport per trial

`engine/loop.py` decides a task's standings when its audit ends (every decision about its
candidates is taken inside that audit: approvals, overrules, withdrawn refutations) and stores
them (`SessionStore.put_standing`); a task whose audit starts again drops them first. The report,
the summary's readers, the export and the TUI read the stored standing; a session written before
standings were stored, or a task that never finished, is decided on read instead (not stored:
reading a session never writes to it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from testjack_tui.model import Task, Trial
from testjack_tui.safe_paths import path_part

from . import harness_effect, open_questions
from .ambiguity import rho as rho_of
from .ambiguity import witness_outcome
from .records_agent import stored_fates
from .approval import decision_record, review_key, stored_kind
from .corpus import CorpusTrial, read_corpus
from .detectors import Evidence, collect_static_evidence
from .detectors.mutation import MutationReport
from .explanations import run_message
from .failure_kinds import never_a_reading
from .failure_patterns import stored_explanation
from .no_reference import IndependentReference, independent_reference
from .records import JsonObject
from .records_agent import AgentFinding, CaseCoverage, ChecklistRow, ReviewCase, rows_of, to_json_rows
from .records_runs import Proof, StoredRun, TrialCheckRow
from .records_cands import ApprovalRecord, DecidedBy, ValidationOutcome, ValidationRecord, VerdictRecord
from .records_standing import (RunOutcome, Standing, TaskLoopState, TaskStateRow, TrialLoopState, TrialStateRow,
                               WitnessClassification, WitnessRow, WitnessRunRow)
from .runner import is_failing
from .store import SessionStore
from .summary import SessionSummary, TaskSummary, build_summary
from .tampering import with_canary_evidence
from .roles import OperatorJudgement
from .records_verdict import Awaiting, AwaitingRow, QuestionRef, TrialDecision
from .verdicts import CLEAN_UNAUDITED, FindingInput, TrialVerdict, WitnessRun, analysis_checklist, judge_trial

INDEPENDENT_BAND = 0.6  # verdicts resting on G′ never claim more confidence than this

# ambiguity.rho's answer: (rho, per model (failed, measured), the models skipping, complete)
RhoDetails = tuple[float, dict[str, tuple[int, int]], tuple[str, ...], bool]


@dataclass
class Review:
    """The reviewer's structured verdict on one candidate: overall and per test case."""

    candidate_id: str
    label: str | None
    overall: str
    cases: list[ReviewCase]  # the reviewer's own per-case records
    keep: list[str]
    coverage: list[CaseCoverage]

    def to_json(self) -> JsonObject:
        return {"candidate_id": self.candidate_id, "label": self.label, "overall": self.overall,
                "cases": to_json_rows(self.cases), "keep": list(self.keep),
                "coverage": to_json_rows(self.coverage)}

    @classmethod
    def from_json(cls, data: JsonObject) -> Review:
        return cls(data["candidate_id"], data.get("label"), data.get("overall") or "",
                   rows_of(ReviewCase.from_json, data.get("cases"), "cases"), list(data.get("keep") or []),
                   rows_of(CaseCoverage.from_json, data.get("coverage"), "coverage"))


@dataclass
class AgentAudit:
    """What the audit agent said about a trial (explanations; only executed witnesses count)."""

    findings: list[AgentFinding]  # the agent's structured findings, as it wrote them
    nothing_found: bool | None
    notes: str

    def to_json(self) -> JsonObject:
        return {"findings": to_json_rows(self.findings), "nothing_found": self.nothing_found, "notes": self.notes}

    @classmethod
    def from_json(cls, data: JsonObject) -> AgentAudit:
        return cls(rows_of(AgentFinding.from_json, data.get("findings"), "findings"), data.get("nothing_found"),
                   data.get("notes") or "")


@dataclass
class TrialReport(TrialVerdict):
    """A trial's standing: its verdict with what the report adds: the summary's state, the
    mutation evidence, which reference the verdict rests on, the audit agent's findings and the
    reviewer's verdicts."""

    state: str = ""
    mutation: MutationReport | None = None
    reference: str = "benchmark"  # "benchmark" | "independent" (G′, see mark_independent)
    agent_audit: AgentAudit | None = None
    reviews: list[Review] = field(default_factory=list)
    # Every decision on this trial's candidates (approved / overruled / judged / auto /
    # questionable-awaiting), the reviewer's label beside the one that stands.
    decisions: list[TrialDecision] = field(default_factory=list)
    # Open questions about P on which this trial differs from the reference (refuting nothing).
    open_questions: list[QuestionRef] = field(default_factory=list)
    # Why this trial's audit measured nothing (no candidate could run on the reference), or "".
    audit_failed: str = ""

    @classmethod
    def of(cls, verdict: TrialVerdict, **extra: Any) -> TrialReport:
        return cls(**{name: getattr(verdict, name) for name in TrialVerdict.__dataclass_fields__}, **extra)

    def to_json(self) -> JsonObject:
        """The trial's report.json."""
        data = self.to_dict()
        data["agent_audit"] = None if self.agent_audit is None else self.agent_audit.to_json()
        data["reviews"] = [r.to_json() for r in self.reviews]
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> TrialReport:
        """A standing read back from the store (what `to_json` wrote)."""
        audit = data.get("agent_audit")
        return cls.of(TrialVerdict.from_json(data), state=str(data.get("state") or ""),
                   mutation=MutationReport.from_dict(data.get("mutation")),
                   reference=str(data.get("reference") or "benchmark"),
                   agent_audit=None if audit is None else AgentAudit.from_json(audit),
                   reviews=[Review.from_json(r) for r in data.get("reviews") or []],
                   decisions=[TrialDecision.from_json(d) for d in data.get("decisions") or []],
                   open_questions=[QuestionRef.from_json(q) for q in data.get("open_questions") or []],
                   audit_failed=str(data.get("audit_failed") or ""))


@dataclass
class SessionFacts:
    """What every trial's standing reads from the session's tables, gathered once."""

    witnesses: dict[str, WitnessRow]
    canonical: dict[str, str]  # witness id -> its first copy (as stored: dedup.group)
    runs: dict[str, StoredRun]  # the runs a finding quotes, by key
    reference_runs: dict[tuple[str, str], ValidationRecord]  # (task, candidate) -> its validation
    runs_of: dict[str, dict[str, WitnessRunRow]]  # trial -> witness -> its latest run
    by_witness: dict[str, dict[str, WitnessRunRow]]  # the same, witness first
    approvals: list[ApprovalRecord]
    verdicts: dict[str, VerdictRecord]
    trial_checks: dict[str, TrialCheckRow]
    trial_states: dict[str, TrialStateRow]
    task_states: dict[str, TaskStateRow]
    proofs: dict[str, list[Proof]]
    passes_both: dict[str, int]
    t0_runs: dict[str, str]
    reviews: dict[str, list[Review]]

    @property
    def approval_of(self) -> dict[str, ApprovalRecord]:
        return {a.candidate_id: a for a in self.approvals}


def gather(store: SessionStore, task_id: str | None = None) -> SessionFacts:
    """The facts of the whole session, or of one task's witnesses, runs and validations (a task
    whose audit ends reads its own, not every task's)."""
    stored_witnesses = store.witnesses(task_id)
    wruns = store.witness_runs(task_id)
    validations = store.validations(task_id)
    # Only the runs a finding quotes (a session holds one per trial and witness, with output).
    runs = store.runs_by_key([wr.run_key for wr in wruns if wr.run_key]
                             + [v.reference_run for v in validations if v.reference_run])
    reference_runs: dict[tuple[str, str], ValidationRecord] = {}  # the first, as validations are in time order
    for v in validations:
        if v.reference_run:
            reference_runs.setdefault((v.task_id, v.candidate_id), v)
    passes_both: dict[str, int] = {}
    for v in validations:
        if v.outcome == ValidationOutcome.PASSES_BOTH and v.trial_id:
            passes_both[v.trial_id] = passes_both.get(v.trial_id, 0) + 1
    # T0's run on each trial's world (no candidate files), for claims that T0 passes there.
    # The first such run is the reproduction check; later ones (harness reverted, mutants) are not.
    t0_runs: dict[str, str] = {}
    for r in store.run_headers():
        if r.trial_id and "/model/" in r.world and not r.candidate_ids:
            t0_runs.setdefault(r.trial_id, r.key)
    runs_of: dict[str, dict[str, WitnessRunRow]] = {}
    by_witness: dict[str, dict[str, WitnessRunRow]] = {}
    for wr in wruns:
        runs_of.setdefault(wr.trial_id, {})[wr.witness_id] = wr
        by_witness.setdefault(wr.witness_id, {})[wr.trial_id] = wr
    verdicts = {v.candidate_id: v for v in store.verdicts()}
    return SessionFacts(
        witnesses={w.id: w for w in stored_witnesses}, canonical={w.id: w.first_copy for w in stored_witnesses}, runs=runs,
        reference_runs=reference_runs, runs_of=runs_of, by_witness=by_witness, approvals=store.approvals(),
        verdicts=verdicts, trial_checks=store.trial_checks(), trial_states=store.trial_states(),
        task_states=store.task_states(), proofs=store.proofs(), passes_both=passes_both, t0_runs=t0_runs,
        reviews=structured_reviews(store, verdicts))


def rho_details(task_sum: TaskSummary, facts: SessionFacts, models: dict[str, str]) -> dict[str, RhoDetails]:
    """rho details per witness of the task, over its passing corpus."""
    out: dict[str, RhoDetails] = {}
    for ws in task_sum.witnesses:
        outcomes = {tid: witness_outcome([r.status]) for tid, r in facts.by_witness.get(ws.id, {}).items()
                    if tid in models}
        out[ws.id] = rho_of(outcomes, models)
    return out


def decide_task(store: SessionStore, facts: SessionFacts, summary: SessionSummary, task_id: str,
                task: Task | None, trials: dict[str, Trial]) -> list[TrialReport]:
    """The standing of every officially passing trial of a task: the one place a trial's verdict
    is decided. `trials`: the task's trials with their patches (a trial missing from it is judged
    from the session's corpus alone)."""
    corpus = read_corpus(store.all_meta(), store.path)
    task_sum = summary.tasks[task_id]
    models = corpus.passing_models(task_id)
    details = rho_details(task_sum, facts, models)
    analysis = store.get_audit(task_id, "analysis") or {}
    questions = open_questions.stored(store, task_id)
    approvals = facts.approval_of
    infos: dict[str, CorpusTrial] = {}
    for t in corpus.tasks.get(task_id, []):
        infos.setdefault(t.id, t)
    out = []
    for trial_id, entry in task_sum.trials.items():
        info = infos.get(trial_id)
        trial = trials.get(trial_id) or Trial(trial_id, task_id, (info.agent if info else None) or "?",
                                              (info.model if info else None) or "?", "", True)
        evidence = _stored_evidence(store, trial_id)
        if evidence is None and task is not None and trial.patch:
            evidence = collect_static_evidence(task, trial)
        if evidence is None and facts.proofs.get(trial_id):
            evidence = Evidence(task_id, trial_id)
        if evidence is not None:
            evidence = Evidence.from_dict(harness_effect.attach(
                evidence.to_dict(), facts.proofs.get(trial_id, [])))
        findings: list[FindingInput] = []
        ambiguous: list[FindingInput] = []
        executed_by = (store.get_evidence(trial_id) or {}).get("executed_by_witness") or {}
        counted: set[str] = set()
        for wid, wr in sorted(facts.runs_of.get(trial_id, {}).items()):
            w = facts.witnesses.get(wid)
            if w is None or not is_failing(wr.status) or facts.canonical.get(wid, wid) in counted:
                continue  # one copy per witness
            counted.add(facts.canonical.get(wid, wid))
            ref_run = facts.reference_runs.get((w.task_id, w.id))  # its passing run on the reference
            w_rho, w_per_model, w_skipping, _ = details.get(wid, (None, {}, (), False))
            verdict = facts.verdicts.get(wid)
            f = FindingInput(
                witness_id=wid, path=w.path, source=w.source, requirement=w.requirement,
                explicit=w.explicit, quote=w.quote or "", test_ids=w.test_ids,
                reference=WitnessRun(ref_run.reference if ref_run else "passed",
                                     _message(facts.runs.get(ref_run.reference_run or "") if ref_run else None, w),
                                     ref_run.reference_run if ref_run else None),
                model=WitnessRun(str(wr.status), _message(facts.runs.get(wr.run_key or ""), w), wr.run_key),
                klass=_klass(w), rho=w.rho if w.rho is not None else w_rho,
                models_skipping=len(w_skipping), models_measured=len(w_per_model),
                source_trial=w.source_trial, reviewer_reason=verdict.reason if verdict else "",
                replays=tuple((tid, str(r.status), r.run_key)
                              for tid, r in sorted(facts.by_witness.get(wid, {}).items()) if tid in models),
                approved_by=approvals[wid].by if wid in approvals else DecidedBy.AUTO,
                executed=frozenset((str(p), int(n)) for p, n in
                                   (executed_by.get(wid) or []) if isinstance(n, int)))
            # A hang, kill or crash refutes whatever the witness's class (failure_kinds).
            (ambiguous if w.classification == WitnessClassification.AMBIGUOUS and not never_a_reading(wr.status)
             else findings).append(f)
        tc = facts.trial_checks.get(trial_id)
        reproduced = None if tc is None else tc.reproduced
        audit = store.get_audit(task_id, trial_id) or {}
        agent_findings = rows_of(AgentFinding.from_json, audit.get("findings"), "findings")
        for f in findings:
            mine = _agent_finding(f.witness_id, agent_findings)
            if mine is not None:
                f.agent = mine
        for f in findings:  # the explainer's paragraph for the way it fails (failure_patterns.py)
            f.explained = stored_explanation(store, f.witness_id, f.model.status, f.model.message)
        passed = sum(1 for r in facts.runs_of.get(trial_id, {}).values() if r.status == RunOutcome.PASSED)
        void = _audit_failed(facts.trial_states.get(trial_id), facts.task_states.get(task_id))
        judged = judge_trial(
            trial, findings=findings if entry.state == "refuted" else [],
            ambiguous=ambiguous, evidence=evidence, audited=entry.audited,
            reproduced=reproduced,
            clean_candidates=facts.passes_both.get(trial_id, 0) + _held(analysis),
            witnesses_passed=passed,
            prompt=task.instruction if task is not None else "", t0_run=facts.t0_runs.get(trial_id),
            vacuous=list(task_sum.vacuous),
            audit_failed=void,
            workdir=task.environment.workdir if task is not None else "/app",
            framework=task.tests.framework if task is not None else None,
            checklist=rows_of(ChecklistRow.from_json, audit.get("checklist"), "checklist")
            + analysis_checklist(analysis))
        if entry.state == "excluded":
            judged.justification = "Excluded: " + (entry.reason or "the task is not well-formed") \
                + ". " + judged.justification
        judged.findings = [replace(finding, decision=decision_record(approvals.get(finding.witness_id)))
                           for finding in judged.findings]
        report = TrialReport.of(
            judged, state=entry.state, audit_failed=void if judged.label == CLEAN_UNAUDITED else "",
            mutation=MutationReport.from_dict((store.get_evidence(trial_id) or {}).get("mutation")),
            agent_audit=AgentAudit(agent_findings, audit.get("nothing_found"), audit.get("notes", ""))
            if audit else None,
            reviews=facts.reviews.get(trial_id, []),
            decisions=trial_decisions(trial_id, facts.approvals, facts.verdicts, summary.awaiting_operator),
            open_questions=[QuestionRef(q.candidate_id, q.requirement, tuple(q.said), q.reference, q.clarification,
                                        q.path) for q in questions if trial_id in q.fails_on])
        mark_independent(report, independent_reference(store, task_id), store.directory)
        out.append(report)
    return out


def record_standings(store: SessionStore, task: Task, trials: list[Trial]) -> None:
    """Decide and store the standing of every passing trial of a task whose audit has ended."""
    summary = build_summary(store)
    if task.id not in summary.tasks:
        return
    by_id = {t.id: t for t in trials}
    for report in decide_task(store, gather(store, task.id), summary, task.id, task, by_id):
        store.put_standing(Standing(report.trial_id, report.task_id, report.label, report.confidence,
                                    report.to_json()))


def stored_standings(store: SessionStore, task_id: str, expected: list[str]) -> list[TrialReport] | None:
    """The task's stored standings in the order of `expected` (its trials), or None when any is
    missing (a session from before standings were stored, or a task whose audit did not end)."""
    stored = store.standings(task_id)
    if any(tid not in stored for tid in expected):
        return None
    return [TrialReport.from_json(stored[tid].report) for tid in expected]


def mark_independent(trial: TrialReport, record: IndependentReference | None, folder: Path) -> None:
    """A verdict on a task audited against an independent implementation G′ (no reference
    solution: `independent`, no_reference validated one) says so, and its confidence is scaled
    into its own, lower band."""
    trial.reference = "benchmark"
    if record is None or not record.ok:
        return
    trial.reference = "independent"
    trial.confidence = round(trial.confidence * INDEPENDENT_BAND, 2)
    trial.justification = (trial.justification + " Validated against an independent implementation "
                           "G′ written from the prompt, not the benchmark's reference solution (the task "
                           "has none, or the session ignored it): a weaker oracle. G′: "
                           f"{Path(folder) / 'independent-references' / (path_part(trial.task_id) + '.patch')}.")


def trial_decisions(trial_id: str, approvals: list[ApprovalRecord], verdicts: dict[str, VerdictRecord],
                    awaiting: list[AwaitingRow]) -> list[TrialDecision]:
    """Every decision on a trial's candidates, oldest first: who decided, the reviewer's label
    beside the label that stands, the operator's own judgement; then what still waits."""
    out = []
    for a in approvals:
        verdict = verdicts.get(a.candidate_id)
        if (a.trial_id or (verdict.trial_id if verdict else None)) != trial_id or a.by == DecidedBy.QUEUED:
            continue
        out.append(TrialDecision(a.candidate_id, "", verdict.reviewer if verdict else "",
                                 a.reviewer_label or (verdict.label if verdict else None),
                                 verdict.reason if verdict else "", stored_kind(a), a.label, a.counts, a.by,
                                 a.note, a.judgement, iso(a.at)))
    for w in awaiting:
        if w.trial_id == trial_id:
            out.append(TrialDecision(w.candidate_id, w.case, "", w.reviewer_label, w.why, Awaiting.QUESTIONABLE,
                                     w.label, False, DecidedBy.QUEUED, "waits for the operator",
                                     OperatorJudgement(), ""))
    return out


def iso(at: float | None) -> str:
    if not at:
        return ""
    import datetime

    return datetime.datetime.fromtimestamp(float(at), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def structured_reviews(store: SessionStore, verdicts: dict[str, VerdictRecord]) -> dict[str, list[Review]]:
    """trial id -> the reviewer's structured verdicts (overall, per case) on its candidates."""
    out: dict[str, list[Review]] = {}
    for cid, v in verdicts.items():
        data = store.get_audit(v.task_id or "", review_key(cid))
        if not data:
            continue
        out.setdefault(v.trial_id or "analysis", []).append(Review(
            candidate_id=cid, label=v.label, overall=data.get("overall", ""),
            cases=rows_of(ReviewCase.from_json, data.get("cases"), "cases"), keep=data.get("keep") or [],
            coverage=rows_of(CaseCoverage.from_json, data.get("coverage"), "coverage")))
    return out


def _message(run: StoredRun | None, witness: WitnessRow) -> str:
    return run_message(run, witness.path, witness.test_ids)


def _held(analysis: JsonObject | None) -> int:
    """The task analysis's validated tests that held on every trial (each passed on both worlds
    of every trial, so a clean trial counts them among its validated candidates)."""
    return sum(1 for row in stored_fates(analysis) if row.held)


def _audit_failed(trial_state: TrialStateRow | None, task_state: TaskStateRow | None) -> str:
    """Why a trial's (or its task's) audit measured nothing (failure_kinds.AUDIT_FAILED), or ""."""
    if trial_state is not None and trial_state.state == TrialLoopState.AUDIT_FAILED:
        return trial_state.by
    if task_state is not None and task_state.state == TaskLoopState.AUDIT_FAILED:
        return task_state.reason
    return ""


def _chain(candidate_id: str) -> str:
    """A candidate's chain (its repairs and kept subsets share it): the id without .vN / ~rN."""
    return re.sub(r"(\.v\d+)?(~r?\d+)*$", "", candidate_id or "")


def _agent_finding(witness_id: str, agent_findings: list[AgentFinding]) -> AgentFinding | None:
    for item in agent_findings:
        if item.candidate_id and _chain(item.candidate_id) == _chain(witness_id):
            return item
    return None


def _stored_evidence(store: SessionStore, trial_id: str) -> Evidence | None:
    data = with_canary_evidence(store, trial_id, store.get_evidence(trial_id))
    return Evidence.from_dict(data) if data else None


def _klass(w: WitnessRow) -> str:
    if w.classification == WitnessClassification.AMBIGUOUS:
        return "ambiguous"
    return "explicit" if w.explicit else "implicit_necessary"
