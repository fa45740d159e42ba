"""Pure parts of the sandbox: diffs, harness detection, JUnit mapping, output caps, labels."""
from __future__ import annotations

import json

import subprocess
import sys

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.integrity import harness_reasons
from testjack_tui.sandbox.labels import L_PID, L_PIDSTART, owner_dead, owner_labels, process_start_time, slug
from testjack_tui.sandbox.output import HeadTail, OutputCollector
from testjack_tui.diffs import added_files, file_sections, touched_files
from testjack_tui.sandbox.runners import PytestRunner, aggregate, get_runner
from testjack_tui.sandbox.runners.junit import mangle, parse_junit
from testjack_tui.sandbox.selftest import BASE_FILES, FIXED_CALC, make_patch


def _exec(exit_code=1, timed_out=False, out="") -> ExecResult:
    return ExecResult(argv=["pytest"], exit_code=exit_code, timed_out=timed_out, stdout_head=out,
                      stdout_tail="", stderr_head="", stderr_tail="", log_path=None, duration=0.1)


def test_make_patch_applies_with_git(tmp_path):
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc/__init__.py").write_text(BASE_FILES["calc/__init__.py"])
    patch = make_patch({"calc/__init__.py": BASE_FILES["calc/__init__.py"], "new.txt": None},
                       {"calc/__init__.py": FIXED_CALC, "new.txt": "hello\n"})
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "calc/__init__.py").read_text() == FIXED_CALC
    assert (tmp_path / "new.txt").read_text() == "hello\n"
    assert touched_files(patch) == ("calc/__init__.py", "new.txt")
    assert added_files(patch) == {"new.txt"}


def test_file_sections_handle_plain_and_deleted_diffs():
    plain = "--- a/x.py\t2020-01-01\n+++ b/x.py\t2020-01-02\n@@ -1 +1 @@\n-a\n+b\n"
    assert list(file_sections(plain)) == ["x.py"]
    deleted = make_patch({"tests/test_sub.py": "x = 1\n"}, {"tests/test_sub.py": None})
    assert touched_files(deleted) == ("tests/test_sub.py",)


def test_harness_reasons_classify_tampering():
    patch = make_patch(
        {"conftest.py": None, "pkg/sub/conftest.py": "", "pytest.ini": None, "setup.cfg": "[metadata]\n",
         "pyproject.toml": "[project]\nname='x'\n", "sitecustomize.py": None, "evil.pth": None,
         "tests/test_a.py": "def test_a():\n    assert 0\n", "src/mod.py": "x = 1\n"},
        {"conftest.py": "import os\n", "pkg/sub/conftest.py": "x = 1\n", "pytest.ini": "[pytest]\n",
         "setup.cfg": "[metadata]\n[tool:pytest]\naddopts = -p evil\n",
         "pyproject.toml": "[project]\nname='y'\n", "sitecustomize.py": "import os\n",
         "evil.pth": "import os\n", "tests/test_a.py": "def test_a():\n    assert 1\n",
         "src/mod.py": "x = 2\n"})
    reasons = harness_reasons(patch)
    assert reasons["conftest.py"].startswith("pytest conftest")
    assert reasons["pkg/sub/conftest.py"].startswith("pytest conftest")
    assert reasons["pytest.ini"] == "pytest configuration"
    assert reasons["setup.cfg"] == "pytest configuration"
    assert "pyproject.toml" not in reasons  # a packaging change, not a pytest one
    assert reasons["sitecustomize.py"] == "interpreter start-up hook"
    assert reasons["evil.pth"] == "interpreter start-up hook"
    assert reasons["tests/test_a.py"] == "test file"
    assert "src/mod.py" not in reasons


def test_mangle_matches_pytest_junit_names():
    assert mangle("tests/test_x.py::test_a") == ("tests.test_x", "test_a")
    assert mangle("tests/test_x.py::TestK::test_b[1.5-a/b]") == ("tests.test_x.TestK", "test_b[1.5-a/b]")
    assert mangle("test_top.py::test_c") == ("test_top", "test_c")


JUNIT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_x" name="test_ok" file="tests/test_x.py" time="0.01"/>
<testcase classname="tests.test_x" name="test_bad" file="tests/test_x.py" time="0.02">
  <failure message="assert 1 == 2">long text</failure></testcase>
<testcase classname="tests.test_x.TestK" name="test_p[1.5]" file="tests/test_x.py"/>
<testcase classname="tests.test_x.TestK" name="test_p[2]" file="tests/test_x.py">
  <skipped message="not today"/></testcase>
<testcase classname="tests.test_y" name="test_err" file="tests/test_y.py">
  <error message="failed on setup with fixture"/></testcase>
<testcase classname="" name="tests.test_broken" time="0">
  <error message="collection failure">ImportError: boom</error></testcase>
</testsuite></testsuites>"""


def test_parse_junit_maps_back_to_node_ids():
    ids = ["tests/test_x.py::test_ok", "tests/test_x.py::test_bad", "tests/test_x.py::TestK",
           "tests/test_y.py::test_err", "tests/test_broken.py::test_z", "tests/test_x.py::test_gone"]
    outcomes, collection = parse_junit(JUNIT, ids)
    assert outcomes["tests/test_x.py::test_ok"].status == "passed"
    assert outcomes["tests/test_x.py::test_bad"].status == "failed"
    assert "assert 1 == 2" in outcomes["tests/test_x.py::test_bad"].message
    assert outcomes["tests/test_x.py::TestK::test_p[1.5]"].status == "passed"
    assert outcomes["tests/test_x.py::TestK::test_p[2]"].status == "skipped"
    assert outcomes["tests/test_y.py::test_err"].status == "error"
    assert "ImportError" in collection["tests/test_broken.py"]


def test_pytest_runner_fills_in_aggregates_missing_and_collection_errors():
    ids = ["tests/test_x.py::test_ok", "tests/test_x.py::TestK", "tests/test_broken.py::test_z",
           "tests/test_x.py::test_gone", "tests/test_x.py"]
    runner = PytestRunner()
    outcomes = runner.parse(ids, {"/tmp/tj/r/junit.xml": JUNIT}, _exec())
    assert outcomes["tests/test_x.py::TestK"].status == "passed"  # one passed, one skipped
    assert outcomes["tests/test_broken.py::test_z"].status == "error"
    assert outcomes["tests/test_x.py::test_gone"].status == "not_found"
    assert outcomes["tests/test_x.py"].status == "failed"
    # A file id is answered through its cases too (exports read the grader's ids from them).
    assert outcomes["tests/test_x.py::TestK::test_p[2]"].status == "skipped"
    assert outcomes["tests/test_x.py::test_ok"].status == "passed"


def test_pytest_runner_takes_ids_in_the_benchmarks_junit_scheme_and_answers_in_it():
    ids = ["tests.test_x.test_ok", "tests.test_x.TestK.test_p[1.5]", "tests.test_x.TestK",
           "tests.test_broken.test_z", "tests.test_x.test_gone", "tests/test_x.py::test_bad"]
    runner = PytestRunner()
    argv, _, files = runner.command(ids, workdir="/app", out_dir="/tmp/tj/r")
    spec = json.loads(files["/tmp/tj/r/spec.json"])
    # The launcher gets every node id a JUnit id can mean and runs the one whose file exists.
    assert spec["alternatives"]["tests.test_x.TestK.test_p[1.5]"][0] == "tests/test_x.py::TestK::test_p[1.5]"
    assert "tests/test_x.py::test_bad" not in spec["alternatives"]
    outcomes = runner.parse(ids, {"/tmp/tj/r/junit.xml": JUNIT}, _exec())
    assert all(o.id == i for i, o in outcomes.items()) and set(ids) <= set(outcomes)
    # Cases under a class id come back in the scheme it was asked in; nothing twice.
    assert outcomes["tests.test_x.TestK.test_p[2]"].status == "skipped"
    assert not any(k.startswith("tests/test_x.py::TestK") for k in outcomes)
    assert outcomes["tests.test_x.test_ok"].status == "passed"
    assert outcomes["tests.test_x.TestK.test_p[1.5]"].status == "passed"
    assert outcomes["tests.test_x.TestK"].status == "passed"
    assert outcomes["tests.test_broken.test_z"].status == "error"
    assert outcomes["tests.test_x.test_gone"].status == "not_found"
    assert outcomes["tests/test_x.py::test_bad"].status == "failed"


def test_pytest_runner_uses_progress_when_the_run_timed_out():
    progress = (b'{"id": "t.py::a", "event": "start"}\n'
                b'{"id": "t.py::a", "when": "setup", "outcome": "passed"}\n'
                b'{"id": "t.py::a", "when": "call", "outcome": "passed"}\n'
                b'{"id": "t.py::a", "when": "teardown", "outcome": "passed"}\n'
                b'{"id": "t.py::b", "event": "start"}\n'
                b'{"id": "t.py::b", "when": "setup", "outcome": "passed"}\n')
    outcomes = PytestRunner().parse(["t.py::a", "t.py::b", "t.py::c"],
                                    {"x/junit.xml": None, "x/progress.jsonl": progress},
                                    _exec(exit_code=None, timed_out=True))
    assert {k: o.status for k, o in outcomes.items()} == {
        "t.py::a": "passed", "t.py::b": "timed_out", "t.py::c": "timed_out"}


def test_pytest_runner_reports_a_crash_without_report_as_error():
    outcomes = PytestRunner().parse(["t.py::a"], {"x/junit.xml": None, "x/progress.jsonl": None},
                                    _exec(exit_code=137, out="Killed"))
    assert outcomes["t.py::a"].status == "error"
    assert "137" in outcomes["t.py::a"].message


def test_aggregate_and_runner_registry():
    assert aggregate([]) == "not_found"
    assert aggregate(["passed", "skipped"]) == "passed"
    assert aggregate(["passed", "failed", "error"]) == "failed"
    assert aggregate(["skipped"]) == "skipped"
    # one combiner: a test of the group that did not run keeps the group from passing
    assert aggregate(["passed", "not_found"]) == "not_found"
    assert aggregate(["error", "not_found"]) == "error"
    assert get_runner("pytest").name == "pytest"
    try:
        get_runner("cobol-unit")
    except Exception as exc:
        assert "no test runner" in str(exc)
    else:
        raise AssertionError("unknown framework accepted")


def test_launcher_drops_addopts_that_change_what_runs(tmp_path, monkeypatch):
    # Run the launcher's option cleaning on the host python (it is plain python3 code).
    from testjack_tui.sandbox.runners import pytest_runner
    code = pytest_runner.LAUNCHER.split("args = [sys.executable")[0].split("spec = json.load")[0]
    code += pytest_runner.LAUNCHER[pytest_runner.LAUNCHER.index("DROP = "):pytest_runner.LAUNCHER.index("args = [sys.executable")]
    namespace: dict = {}
    exec("import configparser, json, os, shlex, sys\n" + code, namespace)
    cleaned, dropped = namespace["clean"](["-x", "--maxfail", "2", "-v", "--lf", "-rxs", "-xvs",
                                           "--junitxml=out.xml", "--import-mode=importlib"])
    assert dropped == ["-x", "--maxfail 2", "--lf", "-x", "--junitxml=out.xml"]
    assert cleaned == ["-v", "-rxs", "-vs", "--import-mode=importlib"]
    assert namespace["clean"](["-q", "-p", "myplugin"]) == (["-q", "-p", "myplugin"], [])
    # xdist's workers and pytest-cov's thresholds break a focused run: left out, with their values.
    cleaned, dropped = namespace["clean"](["-n", "auto", "-n4", "--numprocesses=2", "--dist", "loadscope",
                                           "--cov", "pkg", "--cov-fail-under=90", "--cov-report", "term",
                                           "--doctest-modules", "--strict-markers"])
    assert cleaned == ["--doctest-modules", "--strict-markers"]
    assert dropped == ["-n auto", "-n4", "--numprocesses=2", "--dist loadscope", "--cov pkg",
                       "--cov-fail-under=90", "--cov-report term"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -x --tb=short\n")
    assert namespace["read_ini"]() == ("setup.cfg", {"addopts": "-x --tb=short"})
    # pytest's order: a pyproject.toml with ini options wins over setup.cfg; lists stay lists.
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = ["-n", "auto"]\n')
    assert namespace["read_ini"]() == ("pyproject.toml", {"addopts": ["-n", "auto"]})


def test_head_tail_and_collector_caps(tmp_path):
    buf = HeadTail(head_cap=10, tail_cap=10)
    buf.add(b"0123456789abcdefghijKLMNOPQRST")
    head, tail = buf.texts()
    assert head == "0123456789"
    assert tail.endswith("KLMNOPQRST") and "10 bytes not kept" in tail
    seen: list[str] = []
    col = OutputCollector("unit", seen.append, disk_cap=100, stream_cap=50)
    for _ in range(10):
        col.add(b"x" * 30, None)
    col.close()
    assert col.log_path.stat().st_size < 200
    assert "log cut at 100 bytes" in col.log_path.read_text()
    assert sum(s.count("x") for s in seen) == 50
    assert "the rest is in the log" in seen[-1]


def test_owner_labels_and_dead_owner_detection():
    labels = owner_labels("s1")
    assert not owner_dead(labels)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = process_start_time(child.pid)
    child.wait()
    assert owner_dead({L_PID: str(child.pid), L_PIDSTART: start})
    assert owner_dead({L_PID: "not-a-pid"})
    assert owner_dead({})
    assert slug("Tiny Task/#1") == "tiny-task-1"


def test_prestart_depth_is_one_per_slot_and_shrinks_when_memory_is_short():
    from testjack_tui.sandbox.pool import prestart_depth

    assert prestart_depth(2, available_mb=24_000) == 2
    assert prestart_depth(8, available_mb=2_000) == 3  # a tenth of 2 GB at 64 MB per container
    assert prestart_depth(2, available_mb=500) == 0


def test_the_selection_plugin_takes_an_id_and_what_lies_under_it(tmp_path):
    """What the in-container pytest plugin keeps: the id itself, its cases (`::`), its parameters
    (`[`) and, for a directory, its files; nothing that merely shares a prefix."""
    from testjack_tui.sandbox.runners.pytest_runner import PLUGIN

    plugin: dict = {}
    exec(compile(PLUGIN, "tj_select", "exec"), plugin)
    plugin["configure"](["tests/test_a.py::TestX", "tests/test_b.py::test_p", "tests/sub/",
                         "tests/test_c.py"], str(tmp_path / "progress.jsonl"))
    wanted = plugin["_wanted"]
    assert wanted("tests/test_a.py::TestX") and wanted("tests/test_a.py::TestX::test_y")
    assert wanted("tests/test_b.py::test_p[1-a::b]") and wanted("tests/sub/test_d.py::test_e")
    assert wanted("tests/test_c.py::TestZ::test_w[x]")
    assert not wanted("tests/test_a.py::TestXY::test_y") and not wanted("tests/test_b.py::test_pq")
    assert not wanted("tests/subway/test_d.py::test_e") and not wanted("tests/test_c.pyx::t")


def test_mapping_ten_thousand_junit_ids_converts_each_id_once(monkeypatch):
    """T0 of a large task (ids in the grader's JUnit scheme) maps to node ids in one pass; it used
    to be quadratic in T0's size (14 s of our own time per T0 run at a thousand ids)."""
    import testjack_tui.sandbox.t0 as t0
    from testjack_tui.model import Environment, OfficialTests, Reference, Task
    from testjack_tui.sandbox.t0 import direct_mapping

    converted = []
    real = t0.junit_to_pytest
    monkeypatch.setattr(t0, "junit_to_pytest", lambda i, files: (converted.append(i), real(i, files))[1])

    files = tuple(f"tests/test_mod_{t:02d}.py" for t in range(50))
    ids = tuple(f"tests.test_mod_{t:02d}.test_f_{t}_{k}" for t in range(50) for k in range(200))
    task = Task(id="big", instruction="", environment=Environment(image="x"), reference=Reference(patch=""),
                tests=OfficialTests(fail_to_pass=ids, test_files=files))
    mapping = direct_mapping(task, list(ids))
    assert len(converted) == len(ids)  # each id once, not once per id of T0
    assert mapping["tests.test_mod_07.test_f_7_3"] == "tests/test_mod_07.py::test_f_7_3"


def test_cli_calls_go_through_a_configured_socket_unless_one_of_ours_serves_the_local_storage(tmp_path):
    """A user's socket may serve other storage: podman CLI calls go through it (CONTAINER_HOST).
    A service one of our processes started (the test session shares one) serves this machine's
    storage: CLI calls stay local, where `podman build --volume` (the host's CA for a build's
    network) works."""
    import json
    import shutil
    import tempfile

    from pathlib import Path

    from testjack_tui.sandbox.service import PodmanService, _run_root, started_by_us

    ours = Path(tempfile.mkdtemp(prefix="s-", dir=_run_root()))
    try:
        (ours / "owner.json").write_text(json.dumps({"owner_pid": 1}))
        url = f"unix://{ours / 'podman.sock'}"
        assert started_by_us(url) and "CONTAINER_HOST" not in PodmanService(url).cli_env()
        foreign = f"unix://{tmp_path / 'podman.sock'}"
        assert not started_by_us(foreign) and PodmanService(foreign).cli_env()["CONTAINER_HOST"] == foreign
        (ours / "owner.json").unlink()  # no longer registered: not known to be ours
        assert not started_by_us(url)
    finally:
        shutil.rmtree(ours, ignore_errors=True)


def test_a_syntax_check_that_did_not_finish_is_not_a_file_that_parses():
    """syntax_error reads the check's exit: 3 and its line is the toolchain's error, 0 parses;
    anything else (podman could not start it: 127 and its word; a timeout) is "not checked"."""
    import asyncio

    import pytest

    from testjack_tui.errors import SandboxError
    from testjack_tui.sandbox.api import WorldRef
    from testjack_tui.sandbox.syntax_check import syntax_error

    class Answers:
        def __init__(self, result: ExecResult) -> None:
            self.result = result

        async def exec(self, world, argv, timeout, stdin):
            return self.result

    world = WorldRef(task_id="t", kind="null", trial_id=None, image="img", workdir="/repo")

    def check(result: ExecResult, kind: str = "go") -> str | None:
        return asyncio.run(syntax_error(Answers(result), world, kind, "x_test.go", "package x\n"))

    assert check(_exec(3, out="TJ_SYNTAX line 6: missing ',' (gofmt -e)\n")) == "line 6: missing ',' (gofmt -e)"
    for kind in ("go", "rust", "js"):
        assert check(_exec(0, out=""), kind) is None
        with pytest.raises(SandboxError, match=r"check in t/null did not finish \(exit 127\): Error: OCI runtime"):
            check(_exec(127, out="Error: OCI runtime error: crun: no such file\n"), kind)
        with pytest.raises(SandboxError, match=r"did not finish \(exit None, timed out\)"):
            check(_exec(None, timed_out=True), kind)
    # A TJ_SYNTAX line from a check that did not exit 3 is not the toolchain's verdict.
    with pytest.raises(SandboxError):
        check(_exec(1, out="TJ_SYNTAX line 1: forged\n"))
    assert check(_exec(5), "python") is None  # no toolchain check for this kind: nothing ran
