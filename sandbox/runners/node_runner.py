"""JavaScript/TypeScript: vitest, jest, mocha or `node --test`, through the repository's own
installed binary (node itself for `node --test`), one process for all requested ids, per-test
results as JSON in jest's `--json` shape: jest's own, vitest's `json` reporter, and our mocha
and node reporters (sandbox/runners/js_reporters.py) for the other two.

The tool: the task's declared framework when it is installed, else the one the package.json
test script runs, else the one package.json depends on (vitest, jest, mocha in that order).
Ids, in the forms benchmarks and our witnesses use:
- `<file>: <describe> > <title>` — DeepSWE's vitest ids (JUnit classname + name via CTRF);
- `<file>` — every test in that file; `<file>::<describe> > <title>` — one test (or a describe
  block) of that file;
- `<describe> <title>` — jest's fullName (jest-ctrf-json-reporter) and mocha's fullTitle,
  looked up in every file.
mocha and node get only the named files, and when every id names tests, a name pattern
(`--grep`, `--test-name-pattern`) so only those tests run. When an id is a jest full name (it
may be in any file) no file is named: the whole suite runs.
Canaries (sandbox/canaries.py `JsCanaries`) are written once for every tool; the launcher gives
each the header of the tool it chose (vitest's or node:test's import, jest's or mocha's globals).
Outcome keys: every requested id, plus `<file>::<name>` and `<file>: <name>` for each test of
a requested file (the engine reads the first, the benchmark's grader the second).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Iterable
from typing import Any, NamedTuple

import json

from ..api import ExecResult, TestOutcome, TestStatus
from ..canaries import Canaries, JsCanaries, make_canaries, whole_file_canaries, with_passing_file
from ..hidden_names import JS
from . import js_reporters
from .base import LaunchedRunner, aggregate, json_report, report_named, trim

if TYPE_CHECKING:
    from ..own_exec import OwnPlan
from .pytest_runner import PytestRunner

from .node_launcher import LAUNCHER, LAUNCHER_PATH, LOG, PLAN, REPORT


_SKIPPED = {"pending", "skipped", "todo", "disabled"}
_EXTS = (".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts")


class NodeTestRunner(LaunchedRunner):
    """vitest / jest / mocha / node --test; see the module docstring for ids and outcome keys."""

    name = "vitest"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
    canaries = JsCanaries(errors=False)  # vitest reports the tests under a failed hook as failed
    names = JS
    reports = (REPORT, PLAN, LOG)
    framework = "vitest"
    witness_hint = ("a new `<topic>.tj.test.ts` (or `.test.js`) beside the repo's own tests, where "
                    "its vitest/jest config collects them, importing the code under test by "
                    "relative path; run_tests takes the file's path or `path::<describe> > <title>` "
                    "(T0's ids read `<file>: <describe> > <title>`)")
    inline_command = PytestRunner.inline_command  # the same python3 wrapper: files in, reports out

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        return sorted(n for n in outcomes if n.startswith(path + ": "))

    def support_files(self) -> dict[str, str]:
        return {**super().support_files(), **js_reporters.support_files()}

    def spec_extra(self) -> dict[str, Any]:
        return {"framework": self.framework, "mocha_reporter": js_reporters.MOCHA_REPORTER_PATH,
                "mocha_config": js_reporters.MOCHA_CONFIG_PATH,
                "node_reporter": js_reporters.NODE_REPORTER_PATH}

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py): each witness file (or named test), and a
        must-pass and a must-fail canary test, by the launcher's plain mode in a process each."""
        from ..own_exec import OwnPlan, canary_picks  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        mine = [i for i in test_ids if i.partition("::")[0].partition(": ")[0] in files]
        near = mine[0].partition("::")[0].rsplit("/", 1)[0] if mine and "/" in mine[0] else ""
        for test_id in mine + (canary_picks(canary, near) if mine else []):
            path, _, name = _split(test_id)
            plan.tests[test_id] = {"argv": ["python3", self.launcher_path], "cwd": "",
                                   "spec": {"ids": [test_id], "plain": True, **self.spec_extra()},
                                   # Shown only as not passed in the report: no claim to check.
                                   "failed_if": (REPORT, "json", path, name)}
            if self.framework == "vitest":
                # vite bundles the config to a file beside it: another uid cannot run vitest in
                # the repo, so its varied replay keeps the trial's uid (the rest still varies).
                plan.tests[test_id]["keep_uid"] = True
        return plan

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """The runner's exit status against its JSON report."""
        from ..own_exec import exit_agreement

        data = json_report(reports, REPORT)
        failed = [str(t.get("fullName") or t.get("title") or "")
                  for f in data.get("testResults") or [] if isinstance(f, dict)
                  for t in f.get("assertionResults") or [] if isinstance(t, dict) and t.get("status") == "failed"]
        return exit_agreement(self.name, result, failed)

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        def report(suffix: str) -> bytes | None:
            return report_named(reports, suffix)

        plan = json_report(reports, PLAN)
        log = (report(LOG) or b"").decode(errors="replace")
        plan["reported"] = report(REPORT) is not None
        tests, broken = read_report(report(REPORT), plan.get("workdir", ""))
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            outcomes[test_id] = self._one(test_id, tests, broken, plan, log, result, outcomes)
        return outcomes

    def _one(self, test_id: str, tests: list[JsTest], broken: dict[str, str], plan: dict[str, Any],
             log: str, result: ExecResult, outcomes: dict[str, TestOutcome]) -> TestOutcome:
        if not plan.get("tool"):
            if result.timed_out:
                return TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            return TestOutcome(test_id, "error", "no test runner: " + (plan.get("why") or (
                "no vitest, jest or mocha in node_modules/.bin and no `node --test` test script"))
                + " " + trim(log or result.output, 500))
        path, sep, name = _split(test_id)
        if path and not plan.get("files", {}).get(path, False):
            return TestOutcome(test_id, "not_found", "no such test file")
        if path in broken:
            return TestOutcome(test_id, "error", "the test file failed to load: " + trim(broken[path], 2000))
        if path:
            mine = [t for t in tests if t.file == path]
            if sep:
                mine = [t for t in mine if t.title == name or t.title.startswith(name + " > ")]
            for t in mine:
                for shown in (f"{t.file}::{t.title}", f"{t.file}: {t.title}"):
                    outcomes[shown] = TestOutcome(shown, t.status, t.message, t.seconds)
        else:  # jest fullName: "<describe> <title>"
            mine = [t for t in tests if t.full_name == test_id]
        if mine:
            status = aggregate([t.status for t in mine])
            bad = next((t for t in mine if t.status == status), mine[0])
            return TestOutcome(test_id, status, bad.message, sum(t.seconds for t in mine))
        if result.timed_out:
            return TestOutcome(test_id, "timed_out", "the test run hit its timeout (the reporter "
                               "writes its file at the end, so no test of this run is known)")
        if not plan["reported"] or (not tests and not broken and result.exit_code not in (0, 1)):
            return TestOutcome(test_id, "error", f"{plan['tool']} ended without a report (exit "
                               f"{result.exit_code}; 137 = killed): " + trim(log, 2000))
        if path and not tests and "No test files found" in log:
            return TestOutcome(test_id, "not_found", "not collected: the test config's include "
                               "patterns do not match this path")
        return TestOutcome(test_id, "not_found", "no such test ran")


def _split(test_id: str) -> tuple[str, str, str]:
    """(file, separator, test name) of an id; file "" for a jest fullName."""
    if "::" in test_id:
        path, _, name = test_id.partition("::")
        return path, "::", name
    head, sep, name = test_id.partition(": ")
    if sep and ("/" in head or head.endswith(_EXTS)):
        return head, sep, name
    if test_id.endswith(_EXTS):
        return test_id, "", ""
    return "", "", test_id


class JsTest(NamedTuple):
    """One test case of a jest-shaped JSON report."""

    file: str  # relative to the workdir
    title: str  # "describe > ... > title"
    status: TestStatus
    message: str
    seconds: float
    full_name: str  # jest's fullName: "<describe> <title>"


def read_report(data: bytes | None, workdir: str) -> tuple[list[JsTest], dict[str, str]]:
    """The report's test cases and {file: load error} for files that failed to load."""
    tests: list[JsTest] = []
    broken: dict[str, str] = {}
    if not data:
        return tests, broken
    try:
        doc = json.loads(data)
    except ValueError:
        return tests, broken
    prefix = workdir.rstrip("/") + "/"
    for suite in doc.get("testResults") or []:
        if not isinstance(suite, dict):
            continue
        file = str(suite.get("name") or "")
        file = file[len(prefix):] if prefix != "/" and file.startswith(prefix) else file
        assertions = suite.get("assertionResults") or []
        if not assertions and suite.get("status") == "failed":
            broken[file] = str(suite.get("message") or "failed to load")
            continue
        for a in assertions:
            titles = [str(t) for t in (a.get("ancestorTitles") or []) if t] + [str(a.get("title") or "")]
            raw = a.get("status")
            status: TestStatus = ("passed" if raw == "passed" else "skipped" if raw in _SKIPPED
                      else "error" if raw == "error" else "failed")
            message = trim("\n".join(str(m) for m in a.get("failureMessages") or []), 2000)
            duration = float(a.get("duration") or 0) / 1000.0
            tests.append(JsTest(file, " > ".join(titles), status, message, duration,
                                str(a.get("fullName") or " ".join(titles))))
    return tests, broken


class JestRunner(NodeTestRunner):
    name = "jest"
    framework = "jest"
    canaries = JsCanaries(errors=False)  # jest reports the tests under a failed hook as failed


class MochaRunner(NodeTestRunner):
    name = "mocha"
    framework = "mocha"
    canaries = JsCanaries(errors=True)  # our reporter (js_reporters.py): hook failures are errors
    witness_hint = ("a new `<topic>.tj.spec.js` (or `.test.js`, matching the repo's) beside the "
                    "repo's own mocha tests, where its .mocharc `spec` collects them, written like "
                    "them (`describe`/`it`, the same assertion library, `require` or `import` as "
                    "package.json's \"type\" says); run_tests takes the file's path or "
                    "`path::<describe> > <title>`")


class NodeBuiltinRunner(NodeTestRunner):
    """Node's built-in runner (`node --test`, `node:test`)."""

    name = "node --test"
    framework = "node"
    canaries = JsCanaries(errors=True)  # our reporter (js_reporters.py): hook failures are errors

    def make_canaries(self, test_ids: list[str], existing: Iterable[str] = ()) -> Canaries:
        """The usual canary files, and a file whose tests all must pass (`with_passing_file`):
        our own run of node --test runs whole files (see own_plan)."""
        return with_passing_file(make_canaries(test_ids, list(existing), self.canaries), self.canaries,
                                 test_ids)

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py), a whole file per process: node 18's
        --test-name-pattern still runs the hooks of the suites it filters out, so one test cannot
        run alone (a sibling suite's failing hook would fail the process, and our own run would
        read an honest trial as forging). Each witness id naming a whole file is run whole, and
        its exit status is held against the report's verdict on the whole file; the canaries
        are the file whose tests all pass (exit 0) and one holding a must-fail test (not 0). An
        id naming one test in a file gets no own run (its file may honestly fail elsewhere)."""
        from ..own_exec import OwnPlan  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        whole = [i for i in test_ids if i in files]
        for key, path in [(i, i) for i in whole] + [
                (node, node.partition("::")[0]) for node in whole_file_canaries(canary).values() if whole]:
            plan.tests[key] = {"argv": ["python3", self.launcher_path], "cwd": "",
                               "spec": {"ids": [path], "plain": True, **self.spec_extra()},
                               "failed_if": (REPORT, "json", path, "")}
        return plan

    witness_hint = ("a new `test/<topic>.tj.test.js` (`.mjs` for ES modules) using `node:test` "
                    "(`describe`/`it` or `test`) and `node:assert/strict`, importing the code under "
                    "test by relative path; run_tests takes the file's path or "
                    "`path::<describe> > <title>`")
