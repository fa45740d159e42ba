"""The requirements checklist merges statements by meaning, deterministically (issue 31.6):
the same requirement once, with all its witnesses, T0's coverage as the task analysis traced it
and the analysis tests that held on every trial."""
from __future__ import annotations

from testjack_tui.engine.requirements import (
    Statement, merge, requirement_text, requirements_table, same_requirement)
from testjack_tui.engine.records_standing import WitnessRow
from testjack_tui.engine.store import SessionStore

T = "dur"
QUOTE_WEEKS = "A `w` suffix means weeks."
QUOTE_NEG = "Negative durations must raise ValueError."


def _store(tmp_path) -> SessionStore:
    store = SessionStore(tmp_path / "s.db")
    store.put_audit(T, "analysis", {
        "traceability": [
            {"requirement": "w suffix means weeks", "explicit": True, "quote": QUOTE_WEEKS,
             "t0_tests": ["tests/test_d.py::test_days"], "coverage": "partial"},
            {"requirement": "Negative durations raise ValueError", "explicit": True, "quote": QUOTE_NEG,
             "t0_tests": [], "coverage": "none"},
            {"requirement": "Whitespace around the number is ignored", "explicit": False, "quote": "",
             "t0_tests": [], "coverage": "full"},
            {"requirement": "An empty string raises ValueError", "explicit": False, "quote": "",
             "t0_tests": [], "coverage": "none"},
        ],
        "fates": [{"id": "dur:analysis:3.v1", "path": "tests/test_tj_space.py",
                   "requirement": "whitespace around the number is ignored.", "held": True,
                   "versions": ["dur:analysis:3.v1"], "fate": "held on every trial"},
                  {"id": "dur:analysis:4.v1", "path": "tests/test_tj_empty.py",
                   "requirement": "An empty string raises ValueError", "held": False,
                   "versions": ["dur:analysis:4.v1"], "fate": "dropped: x"}]})
    # Two audits say the same things in other words; one says T0 covers weeks (the analysis said partial).
    store.put_audit(T, "t1", {"checklist": [
        {"clause": "Weeks are supported via the 'w' unit", "explicit": True, "quote": QUOTE_WEEKS,
         "covered_by_t0": True, "implemented": False},
        {"clause": "negative durations raise valueerror!", "explicit": True, "quote": QUOTE_NEG,
         "covered_by_t0": False, "implemented": True}],
        "findings": [{"candidate_id": "dur:t1:1.v1", "clause": QUOTE_WEEKS, "what": "w unsupported",
                      "why": "no w unit", "witness": "tests/test_tj_w.py", "failing_assertion": "KeyError: 'w'",
                      "t0_missed": "untested_input_class"}]})
    store.put_audit(T, "t2", {"checklist": [
        {"clause": "Parsing rejects negative values", "explicit": True, "quote": QUOTE_NEG,
         "covered_by_t0": False, "implemented": False},
        # Shares most words with the weeks requirement, yet is another requirement.
        {"clause": "w suffix means weekdays", "explicit": False, "quote": "",
         "covered_by_t0": None, "implemented": True}]})
    # The reviewer named the weeks witness in its own words and quoted nothing: the audit's
    # finding links it to the weeks quote.
    store.put_witness(WitnessRow(id="dur:t1:1.v1", task_id=T, source_trial="t1", requirement="supports weeks",
                       explicit=True, quote="", path="tests/test_tj_w.py", source="x"))
    store.put_witness(WitnessRow(id="dur:t2:1.v1", task_id=T, source_trial="t2",
                       requirement="Negative input raises", explicit=True, quote=QUOTE_NEG,
                       path="tests/test_tj_neg.py", source="x"))
    store.put_witness_run("dur:t1:1.v1", "t1", T, "failed", None)
    store.put_witness_run("dur:t1:1.v1", "t3", T, "failed", None)
    store.put_witness_run("dur:t2:1.v1", "t2", T, "failed", None)
    store.put_witness_run("dur:t2:1.v1", "t3", T, "passed", None)
    return store


def test_each_requirement_once_with_its_witnesses_coverage_and_held_tests(tmp_path):
    rows = requirements_table(_store(tmp_path), T)
    by = {r.clause: r for r in rows}
    assert list(by) == ["w suffix means weeks", "Negative durations raise ValueError",
                        "Whitespace around the number is ignored", "An empty string raises ValueError",
                        "w suffix means weekdays"]
    weeks = by["w suffix means weeks"]
    # linked by the quote (audit t1) and by the finding naming the witness (reviewer's wording)
    assert weeks.witnesses == ["dur:t1:1.v1"] and weeks.failing_trials == {"t1", "t3"}
    assert weeks.wordings == ["Weeks are supported via the 'w' unit", "supports weeks"]
    assert weeks.t0_coverage == "partial" and weeks.coverage_text() == "partial"  # never "yes"
    assert weeks.t0_tests == ["tests/test_d.py::test_days"] and weeks.implemented == {"t1": False}
    neg = by["Negative durations raise ValueError"]
    assert neg.witnesses == ["dur:t2:1.v1"] and neg.failing_trials == {"t2"}
    assert neg.coverage_text() == "no" and neg.implemented == {"t1": True, "t2": False}
    assert by["Whitespace around the number is ignored"].held == ["tests/test_tj_space.py"]
    assert by["An empty string raises ValueError"].held == []  # dropped, not held
    weekdays = by["w suffix means weekdays"]
    assert weekdays.witnesses == [] and weekdays.coverage_text() == "not recorded"


def test_the_merge_is_the_same_whatever_order_the_store_returns():
    a = Statement("Raises ValueError.", "audit", quote="It must raise", witnesses=())
    b = Statement("raises   valueerror", "witness", witnesses=("w1",))
    c = Statement("", "audit", quote="It must raise", witnesses=("w2",))
    d = Statement("Something else", "witness", witnesses=("w2",))
    rows = merge([a, b, c, d])
    assert len(rows) == 1 and rows[0].clause == "Raises ValueError." and rows[0].witnesses == ["w1", "w2"]
    assert [r.clause for r in merge([d, c, b, a])] == ["Something else"]  # one row, first wording


def test_text_rule():
    assert requirement_text('"Raises ValueError."') == "raises valueerror"
    assert same_requirement("snake_case keys", "Snake case keys!")
    assert not same_requirement("w suffix means weeks", "w suffix means weekdays")
    assert not same_requirement("", "")
