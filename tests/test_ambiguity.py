"""The ambiguity rule of appendix A.2: explicit refutes; implicit refutes only when rho <= 1/2."""
from __future__ import annotations

import pytest

from testjack_tui.engine.records_agent import ChecklistRow
from testjack_tui.engine.ambiguity import (AMBIGUOUS, EXPLICIT, NECESSARY, AmbiguityTracker,
                                           WitnessFacts, classify_facts, classify_witness,
                                           quote_in_prompt, refutations, rho, suggest_clarification,
                                           witness_outcome)

P = ("Add an `aliases` option to the name mapper. Aliases are tried in order, and the first alias "
     "present in the input wins. Unknown keys must raise a ValidationError.")

# 4 models; model A has 3 trials, the others 1-2.
MODELS = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C", "d1": "D"}


def facts(outcomes, explicit=False, quote="", wid="w1", requirement="aliases are case-insensitive"):
    return WitnessFacts(wid, requirement, explicit, quote, outcomes)


def test_witness_outcome_combines_test_ids():
    assert witness_outcome(["passed", "failed"]) == "failed"
    assert witness_outcome(["passed", "error"]) == "failed"
    # A hang is its own kind, not a failed assertion (issue 27.4): rho never counts it.
    assert witness_outcome(["passed", "timed_out"]) == "timed_out"
    assert witness_outcome(["passed", "passed"]) == "passed"
    assert witness_outcome(["passed", "not_found"]) == "failed"
    assert witness_outcome(["passed", None]) == "unknown"
    assert witness_outcome(["skipped"]) == "unknown"
    assert witness_outcome([]) == "unknown"


def test_rho_counts_models_not_trials():
    # Model A fails on all 3 of its trials; B, C, D pass: 3 failing trials of 7, but 1 model of 4.
    outcomes = {"a1": "failed", "a2": "failed", "a3": "failed", "b1": "passed", "b2": "passed",
                "c1": "passed", "d1": "passed"}
    value, per_model, skipping, complete = rho(outcomes, MODELS)
    assert value == 0.25 and skipping == ("A",) and complete
    assert per_model["A"] == (3, 3) and per_model["B"] == (0, 2)


def test_mostly_means_strictly_more_than_half_of_a_models_trials():
    outcomes = {"b1": "failed", "b2": "passed",  # B: 1 of 2 -> not mostly
                "a1": "failed", "a2": "failed", "a3": "passed",  # A: 2 of 3 -> mostly
                "c1": "failed", "d1": "passed"}
    value, _, skipping, _ = rho(outcomes, MODELS)
    assert skipping == ("A", "C") and value == 0.5


def test_explicit_refutes_however_many_models_skip():
    outcomes = {t: "failed" for t in MODELS}
    c = classify_witness(facts(outcomes, explicit=True, quote="the first alias present in the input wins"),
                         MODELS, P)
    assert c.klass == EXPLICIT and c.refutes and c.rho == 1.0
    assert c.failing_trials == tuple(sorted(MODELS))


def test_implicit_with_rho_at_most_half_refutes():
    outcomes = {"a1": "failed", "a2": "failed", "a3": "failed", "b1": "failed", "b2": "failed",
                "c1": "passed", "d1": "passed"}
    c = classify_witness(facts(outcomes), MODELS, P)
    assert c.rho == 0.5 and c.klass == NECESSARY and c.refutes and c.clarification == ""


def test_implicit_with_rho_above_half_is_ambiguous_with_a_clarification():
    outcomes = {"a1": "failed", "a2": "failed", "a3": "failed", "b1": "failed", "b2": "failed",
                "c1": "failed", "d1": "passed"}
    c = classify_witness(facts(outcomes), MODELS, P)
    assert c.rho == 0.75 and c.klass == AMBIGUOUS and not c.refutes
    assert c.clarification == 'Add to the task: "Aliases are case-insensitive."'
    assert refutations({c.witness_id: c}) == {}


def test_agent_supplied_clarification_is_kept():
    outcomes = {t: "failed" for t in MODELS}
    w = WitnessFacts("w", "x", False, "", outcomes, clarification="Say that aliases ignore case.")
    assert classify_witness(w, MODELS, P).clarification == "Say that aliases ignore case."


def test_explicit_claim_needs_a_quote_that_is_really_in_the_prompt():
    outcomes = {t: "failed" for t in MODELS}
    made_up = classify_witness(facts(outcomes, explicit=True, quote="aliases ignore letter case"), MODELS, P)
    assert made_up.klass == AMBIGUOUS and "not found in the prompt" in made_up.note
    no_quote = classify_witness(facts(outcomes, explicit=True), MODELS, P)
    assert no_quote.klass == AMBIGUOUS and "without quoting" in no_quote.note
    trusted = classify_witness(facts(outcomes, explicit=True), MODELS, P, verify_quotes=False)
    assert trusted.klass == EXPLICIT


def test_quote_matching_tolerates_case_spacing_quotes_and_ellipsis():
    assert quote_in_prompt("Aliases are tried in order ... the first alias present wins", P) is False
    assert quote_in_prompt("aliases are tried   in order ... first alias present in the input wins", P)
    assert quote_in_prompt('"Unknown keys must raise a ValidationError."', P)
    assert not quote_in_prompt("the input wins ... Aliases are tried", P)  # out of order
    assert not quote_in_prompt("alias", P)  # too short to prove anything


def test_unmeasured_trials_are_left_out_and_flagged_incomplete():
    outcomes = {"a1": "failed", "c1": "unknown", "d1": "passed"}
    c = classify_witness(facts(outcomes), MODELS, P)
    assert not c.complete and c.models_measured == 2 and c.rho == 0.5
    assert c.per_model == {"A": (1, 1), "D": (0, 1)}


def test_failing_non_passing_trials_are_ignored():
    c = classify_witness(facts({"a1": "failed", "zz": "failed"}), MODELS, P)
    assert c.failing_trials == ("a1",)


def test_single_model_task_is_all_or_nothing():
    models = {"x1": "X", "x2": "X", "x3": "X"}
    assert classify_witness(facts({"x1": "failed", "x2": "failed", "x3": "passed"}), models, P).klass == AMBIGUOUS
    assert classify_witness(facts({"x1": "failed", "x2": "passed", "x3": "passed"}), models, P).klass == NECESSARY


def test_refutations_map_trials_to_non_ambiguous_witnesses():
    w_expl = facts({"a1": "failed", "b1": "failed"}, explicit=True,
                   quote="Unknown keys must raise a ValidationError", wid="w-expl")
    w_amb = facts({t: "failed" for t in MODELS}, wid="w-amb")
    w_nec = facts({"a1": "failed", "a2": "failed", "a3": "failed", "b1": "passed", "c1": "passed"},
                  wid="w-nec")
    classes = classify_facts([w_expl, w_amb, w_nec], MODELS, P)
    assert {w: c.klass for w, c in classes.items()} == {"w-expl": EXPLICIT, "w-amb": AMBIGUOUS,
                                                        "w-nec": NECESSARY}
    assert refutations(classes) == {"a1": ("w-expl", "w-nec"), "a2": ("w-nec",), "a3": ("w-nec",),
                                    "b1": ("w-expl",)}


def test_tracker_withdraws_a_refutation_that_turns_ambiguous():
    tracker = AmbiguityTracker("task", P, MODELS)
    # The witness is first measured on the audited trial and one more: it fails on model A only.
    first = tracker.add_witness(facts({"a1": "failed", "b1": "passed"}))
    assert [(c.trial_id, c.witness_id) for c in first.new_refutations] == [("a1", "w1")]
    assert first.withdrawn == []
    # Replay on the rest: C and D also skip the requirement -> rho = 3/4 > 1/2.
    second = tracker.record_many("w1", {"a2": "failed", "a3": "passed", "b2": "passed",
                                        "c1": "failed", "d1": "failed"})
    assert second.classes["w1"].klass == AMBIGUOUS
    assert second.new_refutations == []
    assert [(c.trial_id, c.witness_id) for c in second.withdrawn] == [("a1", "w1")]
    assert second.withdrawn[0].rho == 0.75
    assert second.reinstated_ambiguous == ["w1"]
    assert [c.witness_id for c in second.underspecified] == ["w1"]
    assert tracker.refuted == {}


def test_tracker_reports_new_refutations_incrementally():
    tracker = AmbiguityTracker("task", P, MODELS)
    tracker.add_witness(facts({"a1": "failed"}, explicit=True,
                              quote="Unknown keys must raise a ValidationError"))
    up = tracker.record("w1", "b1", "failed")
    assert [(c.trial_id, c.witness_id) for c in up.new_refutations] == [("b1", "w1")]
    up = tracker.record("w1", "c1", "passed")
    assert up.new_refutations == [] and up.withdrawn == []
    assert tracker.refuted == {"a1": ("w1",), "b1": ("w1",)}


@pytest.mark.parametrize("requirement,expected", [
    ("", "State explicitly the behaviour this witness checks."),
    ("the counter resets before the decision is returned.",
     'Add to the task: "The counter resets before the decision is returned."'),
])
def test_suggest_clarification(requirement, expected):
    assert suggest_clarification(requirement) == expected


def test_engine_hook_classifies_records_and_uses_checklist_quotes():
    from testjack_tui.engine import hooks
    from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

    task = Task("t", P, Environment(image="i"), Reference(patch="x"), OfficialTests())
    trials = [Trial(tid, "t", "agent", model, "", True) for tid, model in MODELS.items()]
    everyone_fails = {tid: {"w-amb": "failed", "w-list": "failed"} for tid in MODELS}
    checklist = (ChecklistRow("unknown keys raise ValidationError", True,
                              "Unknown keys must raise a ValidationError"),)
    records = [
        hooks.WitnessRecord("w-amb", "t", "tests/test_a.py", "", "aliases ignore case", False),
        hooks.WitnessRecord("w-list", "t", "tests/test_b.py", "", "unknown keys raise ValidationError",
                            True, checklist=checklist),
    ]
    from testjack_tui.compose import app_hooks

    # the application's hooks classify with the ambiguity rule
    got = app_hooks().classify(task, records, everyone_fails, trials)
    assert got["w-amb"].label == "ambiguous" and got["w-amb"].rho == 1.0
    assert got["w-amb"].note == 'Add to the task: "Aliases ignore case."'
    assert got["w-list"].label == "refutes"


def test_rho_counts_only_failures_alike():
    """Issue 27.4: three models fail the witness, two at its assertion and one with an error in
    its own code: that is not one other reading of P, so rho counts only the largest group of
    failures alike."""
    from testjack_tui.engine.ambiguity import failure_signature, run_signature, shared_failure

    models = {"a1": "A", "b1": "B", "c1": "C", "d1": "D"}
    outcomes = {"a1": "failed", "b1": "failed", "c1": "failed", "d1": "passed"}
    same = "E       assert parse('1w') == 604800\nE        +  where 0 = parse('1w')"
    sigs = {"a1": failure_signature("failed", same),
            "b1": failure_signature("failed", "E       assert parse('1w') == 604800\n  at 0x7f00aa"),
            "c1": failure_signature("failed", "Traceback ...\nKeyError: 'w'")}
    assert sigs["a1"] == sigs["b1"] != sigs["c1"]
    # Without signatures every failure counts: 3 of 4 models, ambiguous.
    assert classify_witness(facts(outcomes), models, P).klass == AMBIGUOUS
    # Grouped: the parse(...) == 604800 group holds 2 models of 4 -> rho 1/2, the witness refutes.
    c = classify_witness(WitnessFacts("w1", "weeks parse", False, "", outcomes, signatures=sigs), models, P)
    assert c.rho == 0.5 and c.klass == NECESSARY and c.models_skipping == ("A", "B")
    assert c.shared_failure == "failed: assertion" and c.failing_trials == ("a1", "b1", "c1")
    assert shared_failure(outcomes, models, {}) == ("", None)
    # One assertion failed with different wrong values: one group (the same reading of P, twice);
    # another assertion, or another kind, is another group.
    assert failure_signature("failed", "E assert 1 == 2") == failure_signature("failed", "E assert 7 == 2")
    assert failure_signature("failed", ">   assert f(1) == 2\nE assert 3 == 2") \
        == failure_signature("failed", ">   assert f(1) == 2\nE assert 0 == 2")
    assert failure_signature("failed", ">   assert f(1) == 2\nE assert 3 == 2") \
        == failure_signature("failed", ">   assert g(1) == 2\nE assert 3 == 2") == "failed: assertion"
    assert failure_signature("error", "KeyError: 'w'") != failure_signature("failed", "KeyError: 'w'")
    # Any runner's message: the first decisive line (go's output, a JS assertion), values blanked.
    go = "    calc_test.go:9: Add(20, 22) = 41, want 42\n--- FAIL: TestAdd (0.00s)\n"
    assert failure_signature("failed", go) == "failed: assertion"
    assert failure_signature("failed", go.replace("41", "40")) == failure_signature("failed", go)
    py = "Traceback (most recent call last):\n  File \"t.py\", line 3\nAssertionError: 41 != 42"
    assert failure_signature("failed", py) == "failed: assertion"
    assert failure_signature("failed", "Traceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'w'") == "failed: KeyError"
    stored = {"t.py::test_a": {"status": "passed"}, "t.py::test_b": {"status": "failed", "message": same}}
    assert run_signature(stored, "t.py", (), "failed") == sigs["a1"]


PYTEST_KEYERROR_IN_ASSERT = """\
    def test_weeks():
>       assert parse_duration("1w") == 604800

tests/test_weeks.py:4:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def parse_duration(text):
>       return int(text[:-1]) * UNITS[text[-1]]
E       KeyError: 'w'

src/duration.py:7: KeyError"""

PYTEST_ASSERT = """\
    def test_weeks():
>       assert parse_duration("1w") == 604800
E       AssertionError: assert 7 == 604800
E        +  where 7 = parse_duration('1w')

tests/test_weeks.py:4: AssertionError"""


def test_the_exception_class_decides_not_the_statement_it_came_from():
    """Issue 27 leftover: a KeyError raised inside an `assert` statement is the trial raising,
    not the witness's check saying no; pytest's `>` line is only the test's statement."""
    from testjack_tui.engine.ambiguity import failure_signature as sig

    assert sig("failed", PYTEST_KEYERROR_IN_ASSERT) == "failed: KeyError"
    assert sig("failed", PYTEST_ASSERT) == "failed: assertion"
    assert sig("failed", PYTEST_ASSERT.replace("AssertionError: ", "")) == "failed: assertion"
    # A message of its own, pytest.fail, pytest.raises that did not raise: the check said no.
    assert sig("failed", '>       assert x, "weeks"\nE       AssertionError: weeks\nE       assert False') \
        == "failed: assertion"
    assert sig("failed", ">       pytest.fail('no')\nE       Failed: no") == "failed: assertion"
    assert sig("failed", ">   with pytest.raises(ValueError):\nE   Failed: DID NOT RAISE <class 'ValueError'>") \
        == "failed: assertion"
    # An exception whose text sounds like a check is still the trial raising.
    assert sig("failed", '>   assert f("x") == 1\nE   ValueError: expected a number, want digits') \
        == "failed: ValueError"
    assert sig("failed", ">   assert f() == 1\nE   duration.UnknownUnit: w") == "failed: UnknownUnit"
    # A chained exception: the one that ended the test decides.
    chained = ("E   KeyError: 'w'\n\nDuring handling of the above exception, another exception occurred:\n\n"
               ">   assert parse('1w') == 604800\nE   ValueError: unknown unit w")
    assert sig("failed", chained) == "failed: ValueError"
    # unittest / Django tracebacks: their last line.
    tb = ('Traceback (most recent call last):\n  File "t.py", line 5, in test_weeks\n'
          '    self.assertEqual(parse("1w"), 604800)\n  File "d.py", line 2, in parse\n    return U[k]\n')
    assert sig("failed", tb + "KeyError: 'w'") == "failed: KeyError"
    assert sig("failed", tb.replace("    return U[k]\n", "") + "AssertionError: 7 != 604800") == "failed: assertion"


def test_the_exception_class_decides_for_every_runner():
    from testjack_tui.engine.ambiguity import failure_signature as sig

    # jest, vitest, mocha (chai), node --test (node:assert)
    assert sig("failed", "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 604800\n"
                         "Received: 7\n    at Object.<anonymous> (weeks.test.js:4:30)") == "failed: assertion"
    assert sig("failed", "AssertionError: expected 7 to be 604800 // Object.is equality") == "failed: assertion"
    assert sig("failed", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n7 !== 604800") \
        == "failed: assertion"
    assert sig("failed", "TypeError: Cannot read properties of undefined (reading 'w')\n"
                         "    at parse (src/duration.js:3:20)") == "failed: TypeError"
    assert sig("failed", "RangeError: expected a known unit\n    at parse (src/duration.js:3:20)") \
        == "failed: RangeError"
    assert sig("failed", "Error: unknown unit w\n    at parse (src/duration.js:3:9)") == "failed: Error"
    # go test: t.Errorf lines are the check; a panic is the code under test
    assert sig("failed", "    dur_test.go:9: Parse(\"1w\") = 7, want 604800\n--- FAIL: TestWeeks (0.00s)") \
        == "failed: assertion"
    assert sig("failed", "--- FAIL: TestWeeks (0.00s)\npanic: runtime error: index out of range [1] with length 1"
                         " [recovered]\n\tpanic: runtime error") == "failed: panic"
    # cargo test: rust 1.63's and later panic messages; an unwrap in the library is the trial
    old = "---- weeks stdout ----\nthread 'weeks' panicked at 'assertion failed: `(left == right)`\n  left: `7`,\n" \
          " right: `604800`', tests/weeks.rs:5:5"
    new = "---- weeks stdout ----\nthread 'weeks' panicked at tests/weeks.rs:5:5:\nassertion `left == right` failed\n" \
          "  left: 7\n right: 604800"
    unwrap = "---- weeks stdout ----\nthread 'weeks' panicked at 'called `Option::unwrap()` on a `None` value', " \
             "src/lib.rs:3:20"
    assert sig("failed", old) == sig("failed", new) == "failed: assertion"
    assert sig("failed", unwrap) == "failed: panic"
