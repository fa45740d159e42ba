"""What the agents write is read once into records (engine/records_agent.py): a good row reads
and writes back the same JSON; a row with a missing field, a wrong type or an unknown label is
left out with one line naming the row and the field, and the other rows are kept."""
from __future__ import annotations

import json

import pytest

from testjack_tui.engine.records_agent import (AgentFinding, CaseCoverage, CaseLabel, ChecklistRow, Coverage,
                                               PromptSilent, ReferenceContradiction, ReviewCase, SuspiciousFeature,
                                               TraceRow, parse_rows)

TRACE = {"requirement": "negative input raises", "explicit": True, "quote": "raises ValueError",
         "t0_tests": ["tests/test_x.py::test_neg"], "coverage": "partial", "note": "only -1"}
FEATURE = {"id": "f1", "requirement": "weeks", "pattern": "UNITS\\[", "why_suspicious": "table",
           "false_positives": ""}
FINDING = {"what": "w", "why": "y", "clause": "c", "witness": "tests/test_tj.py", "failing_assertion": "a",
           "t0_missed": "literal", "t0_missed_detail": "d", "candidate_id": "t:1.v1"}
SILENT = {"on": "empty input", "why": "P says nothing", "witness": "tests/test_tj.py"}
CASE = {"test_id": "tests/t.py::a", "label": "QUESTIONABLE", "scope": "in_scope", "overfitting": "none",
        "requirement": "r", "reason": "why"}
CHECK = {"clause": "c", "explicit": True, "quote": "q", "covered_by_t0": False, "implemented": None}

ROUND_TRIPS = [
    (TraceRow, TRACE),
    (TraceRow, {k: v for k, v in TRACE.items() if k not in ("quote", "note")}),  # optional keys stay absent
    (TraceRow, {"requirement": "r"}),  # a stored row saying nothing more keeps saying nothing more
    (SuspiciousFeature, FEATURE),
    (AgentFinding, FINDING),
    (AgentFinding, {k: v for k, v in FINDING.items() if k not in ("t0_missed_detail", "candidate_id")}),
    (PromptSilent, SILENT),
    (PromptSilent, {"on": "x", "why": "y", "reference": "r", "clarification": "c"}),
    (ReviewCase, CASE),
    (ReviewCase, {k: v for k, v in CASE.items() if k != "requirement"}),
    (CaseCoverage, {"requirement": "r", "test_ids": ["a", "b"]}),
    (ReferenceContradiction, {"quote": "q", "claim": "c", "output": "o"}),
    (ChecklistRow, CHECK),
]


@pytest.mark.parametrize("kind, row", ROUND_TRIPS)
def test_a_good_row_reads_and_writes_back_the_same_json(kind, row):
    parsed = parse_rows(kind.from_json, [row], "rows")
    assert not parsed.problems
    [record] = parsed.rows
    assert json.dumps(record.to_json(), sort_keys=True) == json.dumps(row, sort_keys=True)


def test_good_rows_are_typed():
    [trace] = parse_rows(TraceRow.from_json, [TRACE], "traceability").rows
    assert trace.coverage is Coverage.PARTIAL and trace.t0_tests == ("tests/test_x.py::test_neg",)
    assert trace.checklist_item() == ChecklistRow("negative input raises", True, "raises ValueError", True,
                                                  None, ("tests/test_x.py::test_neg",))
    [case] = parse_rows(ReviewCase.from_json, [CASE], "cases").rows
    assert case.label is CaseLabel.QUESTIONABLE


@pytest.mark.parametrize("kind, row, line", [
    (TraceRow, {k: v for k, v in TRACE.items() if k != "requirement"}, "traceability/1/requirement: missing"),
    (TraceRow, dict(TRACE, explicit="yes"), "traceability/1/explicit: must be true, false or null, got 'yes'"),
    (TraceRow, dict(TRACE, coverage="most"), "traceability/1/coverage: must be one of full, partial, none, "
                                             "got 'most'"),
    (TraceRow, dict(TRACE, t0_tests="a"), "traceability/1/t0_tests: must be a list of strings, got 'a'"),
    (ReviewCase, dict(CASE, label="MAYBE"), "traceability/1/label: must be one of VALID, QUESTIONABLE, INVALID, "
                                            "got 'MAYBE'"),
    (AgentFinding, dict(FINDING, what=3), "traceability/1/what: must be a string, got 3"),
    (PromptSilent, dict(SILENT, verdict="x"), "traceability/1/verdict: unknown field (known: on, why, reference, "
                                              "witness, clarification)"),
])
def test_a_bad_row_is_left_out_with_one_line_and_the_others_are_kept(kind, row, line):
    good = {TraceRow: TRACE, ReviewCase: CASE, AgentFinding: FINDING, PromptSilent: SILENT}[kind]
    parsed = parse_rows(kind.from_json, [good, row, good], "traceability")
    assert len(parsed.rows) == 2 and parsed.problems == (line,)


def test_a_reply_that_is_not_a_list_of_objects_says_so():
    assert parse_rows(TraceRow.from_json, None, "traceability").rows == ()
    assert parse_rows(TraceRow.from_json, {"a": 1}, "traceability").problems == (
        "traceability: must be a list, got dict",)
    parsed = parse_rows(TraceRow.from_json, ["row", TRACE], "traceability")
    assert len(parsed.rows) == 1 and parsed.problems == ("traceability/0: must be an object, got 'row'",)
