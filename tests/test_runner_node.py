"""The vitest/jest runner without containers: its launcher in a repo whose node_modules/.bin
holds a stand-in tool that writes a recorded JSON report, and the parser on what a user sees."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.runners import get_runner, grader_ids, runner_name
from testjack_tui.sandbox.runners.node_runner import LAUNCHER
from testjack_tui.benchmarks.languages import framework_of_tool


def result(code=1, timed_out=False):
    return ExecResult(argv=[], exit_code=None if timed_out else code, timed_out=timed_out,
                      stdout_head="", stdout_tail="", stderr_head="", stderr_tail="",
                      log_path=None, duration=1.0)


def assertion(titles, status, message=""):
    return {"ancestorTitles": titles[:-1], "title": titles[-1], "fullName": " ".join(titles),
            "status": status, "failureMessages": [message] if message else [], "duration": 3}


def launch(tmp_path: Path, framework: str, ids: list[str], files: dict[str, str], suites: list,
           deps: dict | None = None, code: int = 1, log: str = ""):
    repo = tmp_path / "repo"
    pkg = {"name": "x", "devDependencies": deps if deps is not None else {framework: "1"}}
    for rel, text in {"package.json": json.dumps(pkg), **files}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    report = {"testResults": [{"name": f"{repo}/{name}", "status": status, "message": message,
                               "assertionResults": tests} for name, status, message, tests in suites]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    bindir = repo / "node_modules" / ".bin"
    bindir.mkdir(parents=True)
    for tool in [t for t in ("vitest", "jest") if t in pkg["devDependencies"]]:  # what npm installed
        fake = bindir / tool
        fake.write_text("#!/bin/sh\n"
                        f"printf '%s\\n' \"$@\" > {tmp_path}/argv-{tool}\n"
                        "for a in \"$@\"; do case \"$a\" in --outputFile=*) out=${a#--outputFile=};; esac; done\n"
                        f"prev=''; for a in \"$@\"; do [ \"$prev\" = --outputFile ] && out=$a; prev=$a; done\n"
                        f"cp {tmp_path}/report.json \"$out\"\necho '{log}'\nexit {code}\n")
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    launcher = tmp_path / "node_launch.py"
    launcher.write_text(LAUNCHER)
    out = tmp_path / "out"
    runner = get_runner(framework)
    argv, env, _ = runner.command(ids, workdir=str(repo), out_dir=str(out))
    for _path, _text in runner.command(ids, workdir=str(repo), out_dir=str(out))[2].items():
        Path(_path).parent.mkdir(parents=True, exist_ok=True)
        Path(_path).write_text(_text)
    proc = subprocess.run([sys.executable, str(launcher), str(out / "spec.json")], env={**os.environ, **env}, capture_output=True)
    reports = {p: Path(p).read_bytes() if Path(p).exists() else None for p in runner.report_paths(str(out))}
    used = [t for t in ("vitest", "jest") if (tmp_path / f"argv-{t}").exists()]
    tool_argv = (tmp_path / f"argv-{used[0]}").read_text().split("\n") if used else []
    return used, tool_argv, runner.parse(ids, reports, result(proc.returncode))


SUITE = ("test/query.test.ts", "failed", "", [
    assertion(["parseQuery", "reads key=value pairs"], "passed"),
    assertion(["parseQuery", "decoding", "strips a leading question mark"], "failed", "expected {} to equal"),
    assertion(["parseQuery", "decoding", "decodes percent escapes"], "passed"),
    assertion(["parseQuery", "later"], "todo"),
])


def test_vitest_ids_files_and_describe_blocks_in_one_run(tmp_path):
    ids = ["test/query.test.ts: parseQuery > reads key=value pairs",
           "test/query.test.ts: parseQuery > decoding > strips a leading question mark",
           "test/query.test.ts::parseQuery > decoding",  # a describe block
           "test/plus.tj.test.ts", "test/query.test.ts: parseQuery > gone", "test/missing.test.ts"]
    witness = ("test/plus.tj.test.ts", "passed", "", [assertion(["decodes + as a space"], "passed")])
    used, argv, out = launch(tmp_path, "vitest", ids, {"test/query.test.ts": "", "test/plus.tj.test.ts": ""},
                             [SUITE, witness])
    assert used == ["vitest"]
    assert argv[0] == "run" and "--reporter=json" in argv
    assert argv[-3:-1] == ["test/query.test.ts", "test/plus.tj.test.ts"]  # each file once
    assert out[ids[0]].status == "passed"
    assert out[ids[1]].status == "failed" and "to equal" in out[ids[1]].message
    assert out[ids[2]].status == "failed"
    assert out[ids[3]].status == "passed"
    assert out["test/plus.tj.test.ts::decodes + as a space"].status == "passed"
    assert out[ids[4]].status == "not_found"
    assert out[ids[5]].status == "not_found" and out[ids[5]].message == "no such test file"
    assert grader_ids("vitest", "test/plus.tj.test.ts", {k: {} for k in out}) == [
        "test/plus.tj.test.ts: decodes + as a space"]


def test_a_file_that_fails_to_load_is_an_error(tmp_path):
    broken = ("test/plus.tj.test.ts", "failed", "SyntaxError: Unexpected token", [])
    _, _, out = launch(tmp_path, "vitest", ["test/plus.tj.test.ts"], {"test/plus.tj.test.ts": ""}, [broken])
    assert out["test/plus.tj.test.ts"].status == "error"
    assert "SyntaxError" in out["test/plus.tj.test.ts"].message


def test_jest_by_full_name_and_tool_from_package_json(tmp_path):
    # The task says jest and jest is installed; then a task saying jest in a vitest repo.
    ids = ["parseQuery reads key=value pairs", "parseQuery decoding decodes percent escapes"]
    used, argv, out = launch(tmp_path, "jest", ids, {}, [SUITE], deps={"jest": "29"})
    assert used == ["jest"] and "--json" in argv and "--runTestsByPath" not in argv
    assert [out[i].status for i in ids] == ["passed", "passed"]
    (tmp_path / "b").mkdir()
    used, _, _ = launch(tmp_path / "b", "jest", ids, {}, [SUITE], deps={"vitest": "1"})
    assert used == ["vitest"]


def test_timeout_and_missing_tool(tmp_path):
    runner = get_runner("vitest")
    plan = json.dumps({"tool": "vitest", "files": {"test/a.test.ts": True}, "workdir": "/app"}).encode()
    out = runner.parse(["test/a.test.ts"], {"x/node-plan.json": plan}, result(timed_out=True))
    assert out["test/a.test.ts"].status == "timed_out"
    none = json.dumps({"tool": None, "files": {}, "workdir": "/app"}).encode()
    out = runner.parse(["test/a.test.ts"], {"x/node-plan.json": none}, result(code=4))
    assert out["test/a.test.ts"].status == "error" and "neither vitest nor jest" in out["test/a.test.ts"].message


def test_framework_from_deepswe_tool_labels():
    assert framework_of_tool("vitest-junit-to-ctrf") == "vitest"
    assert framework_of_tool("jest-ctrf-json-reporter") == "jest"
    assert framework_of_tool("cargo-nextest") == "cargo nextest"
    assert framework_of_tool("go-ctrf-json-reporter") == "go test"
    assert runner_name("vitest") == "vitest" and runner_name("jest") == "jest"
