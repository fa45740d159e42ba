"""The requirements checklist: a task's requirements with T0's coverage, which audited trials
implement each, and the witnesses confirmed against it, from the session's store (the task
analysis's traceability matrix and the audits' checklists; witnesses as they are confirmed and
replayed). One rule for the TUI's requirements panel and the report's checklist.

    rows = requirements_table(store, task_id)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from testjack_tui.engine import open_questions
from testjack_tui.engine.ambiguity import _normalise
from testjack_tui.engine.verdicts import analysis_checklist
from testjack_tui.engine.runner import is_failing
from testjack_tui.engine.store import SessionStore

SAME_REQUIREMENT = 0.5  # word overlap (Jaccard) above which two wordings name one requirement


@dataclass
class RequirementRow:
    clause: str
    explicit: bool | None = None
    covered_by_t0: bool | None = None  # None: coverage not recorded
    t0_tests: list[str] = field(default_factory=list)
    witnesses: list[str] = field(default_factory=list)
    failing_trials: set[str] = field(default_factory=set)
    source: str = "analysis"  # "analysis" | "audit" | "witness"
    quote: str = ""  # the words of P the requirement rests on, when recorded
    implemented: dict[str, bool] = field(default_factory=dict)  # audited trial -> its audit's answer
    open_questions: list[str] = field(default_factory=list)  # who said P may not settle it (quoted)

    def to_dict(self) -> dict[str, Any]:
        return {"clause": self.clause, "explicit": self.explicit, "covered_by_t0": self.covered_by_t0,
                "t0_tests": list(self.t0_tests), "witnesses": list(self.witnesses),
                "failing_trials": sorted(self.failing_trials), "source": self.source, "quote": self.quote,
                "implemented": dict(self.implemented), "open_questions": list(self.open_questions)}


def same_requirement(a: str, b: str) -> bool:
    wa, wb = set(_normalise(a).split()), set(_normalise(b).split())
    if not wa or not wb:
        return False
    na, nb = _normalise(a), _normalise(b)
    return na in nb or nb in na or len(wa & wb) / len(wa | wb) >= SAME_REQUIREMENT


def requirements_table(store: SessionStore, task_id: str) -> list[RequirementRow]:
    rows: list[RequirementRow] = []

    def row_for(text: str, quote: str = "") -> RequirementRow | None:
        by_text = next((r for r in rows if same_requirement(r.clause, text)), None)
        if by_text is not None or not quote:
            return by_text
        # Two wordings of one requirement often quote the same words of P.
        q = _normalise(quote)
        return next((r for r in rows if r.quote and (_normalise(r.quote) in q or q in _normalise(r.quote))), None)

    for item in analysis_checklist(store.get_audit(task_id, "analysis")):
        if item["clause"] and row_for(item["clause"]) is None:
            rows.append(RequirementRow(item["clause"], item.get("explicit"), item.get("covered_by_t0"),
                                       item.get("t0_tests") or []))
    for audit in store.audits():
        if audit.get("task_id") != task_id or str(audit.get("trial_id") or "").startswith(open_questions.PREFIX):
            continue
        for item in audit.get("checklist") or []:
            clause = item.get("clause") or ""
            if not clause:
                continue
            row = row_for(clause)
            if row is None:
                rows.append(RequirementRow(clause, item.get("explicit"), item.get("covered_by_t0"), source="audit",
                                           quote=item.get("quote") or ""))
            elif row.covered_by_t0 is None and item.get("covered_by_t0") is not None:
                row.covered_by_t0 = item["covered_by_t0"]
            row = row or rows[-1]
            if item.get("implemented") is not None:
                row.implemented[audit["trial_id"]] = bool(item["implemented"])
    failing: dict[str, set[str]] = {}
    for run in store.witness_runs(task_id):
        if is_failing(run["status"]):
            failing.setdefault(run["witness_id"], set()).add(run["trial_id"])
    for w in store.witnesses(task_id):
        row = row_for(w["requirement"], w.get("quote") or "")
        if row is None:
            row = RequirementRow(w["requirement"], w["explicit"], source="witness")
            rows.append(row)
        row.witnesses.append(w["id"])
        row.failing_trials |= failing.get(w["id"], set())
    for q in open_questions.stored(store, task_id):  # an open question about P is a requirement row too
        row = row_for(q.get("requirement") or "")
        if row is None:
            row = RequirementRow(q.get("requirement") or "", False, source="open question")
            rows.append(row)
        row.open_questions += list(q.get("said") or [])
    return rows
