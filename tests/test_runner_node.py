"""The vitest/jest runner without containers: its launcher in a repo whose node_modules/.bin
holds a stand-in tool that writes a recorded JSON report, and the parser on what a user sees."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from pathlib import Path

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.runners import get_runner, grader_ids, runner_name
from testjack_tui.sandbox.runners.node_launcher import LAUNCHER
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
    assert out["test/a.test.ts"].status == "error" and "no vitest, jest or mocha" in out["test/a.test.ts"].message


def test_framework_from_deepswe_tool_labels():
    assert framework_of_tool("vitest-junit-to-ctrf") == "vitest"
    assert framework_of_tool("jest-ctrf-json-reporter") == "jest"
    assert framework_of_tool("cargo-nextest") == "cargo nextest"
    assert framework_of_tool("go-ctrf-json-reporter") == "go test"
    assert runner_name("vitest") == "vitest" and runner_name("jest") == "jest"


def choose(tmp_path: Path, framework: str, pkg: dict, installed: tuple[str, ...], ids: list[str],
           files: dict[str, str] | None = None):
    """Run the launcher in a repo with `pkg` as package.json, stand-ins for the `installed` tools
    (and for node on PATH); returns (the tool that ran, its argv)."""
    repo = tmp_path / "repo"
    for rel, text in {"package.json": json.dumps(pkg), **(files or {})}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / "node_modules" / ".bin").mkdir(parents=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in installed + ("node",):
        fake = (bindir if tool == "node" else repo / "node_modules" / ".bin") / tool
        fake.write_text("#!/bin/sh\n"
                        "[ \"$1\" = --version ] && { echo v18.20.4; exit 0; }\n"
                        f"[ -e {tmp_path}/argv-{tool} ] || printf '%s\\n' \"$@\" > {tmp_path}/argv-{tool}\n"
                        f"printf '%s' \"$NODE_ENV\" > {tmp_path}/env-{tool}\n"
                        "exit 0\n")  # the first run's argv (without a report mocha runs file by file)
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "out"
    runner = get_runner(framework)
    _, env, spec = runner.command(ids, workdir=str(repo), out_dir=str(out))
    for path, text in spec.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCHER)
    subprocess.run([sys.executable, str(launcher), str(out / "spec.json")], capture_output=True,
                   env={**os.environ, **env, "PATH": f"{bindir}:{os.environ['PATH']}"})
    used = [t for t in installed + ("node",) if (tmp_path / f"argv-{t}").exists()]
    return (used[0] if used else None), ((tmp_path / f"argv-{used[0]}").read_text().split("\n")[:-1] if used else [])


@pytest.mark.parametrize("framework, pkg, installed, want", [
    # the test script decides when the declared tool is not installed
    ("jest", {"scripts": {"test": "mocha --recursive"}, "devDependencies": {"mocha": "10"}}, ("mocha",), "mocha"),
    ("jest", {"scripts": {"test": "c8 node --test test/"}}, (), "node"),
    ("jest", {"scripts": {"test": "NODE_ENV=test node --test"}, "devDependencies": {"mocha": "10"}},
     ("mocha",), "node"),
    # no script: a devDependency that is installed (vitest, jest, mocha in that order)
    ("node --test", {"devDependencies": {"mocha": "10"}}, ("mocha",), "node"),
    ("vitest", {"devDependencies": {"mocha": "10", "jest": "29"}}, ("mocha", "jest"), "jest"),
    ("mocha", {"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "1"}}, ("vitest",), "vitest"),
])
def test_the_tool_comes_from_the_task_then_the_test_script_then_dependencies(tmp_path, framework, pkg,
                                                                             installed, want):
    used, _ = choose(tmp_path, framework, pkg, installed, ["test/a.test.js"], {"test/a.test.js": ""})
    assert used == want


def test_mocha_loads_only_named_files_and_greps_for_named_tests(tmp_path):
    pkg = {"scripts": {"test": "mocha"}, "devDependencies": {"mocha": "10"}}
    files = {"test/a.spec.js": "", "test/b.spec.js": ""}
    ids = ["test/a.spec.js::outer > inner (x+1) > adds", "test/b.spec.js: top level"]
    used, argv = choose(tmp_path, "mocha", pkg, ("mocha",), ids, files)
    assert used == "mocha"
    assert argv[-2:] == ["test/a.spec.js", "test/b.spec.js"]
    assert argv[argv.index("--grep") + 1] == r"^(?:outer inner \(x\+1\) adds(?: |$)|top level(?: |$))"
    assert argv[argv.index("--config") + 1].endswith("mocha_config.cjs") and "--no-package" in argv
    # a whole file among the ids: every test of the named files runs
    (tmp_path / "w").mkdir()
    _, argv = choose(tmp_path / "w", "mocha", pkg, ("mocha",), ["test/a.spec.js", ids[1]], files)
    assert "--grep" not in argv and argv[-2:] == ["test/a.spec.js", "test/b.spec.js"]


def test_node_test_name_pattern_matches_a_tests_own_name_or_its_full_name(tmp_path):
    pkg = {"type": "module", "scripts": {"test": "node --test"}}
    used, argv = choose(tmp_path, "node --test", pkg, (), ["test/a.test.js::suite > it works"],
                        {"test/a.test.js": ""})
    assert used == "node" and argv[0] == "--test"
    assert argv[1].startswith("--test-reporter=") and argv[1].endswith("node_reporter.mjs")
    assert "--test-name-pattern=^(?:it works$|suite it works(?: |$))" in argv
    assert argv[-1] == "test/a.test.js"


def test_mocha_and_node_reports_read_like_jest_reports():
    # Our reporters write jest's shape, with "error" for tests a failing hook kept from running.
    runner = get_runner("mocha")
    plan = json.dumps({"tool": "mocha", "files": {"test/a.spec.js": True}, "workdir": "/app"}).encode()
    report = json.dumps({"tool": "mocha", "testResults": [{"name": "/app/test/a.spec.js", "status": "failed",
                         "message": "", "assertionResults": [
                             assertion(["s", "ok"], "passed"),
                             assertion(["s", "kept out"], "error", '"before all" hook failed: boom')]}]}).encode()
    out = runner.parse(["test/a.spec.js"], {"x/node-plan.json": plan, "x/node-report.json": report}, result())
    assert out["test/a.spec.js::s > ok"].status == "passed"
    assert out["test/a.spec.js::s > kept out"].status == "error" and "boom" in out["test/a.spec.js::s > kept out"].message
    assert out["test/a.spec.js"].status == "error"
    # no report at all (the tool died before writing one): an error with what it printed
    out = runner.parse(["test/a.spec.js"], {"x/node-plan.json": plan, "x/node-run.log": b"Segmentation fault"}, result())
    assert out["test/a.spec.js"].status == "error" and "Segmentation fault" in out["test/a.spec.js"].message


def test_mocha_and_node_test_runner_names_and_placement():
    assert runner_name("mocha") == "mocha" and runner_name("node:test") == "node --test"
    assert framework_of_tool("mocha-junit-reporter") == "mocha"
    from testjack_tui.sandbox.runners import placement_hint
    assert "node:test" in placement_hint("javascript", "node --test")
    assert ".mocharc" in placement_hint("javascript", "mocha")


def test_mocha_config_and_the_test_script_are_harness():
    from testjack_tui.sandbox.integrity import harness_reasons
    from testjack_tui.engine.export_suite import new_file_diff

    script = ('diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n'
              '@@ -2,3 +2,3 @@\n   "scripts": {\n-    "test": "mocha"\n+    "test": "node --test"\n   },\n')
    version = ('diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n'
               '@@ -1,3 +1,3 @@\n {\n-  "version": "0.1.0",\n+  "version": "0.2.0",\n')
    reasons = harness_reasons(script + new_file_diff(".mocharc.yml", "require: test/hack.js\n") + version)
    assert reasons["package.json"] == "test runner configuration in package.json"
    assert reasons[".mocharc.yml"].startswith("JavaScript test configuration")
    assert harness_reasons(version) == {}


def test_js_ghost_lines_and_branches_from_counts():
    from testjack_tui.engine.detectors import attach_ghost, collect_static_evidence, parse_diff
    from testjack_tui.engine.detectors.ghost_js import ISTANBUL, intersect_counts
    from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

    patch = ('diff --git a/lib/pad.js b/lib/pad.js\n--- a/lib/pad.js\n+++ b/lib/pad.js\n@@ -1,2 +1,8 @@\n'
             ' function pad(s, n) {\n+  // short input\n+  if (s.length >= n) {\n+    return s;\n+  } else {\n'
             '+    log("padding");\n+  }\n   return s.padStart(n);\n')
    # V8: line counts only; comments, braces and `} else {` are not code
    report = intersect_counts({"lib/pad.js": {"lines": {"3": 4, "4": 0, "6": 4}}}, parse_diff(patch))
    assert (report.added_lines, report.executed_lines, report.branches) == (3, 2, 0)
    assert [(g.line, g.code.strip()) for g in report.ghost_lines] == [(4, "return s;")]
    assert "statements" in report.to_text() and "V8" in report.to_text()
    assert intersect_counts({"lib/pad.js": None}, parse_diff(patch)).unmeasured_files == ["lib/pad.js"]
    # istanbul (jest/vitest): statements and the arms of the branch on line 3
    ts = patch.replace("lib/pad.js", "src/pad.ts")
    counts = {"src/pad.ts": {"lines": {"3": 4, "4": 0, "6": 4}, "branches": [[3, 3, 0], [3, 5, 4]]}}
    report = intersect_counts(counts, parse_diff(ts), ISTANBUL.format(tool="jest"))
    assert (report.branches, report.executed_branches) == (2, 1)
    assert [(b.line, b.to) for b in report.ghost_branches] == [(3, 3)]
    assert "1/2 added branches" in report.to_text()
    task = Task("t", "P", Environment(image="x"), Reference(patch=""), OfficialTests(framework="jest"),
                language="typescript")
    evidence = attach_ghost(collect_static_evidence(task, Trial("s", "t", "a", "m", ts, True)), report)
    assert [s.kind for s in evidence.signals if s.detector == "ghost_branches"] == [
        "never_executed", "branch_not_taken"]


def test_js_coverage_counts_in_the_container_script(tmp_path):
    # The script the world runs after T0: istanbul's report read back per wanted line, and the
    # reason when vitest has no coverage provider installed.
    from testjack_tui.engine.detectors.ghost_js import _COUNTS

    def counts(tool, istanbul=None):
        out = tmp_path / tool
        (out / "istanbul").mkdir(parents=True)
        (out / "node-plan.json").write_text(json.dumps({"tool": tool}))
        if istanbul is not None:
            (out / "istanbul" / "coverage-final.json").write_text(json.dumps(istanbul))
        script = _COUNTS.replace("print(BEGIN)", "").replace("print(END)", "")
        proc = subprocess.run([sys.executable, "-c", script, json.dumps({"src/a.ts": [3, 4]}), "/app", str(out)],
                              capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)

    doc = {"/app/src/a.ts": {"path": "/app/src/a.ts",
                             "statementMap": {"0": {"start": {"line": 3}}, "1": {"start": {"line": 4}},
                                              "2": {"start": {"line": 9}}},
                             "s": {"0": 2, "1": 0, "2": 5},
                             "branchMap": {"0": {"loc": {"start": {"line": 3}},
                                                 "locations": [{"start": {"line": 3}}, {"start": {}}]}},
                             "b": {"0": [0, 2]}}}
    data = counts("jest", doc)
    assert data["kind"] == "istanbul"
    assert data["counts"]["src/a.ts"] == {"lines": {"3": 2, "4": 0}, "branches": [[3, 3, 0], [3, 3, 2]]}
    data = counts("vitest")
    assert data["kind"] is None and "@vitest/coverage-v8" in data["why"]


def test_the_test_scripts_loading_options_and_environment_come_along(tmp_path):
    pkg = {"scripts": {"test": "NODE_ENV=test mocha --require test/setup.js --exit --reporter dot "
                                "--bail --timeout=5000 'test/**/*.spec.js' && eslint ."},
           "devDependencies": {"mocha": "10"}}
    used, argv = choose(tmp_path, "mocha", pkg, ("mocha",), ["test/a.spec.js"], {"test/a.spec.js": ""})
    assert argv[:4] == ["--require", "test/setup.js", "--exit", "--timeout=5000"]
    assert "dot" not in argv and "--bail" not in argv and "test/**/*.spec.js" not in argv
    assert (tmp_path / "env-mocha").read_text() == "test"
    (tmp_path / "n").mkdir()
    pkg = {"type": "module", "scripts": {"test": "node --import ./test/setup.js --test-reporter=spec --test "
                                                 "--experimental-test-coverage test/"}}
    used, argv = choose(tmp_path / "n", "node --test", pkg, (), ["test/a.test.js"], {"test/a.test.js": ""})
    assert argv[:3] == ["--import", "./test/setup.js", "--test"]
    assert "--test-reporter=spec" not in argv and "--experimental-test-coverage" not in argv


@pytest.mark.parametrize("framework, header", [
    ("vitest", 'from "vitest"'), ("jest", "globalThis.beforeAll")])
def test_canaries_get_the_header_of_the_tool_that_runs_them(tmp_path, framework, header):
    """A canary is written once for every JS tool; the launcher gives it the header the tool it
    chose needs. Beside jest full names (which may be in any file) the whole suite runs, the
    canary with it."""
    from testjack_tui.sandbox.canaries import JS_MARK, make_canaries

    ids = ["test/query.test.ts: parseQuery > reads key=value pairs"] if framework == "vitest" \
        else ["parseQuery reads key=value pairs"]
    canaries = make_canaries(ids, style=get_runner(framework).canaries)
    assert set(canaries.expected.values()) == {"passed", "failed"}  # hook failures read as failures
    [path] = canaries.files
    if framework == "vitest":  # beside the run's test file, named like it
        assert path.startswith("test/") and path.endswith(".test.ts")
    files = {"test/query.test.ts": "", **canaries.files}
    used, argv, _ = launch(tmp_path, framework, ids + canaries.ids, files, [SUITE],
                           deps={framework: "1"})
    text = (tmp_path / "repo" / path).read_text()
    assert used == [framework] and JS_MARK not in text and header in text.splitlines()[0] + text
    if framework == "jest":
        assert "--runTestsByPath" not in argv
    else:
        assert path in argv and "test/query.test.ts" in argv
