"""Ids in the benchmark's scheme, the grader's report formats, and the one well-formedness rule
(no containers)."""
from __future__ import annotations

import json
from pathlib import Path

from testjack_tui.sandbox import api
from testjack_tui.sandbox.grader_reports import parse_ctrf_report, parse_junit_report, read_reports, read_reward
from testjack_tui.sandbox.test_ids import junit_to_pytest, pytest_to_junit
from testjack_tui.sandbox.wellformed import assess, changed_tests, diagnose
from testjack_tui.model import Environment, OfficialTests, Reference, Task

FIXTURE = Path(__file__).parent / "fixtures" / "deepswe"


def test_pytest_and_junit_ids_map_both_ways_with_classes_and_parameters():
    files = ["tests/test_convert.py", "tests/models/test_cookie_store.py", "tests/test_fees.py"]
    pairs = {
        "tests/test_convert.py::TestBidirectionalConversion::test_table_to_inline_and_back":
            "tests.test_convert.TestBidirectionalConversion.test_table_to_inline_and_back",
        "tests/test_fees.py::test_parse[1h30m-expected1]": "tests.test_fees.test_parse[1h30m-expected1]",
        "tests/test_fees.py::test_parse[1.5h-a.b/c]": "tests.test_fees.test_parse[1.5h-a.b/c]",
        "tests/models/test_cookie_store.py::test_domain[a=1; Domain=.example.org-https://x.org/-a=1]":
            "tests.models.test_cookie_store.test_domain[a=1; Domain=.example.org-https://x.org/-a=1]",
        "test_top.py::TestA::TestInner::test_b": "test_top.TestA.TestInner.test_b",
    }
    for nodeid, junit in pairs.items():
        assert pytest_to_junit(nodeid) == junit
        assert junit_to_pytest(junit, files + ["test_top.py"]) == nodeid
    # Without the file list, capitalised trailing parts are classes.
    assert junit_to_pytest("pkg.tests.test_x.TestK.test_y[0]") == "pkg/tests/test_x.py::TestK::test_y[0]"
    assert junit_to_pytest("pkg.tests.test_x.test_y") == "pkg/tests/test_x.py::test_y"


def test_junit_reports_give_classname_dot_name_with_worst_status_winning():
    base = b"""<testsuites><testsuite>
      <testcase classname="tests.test_fees" name="test_parse[90m-90]"/>
      <testcase classname="tests.test_fees.TestFormat" name="test_hours"><skipped message="later"/></testcase>
      <testcase classname="" name="tests.test_rates"><error message="collection failure">ImportError</error></testcase>
    </testsuite></testsuites>"""
    new = b"""<testsuite><testcase classname="tests.test_fees" name="test_parse[90m-90]">
      <failure message="assert 1 == 90">trace</failure></testcase>
      <testcase classname="tests.test_fees.TestFormat" name="test_hours"/></testsuite>"""
    merged = read_reports([base, None, new], "junit")
    assert merged["tests.test_fees.test_parse[90m-90]"][0] == "failed"
    assert "assert 1 == 90" in merged["tests.test_fees.test_parse[90m-90]"][1]
    assert merged["tests.test_fees.TestFormat.test_hours"][0] == "skipped"
    assert merged["tests.test_rates"][0] == "error"
    assert parse_junit_report(b"<not xml") == {}


def test_ctrf_reports_use_suite_dot_name_or_name_as_configured():
    doc = json.dumps({"results": {"tests": [
        {"name": "TestEval", "suite": ["github.com/x/abs/evaluator"], "status": "passed"},
        {"name": "test/a.test.ts: group > case", "status": "pending"},
        {"name": "TestBroken", "suite": "github.com/x/abs/parser", "status": "failed", "message": "boom"},
    ]}}).encode()
    by_suite = parse_ctrf_report(doc, "suite.name")
    assert by_suite["github.com/x/abs/evaluator.TestEval"] == ("passed", "")
    assert by_suite["github.com/x/abs/parser.TestBroken"] == ("failed", "boom")
    assert by_suite["test/a.test.ts: group > case"][0] == "skipped"
    assert "TestEval" in parse_ctrf_report(doc, "name")


def test_reward_comes_from_reward_json_then_reward_txt():
    assert read_reward(b'{"reward": 1, "f2p": 1.0}', b"0\n") == 1.0
    assert read_reward(None, b"0\n") == 0.0
    assert read_reward(b"garbage", None) is None


def test_changed_tests_finds_added_and_edited_functions_not_their_neighbours():
    patch = (FIXTURE / "tasks" / "fees-compound" / "tests" / "test.patch").read_text()
    new_files, changed = changed_tests(patch)
    assert new_files == {"test.sh"}
    assert changed["tests/test_fees.py"] == {"test_rejects_empty", "TestCompound", "test_hours_minutes",
                                             "test_rejects_unit_without_number"}


def _task(f2p, p2p, test_patch=""):
    return Task(id="t", instruction="P", environment=Environment(image="x"), reference=Reference(patch="p"),
                tests=OfficialTests(test_patch=test_patch, fail_to_pass=tuple(f2p), pass_to_pass=tuple(p2p),
                                    test_files=("tests/test_a.py",)))


def _run(statuses, output="", exit_code=1, reported=0, flow="official"):
    ex = api.ExecResult(argv=["bash"], exit_code=exit_code, timed_out=False, stdout_head=output, stdout_tail="",
                    stderr_head="", stderr_tail="", log_path=None, duration=1.0)
    return api.TestRun(world="w", test_ids=list(statuses), exec=ex, flow=flow, reported=reported,
                   outcomes={i: api.TestOutcome(i, s, "missing from report" if s == "not_found" else "")
                             for i, s in statuses.items()})


def test_ids_that_match_nothing_give_one_line_naming_world_cause_and_output():
    ids = [f"tests/test_a.py::test_{n}" for n in range(50)]
    task = _task(ids[:10], ids[10:])
    long_line = "x" * 100_000
    null = _run({i: "not_found" for i in ids}, output=f"{long_line}\n===== grade =====\nreward 0",
                reported=7)
    ref = _run({i: "not_found" for i in ids}, reported=7)
    verdict = assess(task, null, ref)
    assert not verdict.well_formed
    assert len(verdict.problems) == 2  # one per world, not one per test
    line = verdict.problems[0]
    assert line.startswith("null world: no T0 test produced a result: none of T0's 50 ids matches")
    assert "reward 0" in line and len(line) < 600
    assert verdict.diagnoses["reference"] == verdict.problems[1]


def test_diagnosis_names_a_runner_that_did_not_start_and_a_collection_error():
    ids = ["a.test_x"]
    assert "failed to start (exit 127)" in diagnose("null", _run({"a.test_x": "not_found"},
                                                                  "bash: pytest: command not found", 127), ids)
    assert "a collection error" in diagnose(
        "reference", _run({"a.test_x": "not_found"}, "ERROR collecting tests/test_a.py\nInterrupted"), ids)
    assert diagnose("null", _run({"a.test_x": "failed"}), ids) is None


def test_django_ids_of_the_other_python_are_named_as_the_cause():
    """Real Django 4.2.16 on Python 3.11 prints `test_x (app.mod.Class.test_x)`; a row recorded
    on Python 3.9 (SWE-bench's Django 4.2 images) lists `test_x (app.mod.Class)`."""
    ids = ["test_slugify (utils_tests.test_text.TestUtilsText)", "test_wrap (utils_tests.test_text.TestUtilsText)"]
    log = ("test_slugify (utils_tests.test_text.TestUtilsText.test_slugify) ... ok\n"
           "test_wrap (utils_tests.test_text.TestUtilsText.test_wrap) ... ok\n")
    line = diagnose("reference", _run({i: "not_found" for i in ids}, log, 0, reported=2), ids)
    assert "Python before 3.11" in line and "`test_slugify (utils_tests.test_text.TestUtilsText.test_slugify)`" in line
    assert "another Python than T0 was recorded with" in line
    # The other way round, and ids that simply match nothing keep the general cause.
    long_ids = ["test_wrap (utils_tests.test_text.TestUtilsText.test_wrap)"]
    line = diagnose("null", _run({long_ids[0]: "not_found"}, "test_wrap (utils_tests.test_text.TestUtilsText) ... ok",
                                 0, reported=1), long_ids)
    assert "as Python 3.11+ describes them" in line
    line = diagnose("null", _run({ids[0]: "not_found"}, "test_other (a.B) ... ok", 0, reported=1), ids[:1])
    assert "ids written in another scheme?" in line


def test_vacuous_findings_are_only_tests_t0_adds_changes_or_lists_as_fail_to_pass():
    patch = ("diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n"
             "@@ -1,3 +1,7 @@\n def test_old():\n     assert True\n \n+\n+def test_new():\n+    assert True\n")
    task = _task(["tests.test_a.test_f2p"], ["tests.test_a.test_old", "tests.test_a.test_new"], patch)
    null = _run({"tests.test_a.test_f2p": "passed", "tests.test_a.test_old": "passed",
                 "tests.test_a.test_new": "passed"})
    ref = _run({i: "passed" for i in task.tests.ids})
    verdict = assess(task, null, ref)
    assert verdict.vacuous == ["tests.test_a.test_f2p", "tests.test_a.test_new"]
    assert verdict.regression_guards == ["tests.test_a.test_old"]
    assert verdict.problems == ["fail-to-pass test tests.test_a.test_f2p passes on the null world"]


def test_every_fixture_and_demo_task_ships_the_same_grader_per_frame():
    # One grader per test frame: DeepSWE's pytest/JUnit one, and the node --test/CTRF one.
    shared = (FIXTURE / "shared" / "grader.py").read_bytes()
    copies = sorted(FIXTURE.glob("tasks/*/tests/grader.py"))
    demo = sorted((FIXTURE.parents[2] / "benchmarks" / "demo").glob("tasks/*/tests/grader.py"))
    node = FIXTURE.parent / "nodetest" / "tasks" / "parse-duration" / "tests" / "grader.py"
    demo_js = [g for g in demo if 'language = "javascript"' in (g.parents[1] / "task.toml").read_text()]
    assert len(copies) == 3 and len(demo) == 5 and len(demo_js) == 1
    assert all(c.read_bytes() == shared for c in copies + demo if c not in demo_js)
    assert demo_js[0].read_bytes() == node.read_bytes()


def test_vacuous_tests_are_found_in_every_id_scheme():
    """vitest/jest `file > describe > title`, ctrf `file: describe title`, Go `<import path>.TestX`,
    cargo `<package>::<target>: test`: a T0 test the patch adds that passes on the null world is
    vacuous; an older one that passes is a regression guard."""
    patch = (
        "diff --git a/src/err.test.ts b/src/err.test.ts\n--- a/src/err.test.ts\n+++ b/src/err.test.ts\n"
        "@@ -1,5 +1,9 @@\n describe('errors', () => {\n   it('keeps the message', () => {\n"
        "     expect(1).toBe(1)\n   })\n+  it('keeps the stack 1.5', () => {\n+    expect(2).toBe(2)\n+  })\n })\n"
        "diff --git a/slug/slug_test.go b/slug/slug_test.go\n--- a/slug/slug_test.go\n+++ b/slug/slug_test.go\n"
        "@@ -3,3 +3,7 @@ import \"testing\"\n func TestLower(t *testing.T) {\n }\n \n"
        "+func TestUnicode(t *testing.T) {\n+\tt.Log(1)\n+}\n"
        "diff --git a/tests/parse.rs b/tests/parse.rs\n--- a/tests/parse.rs\n+++ b/tests/parse.rs\n"
        "@@ -1,3 +1,7 @@\n #[test]\n fn old_case() {}\n \n+#[test]\n+fn new_case() {\n+    assert!(true);\n+}\n")
    new = ["src/err.test.ts > errors > keeps the stack 1.5", "src/err.test.ts: errors keeps the stack 1.5",
           "src/err.test.ts: errors > keeps the stack 1.5",
           "example.com/slug.TestUnicode", "calc::parse: new_case"]
    old = ["src/err.test.ts > errors > keeps the message", "example.com/slug.TestLower", "calc::parse: old_case"]
    task = _task([], new + old, patch)
    null = _run({i: "passed" for i in task.tests.ids})
    verdict = assess(task, null, _run({i: "passed" for i in task.tests.ids}))
    assert verdict.vacuous == new
    assert verdict.regression_guards == old
