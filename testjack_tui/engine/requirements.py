"""The requirements checklist: one row per requirement of a task, with T0's coverage, which
audited trials implement it, the witnesses confirmed against it and the task-analysis tests that
held on every trial, from the session's store. One rule for the TUI's requirements panel and the
report's checklist.

    rows = requirements_table(store, task_id)

Each source states requirements in its own words: the task analysis's traceability matrix, each
audit's checklist and findings, each witness (the reviewer's requirement), each analysis test and
each open question. Two statements are the same requirement ("merged by meaning") when they
share any of, deterministically:

- the same text after `requirement_text` (case, quote marks, punctuation and spacing ignored);
- the same quote of P after the same normalising (P's own words line up two wordings);
- a witness (an audit finding names the witness it backs; the witness names its requirement).

The relation is closed transitively (union-find over the statements), and a row keeps the first
statement's wording in source order (analysis, audits by trial, witnesses by id, open questions).
Word overlap is never enough: two different requirements often share most of their words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from testjack_tui.engine import open_questions
from testjack_tui.engine.records_agent import stored_fates
from testjack_tui.engine.runner import is_failing
from testjack_tui.engine.store import SessionStore
from .records import JsonObject
from .records_agent import AgentFinding, ChecklistRow, TraceRow, rows_of

# T0's coverage as recorded, least covered first: where sources disagree the least one stands
# (a "partial" of the task analysis is never shown as a plain "yes").
COVERAGE = ("none", "partial", "full")


@dataclass
class RequirementRow:
    clause: str
    explicit: bool | None = None
    covered_by_t0: bool | None = None  # None: coverage not recorded (partial counts as covered)
    t0_tests: list[str] = field(default_factory=list)
    witnesses: list[str] = field(default_factory=list)
    failing_trials: set[str] = field(default_factory=set)
    source: str = "analysis"  # the first statement's: "analysis" | "audit" | "witness" | "open question"
    quote: str = ""  # the words of P the requirement rests on, when recorded
    implemented: dict[str, bool] = field(default_factory=dict)  # audited trial -> its audit's answer
    open_questions: list[str] = field(default_factory=list)  # who said P may not settle it (quoted)
    t0_coverage: str = ""  # "full" | "partial" | "none" | "" (not recorded)
    held: list[str] = field(default_factory=list)  # task-analysis tests that held on every trial
    wordings: list[str] = field(default_factory=list)  # the other wordings merged into this row

    def to_dict(self) -> JsonObject:
        return {"clause": self.clause, "explicit": self.explicit, "covered_by_t0": self.covered_by_t0,
                "t0_coverage": self.t0_coverage, "t0_tests": list(self.t0_tests),
                "witnesses": list(self.witnesses), "held": list(self.held),
                "failing_trials": sorted(self.failing_trials), "source": self.source, "quote": self.quote,
                "implemented": dict(self.implemented), "open_questions": list(self.open_questions),
                "wordings": list(self.wordings)}

    def coverage_text(self) -> str:
        """T0's coverage as people read it: yes / partial / no / not recorded."""
        word = self.t0_coverage or {True: "full", False: "none", None: ""}[self.covered_by_t0]
        return {"full": "yes", "partial": "partial", "none": "no", "": "not recorded"}[word]


def requirement_text(text: str) -> str:
    """A requirement's words for comparison: lower case, no quote marks or punctuation, single
    spaces (`"Raises ValueError."` and `raises valueerror` are one text)."""
    return " ".join(re.sub(r"[^\w]+", " ", (text or "").lower().replace("_", " ")).split())


def same_requirement(a: str, b: str) -> bool:
    """Two wordings are one requirement by their text alone (see the module's rule)."""
    na, nb = requirement_text(a), requirement_text(b)
    return bool(na) and na == nb


@dataclass
class Statement:
    """One source's statement of a requirement (`clause` empty: it only links, e.g. a finding)."""

    clause: str
    source: str
    quote: str = ""
    witnesses: tuple[str, ...] = ()
    explicit: bool | None = None
    coverage: str = ""  # one of COVERAGE, or "" when the source said nothing
    t0_tests: tuple[str, ...] = ()
    implemented: tuple[str, bool] | None = None  # (trial id, the audit's answer)
    held: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()

    def keys(self) -> list[tuple[str, str]]:
        out = [("witness", w) for w in self.witnesses]
        if requirement_text(self.clause):
            out.append(("text", requirement_text(self.clause)))
        if requirement_text(self.quote):
            out.append(("quote", requirement_text(self.quote)))
        return out


def merge(statements: list[Statement]) -> list[RequirementRow]:
    """The rows of a checklist: statements sharing a text, a quote of P or a witness, transitively,
    become one row, in the order of their first statement with a clause."""
    parent = list(range(len(statements)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[tuple[str, str], int] = {}
    for i, s in enumerate(statements):
        for key in s.keys():
            if key in first_with:
                a, b = find(first_with[key]), find(i)
                parent[max(a, b)] = min(a, b)
            else:
                first_with[key] = i
    groups: dict[int, list[Statement]] = {}
    for i, s in enumerate(statements):
        groups.setdefault(find(i), []).append(s)
    rows = []
    for members in groups.values():
        worded = [s for s in members if s.clause.strip()]
        if worded:
            rows.append(_row(worded[0], members))
    return rows


def _row(head: Statement, members: list[Statement]) -> RequirementRow:
    row = RequirementRow(head.clause.strip(), source=head.source)
    coverage = [s.coverage for s in members if s.coverage in COVERAGE]
    analysed = [s.coverage for s in members if s.source == "analysis" and s.coverage in COVERAGE]
    # The task analysis traced P to T0's tests; an audit's yes/no only fills in where it did not.
    word = min(analysed or coverage, key=COVERAGE.index) if (analysed or coverage) else ""
    row.t0_coverage = word
    row.covered_by_t0 = None if not word else word != "none"
    for s in members:
        if s.explicit is not None and row.explicit is None:
            row.explicit = s.explicit
        if s.quote.strip() and not row.quote:
            row.quote = s.quote.strip()
        text = s.clause.strip()
        if text and requirement_text(text) != requirement_text(row.clause) and \
                all(requirement_text(text) != requirement_text(w) for w in row.wordings):
            row.wordings.append(text)
        _extend(row.t0_tests, s.t0_tests)
        _extend(row.witnesses, s.witnesses if s.source == "witness" else ())
        _extend(row.held, s.held)
        _extend(row.open_questions, s.open_questions)
        if s.implemented is not None:
            row.implemented[s.implemented[0]] = s.implemented[1]
    return row


def _extend(out: list[str], items: Any) -> None:
    out.extend(x for x in items if x and x not in out)


def _coverage_word(covered: bool | None) -> str:
    return "" if covered is None else "full" if covered else "none"


def statements(store: SessionStore, task_id: str) -> list[Statement]:
    """Every statement of a requirement the session recorded for one task, in source order."""
    out: list[Statement] = []
    analysis = store.get_audit(task_id, "analysis") or {}
    for row in rows_of(TraceRow.from_json, analysis.get("traceability"), "traceability"):
        out.append(Statement(row.requirement, "analysis", quote=row.quote or "", explicit=row.explicit,
                             coverage=row.coverage.value if row.coverage else "", t0_tests=row.t0_tests or ()))
    for fate in stored_fates(analysis):  # the analysis's own tests: held ones are listed as held
        out.append(Statement(fate.requirement, "analysis", held=(fate.path or fate.id,) if fate.held else (),
                             witnesses=(fate.id,) if fate.id else ()))
    audits = sorted((a for a in store.audits() if a.task_id == task_id and a.key != "analysis"
                     and not a.key.startswith(open_questions.PREFIX)), key=lambda a: a.key)
    for audit in audits:
        for item in rows_of(ChecklistRow.from_json, audit.data.get("checklist"), "checklist"):
            out.append(Statement(item.clause, "audit", quote=item.quote, explicit=item.explicit,
                                 coverage=_coverage_word(item.covered_by_t0),
                                 implemented=None if item.implemented is None else (audit.key, item.implemented)))
        # a finding links a quote of P to the witness it backs
        for finding in rows_of(AgentFinding.from_json, audit.data.get("findings"), "findings"):
            if finding.candidate_id:
                out.append(Statement("", "audit", quote=finding.clause, witnesses=(finding.candidate_id,)))
    for w in sorted(store.witnesses(task_id), key=lambda w: w.id):
        out.append(Statement(w.requirement or "", "witness", quote=w.quote or "", witnesses=(w.id,),
                             explicit=w.explicit))
    for q in open_questions.stored(store, task_id):  # an open question about P is a requirement row too
        out.append(Statement(q.requirement, "open question", explicit=False, open_questions=tuple(q.said)))
    return out


def requirements_table(store: SessionStore, task_id: str) -> list[RequirementRow]:
    rows = merge(statements(store, task_id))
    failing: dict[str, set[str]] = {}
    for run in store.witness_runs(task_id):
        if is_failing(run.status):
            failing.setdefault(run.witness_id, set()).add(run.trial_id)
    for row in rows:
        for wid in row.witnesses:
            row.failing_trials |= failing.get(wid, set())
    return rows
