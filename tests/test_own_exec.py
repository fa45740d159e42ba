"""Our own runs and the agreement rule for runners other than pytest, without containers
(issue 27 items 1-2; the podman side is tests/test_hostile_channels_langs.py)."""
from __future__ import annotations

import json

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.canaries import Canaries
from testjack_tui.sandbox.channels import judge_channels
from testjack_tui.sandbox.api import TestOutcome as Outcome
from testjack_tui.sandbox.own_exec import STRIP, exit_agreement, mark_canaries
from testjack_tui.sandbox.runners import get_runner


def result(code: int = 1, out: str = "", timed_out: bool = False) -> ExecResult:
    return ExecResult(argv=[], exit_code=code, timed_out=timed_out, stdout_head=out, stdout_tail="",
                      stderr_head="", stderr_tail="", log_path=None, duration=0.1)


GO_CANARY = Canaries(files={"pkg/zz_test.go": ""},
                     expected={"pkg/zz_test.go::TestOk": "passed", "pkg/zz_test.go::TestBad": "failed"})


def test_go_runs_each_witness_test_and_two_canaries_by_the_package_binary():
    files = {"pkg/a_test.go": "package pkg\n\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\n"
             "func helper(t *testing.T) {}\n"}
    plan = get_runner("go test").own_plan(["pkg/a_test.go"], files, GO_CANARY)
    assert list(plan.builds) == ["go-pkg"]
    assert plan.builds["go-pkg"]["argv"][-4:] == ["-c", "-o", "{out}", "./pkg"]
    assert set(plan.tests) == {"pkg/a_test.go::TestA", "pkg/a_test.go::TestB", *GO_CANARY.expected}
    test_a = plan.tests["pkg/a_test.go::TestA"]
    assert (test_a["argv"], test_a["cwd"], test_a["build"]) == (["{bin}", "-test.run", "^TestA$", "-test.count=1"],
                                                                "pkg", "go-pkg")
    # No own run for a test its report failed and passed nowhere (only a pass is a claim).
    import re
    suffix, failed, passed = test_a["failed_if"]
    fail = '{"Time":"t","Action":"fail","Package":"p","Test":"TestA","Elapsed":0}'
    assert suffix == "go-test.jsonl" and re.search(failed, fail, re.M) and not re.search(passed, fail, re.M)
    assert re.search(passed, fail.replace('"fail"', '"pass"'), re.M)
    request = plan.request()
    assert request["mode"] == "exec" and request["vary"] and request["varied_uid"] == 10002
    assert "JEST_" in STRIP and "CARGO" in STRIP and "VITEST" in STRIP


def test_cargo_runs_each_test_by_its_target_binary_with_exact():
    files = {"crates/k/tests/tj.rs": "#[test]\nfn one() {}\n\n#[test]\n#[should_panic]\nfn two() { panic!() }\n"}
    plan = get_runner("cargo test").own_plan(["crates/k/tests/tj.rs"], files, None)
    [build] = plan.builds.values()
    assert build["pick"] == "cargo" and build["argv"][-4:] == ["--manifest-path", "crates/k/Cargo.toml", "--test", "tj"]
    assert plan.tests["crates/k/tests/tj.rs::two"]["argv"] == ["{bin}", "--exact", "two", "--test-threads=1"]
    assert plan.tests["crates/k/tests/tj.rs::one"]["cwd"] == "crates/k"


def test_js_and_django_run_their_launcher_alone_per_witness():
    for framework in ("jest", "vitest", "mocha"):
        plan = get_runner(framework).own_plan(["test/a.test.js"], {"test/a.test.js": ""}, None)
        assert plan.tests["test/a.test.js"]["spec"]["plain"] is True
        assert plan.tests["test/a.test.js"]["spec"]["ids"] == ["test/a.test.js"]
        # vitest cannot run as another uid (vite writes beside its config): its replay keeps the uid.
        assert plan.tests["test/a.test.js"].get("keep_uid", False) == (framework == "vitest")
        # A T0 run (no candidate files) gets no own run.
        assert not get_runner(framework).own_plan(["test/a.test.js"], {}, None).tests
    plan = get_runner("django").own_plan(["tests/app/test_x.py"], {"tests/app/test_x.py": ""}, None)
    assert plan.tests["tests/app/test_x.py"]["spec"]["labels"] == {"tests/app/test_x.py": "app.test_x"}


def test_node_test_runs_whole_files_with_a_canary_file_that_passes_whole():
    """node 18 runs the hooks of suites --test-name-pattern filters out, so node --test's own run
    is a whole file per process: the witness files named whole, the canary file whose tests all
    pass (exit 0) and one holding a must-fail test (exit not 0)."""
    from testjack_tui.sandbox.canaries import whole_file_canaries

    runner = get_runner("node --test")
    canary = runner.make_canaries(["test/a.test.js", "test/b.test.js::s > t"])
    musts = {}
    for node, must in canary.expected.items():
        musts.setdefault(node.partition("::")[0], set()).add(must)
    assert sorted(map(sorted, musts.values())) == [["error", "failed", "passed"], ["passed"]]
    assert set(canary.files) == set(musts) and all(p.startswith("test/") for p in canary.files)
    picks = whole_file_canaries(canary)
    assert musts[picks["passed"].partition("::")[0]] == {"passed"}
    assert "failed" in musts[picks["failed"].partition("::")[0]]
    files = {"test/a.test.js": "", "test/b.test.js": "", **canary.files}
    plan = mark_canaries(runner.own_plan(["test/a.test.js", "test/b.test.js::s > t"], files, canary), canary)
    assert set(plan.tests) == {"test/a.test.js", picks["passed"], picks["failed"]}
    for key, test in plan.tests.items():
        assert test["spec"]["plain"] is True and test["spec"]["ids"] == [key.partition("::")[0]]
        assert test.get("canary") == canary.expected.get(key)  # what it must be: "passed", "failed"
    assert {plan.tests[picks[m]]["canary"] for m in ("passed", "failed")} == {"passed", "failed"}
    # Only single tests named: nothing runs whole, so no own run (and no canary of it).
    assert not runner.own_plan(["test/b.test.js::s > t"], files, canary).tests


def test_exit_status_and_summary_against_the_report():
    assert exit_agreement("go test", result(0), ["TestA"])[0].startswith("go test exited 0")
    assert exit_agreement("go test", result(1), ["TestA"]) == []
    assert exit_agreement("go test", result(0, timed_out=True), ["TestA"]) == []
    said = exit_agreement("cargo test", result(101), [], 1, "test result: FAILED. 0 passed; 1 failed;")
    assert said and "terminal summary" in said[0]
    assert exit_agreement("cargo test", result(101), ["x"], 1, "") == []


def test_each_runner_reads_its_own_summary():
    cargo = get_runner("cargo test")
    log = ("Running tests/tj.rs (target/debug/deps/tj-1)\n\nrunning 1 test\ntest one ... FAILED\n"
           "test one ... ok\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored\n")
    assert cargo.agreement({"/o/cargo-test.log": log.encode(), "/o/cargo-plan.json": b"{}"}, result(101))
    honest = log.replace("test one ... ok\n", "")
    assert cargo.agreement({"/o/cargo-test.log": honest.encode(), "/o/cargo-plan.json": b"{}"}, result(101)) == []
    go = get_runner("go test")
    events = "\n".join(json.dumps(e) for e in [{"Action": "run", "Package": "p", "Test": "TestA"},
                                                {"Action": "fail", "Package": "p", "Test": "TestA"}])
    assert go.agreement({"/o/go-test.jsonl": events.encode()}, result(0))
    assert go.agreement({"/o/go-test.jsonl": events.encode()}, result(1)) == []
    django = get_runner("django")
    forged = ("test_it (greetings.test_x.T) ... FAIL\n\nFAILED (failures=1)\ntest_it (greetings.test_x.T) ... ok\n")
    assert django.agreement({"/o/runtests.log": forged.encode()}, result(1))
    jest = get_runner("jest")
    report = {"testResults": [{"assertionResults": [{"status": "failed", "fullName": "a b"}]}]}
    assert jest.agreement({"/o/node-report.json": json.dumps(report).encode()}, result(0))


def test_a_pass_the_runners_own_process_fails_is_proof():
    outcomes = {"pkg/a_test.go::TestA": Outcome("pkg/a_test.go::TestA", "passed"),
                "pkg/zz_test.go::TestOk": Outcome("x", "passed"), "pkg/zz_test.go::TestBad": Outcome("y", "failed")}
    own = {"pkg/a_test.go::TestA": 1, "pkg/zz_test.go::TestOk": 0, "pkg/zz_test.go::TestBad": 1}
    trailer = {"reports": {}, "own": own, "varied": {}, "survivors": [], "changed": []}
    check = judge_channels(outcomes, GO_CANARY, trailer, result(1), [])
    assert check.proven and "own run failed" in check.proven[0]
