"""Export ids in the grader's own scheme (issue 29.3): the ids a task's own grader reports only
once the witnesses are added are theirs, whatever our runner calls them; a failing check says
why from the grader's own output."""
from __future__ import annotations

from testjack_tui.engine.export_official import diagnose, grader_names
from testjack_tui.sandbox import api

JEST = ('describe("parseQuery plus", () => {\n  it("decodes + as a space", () => {});\n'
        '  it("keeps %2B", () => {});\n});\n')
EMPTY = 'describe("empty pairs", () => {\n  it("are dropped", () => {});\n});\n'


def test_the_witnesses_ids_are_what_the_grader_reported_only_with_them():
    baseline = ["parseQuery decoding strips a leading question mark", "parseQuery unlisted older test"]
    probe = baseline + ["parseQuery plus decodes + as a space", "empty pairs are dropped",
                        "parseQuery plus keeps %2B"]
    names = grader_names(baseline, probe, [("src/__tests__/plus.tj.test.ts", JEST),
                                           ("src/__tests__/empty.tj.test.ts", EMPTY)])
    assert names == {"src/__tests__/plus.tj.test.ts": ["parseQuery plus decodes + as a space",
                                                       "parseQuery plus keeps %2B"],
                     "src/__tests__/empty.tj.test.ts": ["empty pairs are dropped"]}


def test_each_reporters_scheme_is_matched_to_its_file():
    go = 'package textkit\n\nfunc TestTJSlugifyUnderscore(t *testing.T) {}\n'
    rust = "#[test]\nfn zero_is_rejected() {}\n"
    vitest = 'describe("plus", () => { it("decodes + as a space", () => {}) })\n'
    files = [("underscore_tj_test.go", go), ("tests/tj_range.rs", rust), ("test/plus.tj.test.ts", vitest)]
    probe = ["example.com/textkit.TestTJSlugifyUnderscore", "roman::tj_range: zero_is_rejected",
             "test/plus.tj.test.ts: plus > decodes + as a space", "tests.test_x.TestY.test_z"]
    names = grader_names(["tests.test_x.TestY.test_z"], probe, files)
    assert names == {"underscore_tj_test.go": ["example.com/textkit.TestTJSlugifyUnderscore"],
                     "tests/tj_range.rs": ["roman::tj_range: zero_is_rejected"],
                     "test/plus.tj.test.ts": ["test/plus.tj.test.ts: plus > decodes + as a space"]}


def run(statuses: dict[str, str], reward: float, output: str = "") -> api.TestRun:
    return api.TestRun(world="t/reference", test_ids=list(statuses),
                   outcomes={i: api.TestOutcome(i, s, "") for i, s in statuses.items() if s != "not_found"},
                   exec=api.ExecResult(["bash", "test.sh"], 0, False, output, "", "", "", None, 1.0), flow="official",
                   reward=reward)


def test_a_failed_check_names_missing_ids_failing_tests_or_a_gate():
    assert diagnose(run({"a b": "not_found", "c": "passed"}, 0.0), ["a b", "c"]) == \
        "1 id(s) missing from the grader's report, e.g. ['a b']"
    assert diagnose(run({"a b": "failed", "c": "passed"}, 0.0), ["a b", "c"]) == \
        "1 test(s) failing in the grader's report: a b (failed)"
    said = diagnose(run({"c": "passed"}, 0.0, "building\n[gate] npm run build: exit 2\nreward 0\n"), ["c"])
    assert said.startswith("every id passed but the grader wrote reward 0.0: a gate of test.sh decided")
    assert "[gate] npm run build: exit 2" in said


def test_a_stored_run_of_test_sh_is_the_exports_run_only_with_the_same_inputs(tmp_path):
    """The check takes its run of the unchanged task on G from the audit's run of T0 there only
    when test.sh would read the very same inputs: a changed byte of the tests folder, another
    patch, another world kind or other settings make it another run."""
    import dataclasses
    import shutil
    from pathlib import Path

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.engine.runner import official_inputs

    task = load_benchmark(Path(__file__).parent / "fixtures" / "jest").tasks["clamp-bounds"]
    ev = task.tests.evaluator
    assert ev is not None and ev.tests_dir is not None
    same = official_inputs(task, "reference")
    assert same and same == official_inputs(dataclasses.replace(task), "reference")
    copy = tmp_path / "tests"
    shutil.copytree(ev.tests_dir, copy)
    moved = dataclasses.replace(task, tests=dataclasses.replace(
        task.tests, evaluator=dataclasses.replace(ev, tests_dir=copy)))
    assert official_inputs(moved, "reference") == same  # the folder's content, not where it lies
    (copy / "test.sh").write_text((copy / "test.sh").read_text() + "\n# changed\n")
    assert official_inputs(moved, "reference") != same
    other_patch = dataclasses.replace(task, reference=dataclasses.replace(task.reference,
                                                                         patch=task.reference.patch + "\n"))
    assert official_inputs(other_patch, "reference") != same
    assert official_inputs(task, "null") not in ("", same)
    longer = dataclasses.replace(task, tests=dataclasses.replace(
        task.tests, evaluator=dataclasses.replace(ev, timeout_sec=ev.timeout_sec + 1)))
    assert official_inputs(longer, "reference") != same
    no_flow = dataclasses.replace(task, tests=dataclasses.replace(task.tests, evaluator=None))
    assert official_inputs(no_flow, "reference") == ""
