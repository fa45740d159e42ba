"""How many processes our own runs and the varied replay start per witness run (issue #32: a
jest or vitest process costs seconds of CPU). The run wrapper's own functions, run here on real
processes without a container: a witness that passes in the varied environment, beside canaries
that come out right, is run once; only what does not pass there runs again in the usual
environment; a run whose report passes nothing starts none. The counts are the wrapper's own
bookkeeping (`_tj_starts`, in the trailer as `cost`)."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from testjack_tui.sandbox.canaries import Canaries
from testjack_tui.sandbox.channels import judge_channels, own_budget, own_request
from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.api import TestOutcome as Outcome
from testjack_tui.sandbox.own_exec import OwnPlan, mark_canaries
from testjack_tui.sandbox.own_run import DRIVER
from testjack_tui.sandbox.runners.run_wrapper import WRAPPER

FUNCTIONS = ("_tj_limit_cpu", "_tj_faked_clock", "_tj_drive", "_tj_not_passed", "_tj_own_budget",
             "_tj_own_runs", "_tj_vouch", "_tj_settle", "_tj_exec_runs", "_tj_json_failed", "_tj_tests_in",
             "_tj_unsupported", "_tj_hide_sources", "_tj_idle", "_tj_only")


# As root the wrapper runs the varied replay as another uid, which cannot read a Python under /root.
PY = (shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") if os.getuid() == 0 else None) or sys.executable


@pytest.fixture
def repo() -> Iterator[str]:
    # Readable by the varied uid the wrapper switches to when it runs as root.
    folder = tempfile.mkdtemp(prefix="tj-starts-", dir="/tmp")
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def wrapper(repo: str, reports: dict[str, bytes] | None = None) -> dict:
    """The wrapper's after-exit functions over REPO (its module-level state as in a run)."""
    space: dict = {"base64": base64, "os": os, "json": json, "subprocess": subprocess,
                   "sys": SimpleNamespace(executable=PY),
                   "_tj": {"repo": repo}, "_tj_owner": None, "_tj_since": 0,
                   "_tj_env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/root"},
                   "_tj_reports": {k: base64.b64encode(v).decode() for k, v in (reports or {}).items()},
                   "_tj_starts": {"build": 0, "own": 0, "varied": 0}}
    for name in FUNCTIONS:
        start = WRAPPER.index(f"\ndef {name}(") + 1
        end = re.compile(r"\n(?=[^\s])").search(WRAPPER, start).start()  # the next top-level line
        exec(WRAPPER[start:end], space)  # noqa: S102 - our own source
    return space


def exits(code: str) -> list[str]:
    return [PY, "-c", f"import os, sys\nsys.exit({code})"]


HOME_IS_USUAL = "0 if os.environ.get('HOME') == '/root' else 1"  # right only in the usual environment
EXEC_CANARY = Canaries(files={"c_test.go": ""}, expected={"c_test.go::TestOk": "passed", "c_test.go::TestBad": "failed"})


def exec_plan(witnesses: dict[str, str], canary: Canaries | None, **extra: object) -> dict:
    plan = OwnPlan()
    for key, code in witnesses.items():
        plan.tests[key] = {"argv": exits(code), "cwd": "", **extra}
    if canary is not None:
        plan.tests["c_test.go::TestOk"] = {"argv": exits("0"), "cwd": ""}
        plan.tests["c_test.go::TestBad"] = {"argv": exits("1"), "cwd": ""}
    return own_budget({**mark_canaries(plan, canary).request(), "faketime": "/nonexistent"}, None)


def run_exec(repo: str, witnesses: dict[str, str], canary: Canaries | None = EXEC_CANARY,
             reports: dict[str, bytes] | None = None, **extra: object) -> tuple[dict, dict, dict]:
    space = wrapper(repo, reports)
    own, varied = space["_tj_exec_runs"](exec_plan(witnesses, canary, **extra), os.getuid(), 0.0)
    return own, varied, space["_tj_starts"]


def test_honest_witnesses_and_the_canaries_run_once_each_in_the_varied_environment(repo):
    """A runner process per test and canary, none again: 3 witnesses cost 5 processes (the
    usual own run first, then the varied replay of every pass, cost 2 x 3 + 3 = 9)."""
    own, varied, starts = run_exec(repo, {f"w_test.go::TestW{i}": "0" for i in range(3)})
    assert starts == {"build": 0, "own": 0, "varied": 5}
    assert all(own[f"w_test.go::TestW{i}"] == 0 and varied[f"w_test.go::TestW{i}"] == 0 for i in range(3))
    assert (varied["c_test.go::TestOk"], varied["c_test.go::TestBad"]) == (0, 1)
    assert own["c_test.go::TestOk"] == own["c_test.go::TestBad"] == 5  # not needed


def test_what_fails_in_the_varied_environment_runs_again_in_the_usual_one_with_the_canaries(repo):
    own, varied, starts = run_exec(repo, {"w_test.go::TestA": "0", "w_test.go::TestHome": HOME_IS_USUAL,
                                          "w_test.go::TestBroken": "1"})
    assert starts == {"build": 0, "own": 2 + 2, "varied": 3 + 2}
    assert (own["w_test.go::TestA"], own["w_test.go::TestHome"], own["w_test.go::TestBroken"]) == (0, 0, 1)
    assert varied["w_test.go::TestHome"] == 1  # environment-dependent: judged as before
    assert "w_test.go::TestBroken" not in varied  # fails in our own run: the varied run says nothing of it
    assert (own["c_test.go::TestOk"], own["c_test.go::TestBad"]) == (0, 1)


def test_a_varied_run_whose_canaries_are_wrong_vouches_for_nothing(repo):
    """A must-fail canary passing in the varied run (a forged exit status): every witness runs
    again in the usual environment with the canaries, whose verdicts are judged as before."""
    space = wrapper(repo)
    plan = exec_plan({"w_test.go::TestA": "0"}, EXEC_CANARY)
    plan["tests"] = [(k, dict(t, argv=exits("0")) if k == "c_test.go::TestBad" else t) for k, t in plan["tests"]]
    own, varied = space["_tj_exec_runs"](plan, os.getuid(), 0.0)
    assert space["_tj_starts"] == {"build": 0, "own": 3, "varied": 3}
    outcomes = {k: Outcome(k, "passed") for k in ("w_test.go::TestA", "c_test.go::TestOk")}
    outcomes["c_test.go::TestBad"] = Outcome("c_test.go::TestBad", "failed")
    check = judge_channels(outcomes, EXEC_CANARY, {"own": own, "varied": varied}, result(), [])
    assert own == {"w_test.go::TestA": 0, "c_test.go::TestOk": 0, "c_test.go::TestBad": 0}
    assert any("must be failed came out passed" in p for p in check.proven)


def test_without_canaries_a_varied_pass_is_all_the_reference_needs(repo):
    own, varied, starts = run_exec(repo, {"w_test.go::TestA": "0", "w_test.go::TestHome": HOME_IS_USUAL}, None)
    assert starts == {"build": 0, "own": 1, "varied": 2}
    assert own == {"w_test.go::TestA": 5, "w_test.go::TestHome": 0} and varied["w_test.go::TestHome"] == 1


def jest_report(repo: str) -> bytes:
    """A JSON report (absolute file names) of a file with a failed and a passed test, and a
    file that failed to load."""
    return json.dumps({"testResults": [
        {"name": f"{repo}/test/a.test.js", "status": "failed", "assertionResults": [
            {"ancestorTitles": ["adds"], "title": "one", "status": "failed"},
            {"ancestorTitles": ["adds"], "title": "two", "status": "passed"}]},
        {"name": f"{repo}/test/b.test.js", "status": "failed", "assertionResults": []}]}).encode()


def test_a_run_whose_report_passes_no_witness_starts_no_process(repo):
    """jest, vitest, mocha, node --test: the JSON report failing every witness (a test failed,
    a file that did not load) leaves nothing to check; a pass anywhere among them is checked."""
    reports = {"/tmp/tj/run-1/node-report.json": jest_report(repo)}
    for key, path, name in [("test/a.test.js::adds > one", "test/a.test.js", "adds > one"),
                            ("test/b.test.js", "test/b.test.js", "")]:
        _, _, starts = run_exec(repo, {key: "0"}, reports=reports,
                                failed_if=("node-report.json", "json", path, name))
        assert sum(starts.values()) == 0, key
    _, _, starts = run_exec(repo, {"test/a.test.js": "0"}, reports=reports,
                            failed_if=("node-report.json", "json", "test/a.test.js", ""))
    assert starts == {"build": 0, "own": 0, "varied": 3}  # one of its tests passed: a claim


def result() -> ExecResult:
    return ExecResult(argv=[], exit_code=1, timed_out=False, stdout_head="", stdout_tail="",
                      stderr_head="", stderr_tail="", log_path=None, duration=0.1)


PY_CANARY = Canaries(files={"tests/test_c.py": ""},
                     expected={"tests/test_c.py::test_p": "passed", "tests/test_c.py::test_f": "failed"})


def run_pytest(repo: str, witness: str, canary: Canaries | None = PY_CANARY,
               canary_text: str = "def test_p():\n    pass\n\n\ndef test_f():\n    assert 1 == 2\n"
               ) -> tuple[dict, dict, dict]:
    os.makedirs(os.path.join(repo, "tests"), mode=0o755)
    files = {"tests/test_w.py": witness, "tests/test_c.py": canary_text}
    for path, text in files.items():
        with open(os.path.join(repo, path), "w") as fh:
            fh.write(text)
    driver = os.path.join(repo, "driver.py")
    with open(driver, "w") as fh:
        fh.write(DRIVER)
    for path in (driver, *(os.path.join(repo, p) for p in files)):
        os.chmod(path, 0o644)
    space = wrapper(repo)
    own = own_budget(own_request([("tests/test_w.py", None)], canary, driver, "/nonexistent", 60, 24), None)
    normal, varied = space["_tj_own_runs"](own, os.getuid(), 0.0, None)
    return normal, varied, space["_tj_starts"]


def test_pytest_witnesses_passing_the_varied_driver_need_one_process(repo):
    normal, varied, starts = run_pytest(repo, "def test_a():\n    assert 20 + 22 == 42\n\n\ndef test_b():\n    pass\n")
    assert starts == {"build": 0, "own": 0, "varied": 1}  # was one own run and one varied replay
    assert normal["tests/test_w.py::test_a"] == normal["tests/test_w.py::test_b"] == 0
    assert (varied["tests/test_c.py::test_p"], varied["tests/test_c.py::test_f"]) == (0, 1)


def test_pytest_witness_right_only_in_the_usual_environment_runs_in_both(repo):
    witness = "import os\n\n\ndef test_home():\n    assert os.environ['HOME'] == '/root'\n"
    normal, varied, starts = run_pytest(repo, witness)
    assert starts == {"build": 0, "own": 1, "varied": 1}
    assert normal["tests/test_w.py::test_home"] == 0 and varied["tests/test_w.py::test_home"] == 1
    assert (normal["tests/test_c.py::test_p"], normal["tests/test_c.py::test_f"]) == (0, 1)


def test_pytest_reference_keeps_its_one_varied_process(repo):
    normal, _, starts = run_pytest(repo, "def test_a():\n    pass\n", canary=None)
    assert starts == {"build": 0, "own": 0, "varied": 1}
    assert normal == {"tests/test_w.py::test_a": 5}  # NOT_NEEDED: no channel is judged there


def test_pytest_tests_taking_fixtures_or_async_start_no_second_process(repo):
    """The driver calls a test taking arguments (fixtures, pytest's parameters) or an async one
    in no environment (3, not measured): it is not driven at all, so it no longer sends the run
    to a second process in the usual environment; the canaries still run beside the others."""
    witness = ("def test_a():\n    pass\n\n\ndef test_f(tmp_path):\n    assert tmp_path\n\n\n"
               "async def test_c():\n    pass\n")
    normal, varied, starts = run_pytest(repo, witness)
    assert starts == {"build": 0, "own": 0, "varied": 1}  # was one varied and one own run
    assert normal["tests/test_w.py::test_a"] == 0
    assert normal["tests/test_w.py::test_f"] == normal["tests/test_w.py::test_c"] == 3  # not measured, as before
    assert "tests/test_w.py::test_f" not in varied and "tests/test_w.py::test_c" not in varied
    assert (varied["tests/test_c.py::test_p"], varied["tests/test_c.py::test_f"]) == (0, 1)


def test_pytest_driver_gets_only_the_canary_tests_it_runs(repo):
    """Our driver runs a must-pass and a must-fail canary test; the rest of the canary file (the
    error canary's fixture and its `import pytest`, which only pytest's run needs) is blank in
    the text it gets, so a driver whose witnesses import no pytest imports none (here: a module
    this interpreter cannot import, which would fail every canary)."""
    canary = ("import tj_no_such_module\n\n\n@tj_no_such_module.fixture\ndef fx():\n    raise LookupError\n\n\n"
              "def test_e(fx):\n    pass\n\n\ndef test_p():\n    pass\n\n\ndef test_f():\n    assert 1 == 2\n")
    normal, varied, starts = run_pytest(repo, "def test_a():\n    pass\n", canary_text=canary)
    assert starts == {"build": 0, "own": 0, "varied": 1}
    assert normal["tests/test_w.py::test_a"] == 0
    assert (varied["tests/test_c.py::test_p"], varied["tests/test_c.py::test_f"]) == (0, 1)
