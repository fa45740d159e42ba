"""JavaScript/TypeScript: vitest or jest, through the repository's own installed binary, one
process for all requested ids, per-test results from the tool's JSON reporter (jest's
`--json` shape, which vitest's `json` reporter also writes).

The tool: the task's declared framework when its binary is installed in `node_modules/.bin`,
else the one package.json depends on (vitest before jest). Ids, in the forms benchmarks and
our witnesses use:
- `<file>: <describe> > <title>` — DeepSWE's vitest ids (JUnit classname + name via CTRF);
- `<file>` — every test in that file; `<file>::<describe> > <title>` — one test (or a describe
  block) of that file;
- `<describe> <title>` — jest's fullName (jest-ctrf-json-reporter), looked up in every file.
Outcome keys: every requested id, plus `<file>::<name>` and `<file>: <name>` for each test of
a requested file (the engine reads the first, the benchmark's grader the second).
"""
from __future__ import annotations

from collections.abc import Iterable

import json

from ..api import ExecResult, TestOutcome
from .base import LAUNCHER_PRELUDE, OUT_ROOT, LaunchedRunner, aggregate, json_report, report_named, trim
from .pytest_runner import PytestRunner

LAUNCHER_PATH = f"{OUT_ROOT}/node_launch.py"
REPORT = "node-report.json"
PLAN = "node-plan.json"
LOG = "node-run.log"

LAUNCHER = LAUNCHER_PRELUDE + r'''
def deps():
    try:
        data = json.load(open("package.json"))
    except (IOError, OSError, ValueError):
        return {}
    found = {}
    for key in ("devDependencies", "dependencies"):
        if isinstance(data.get(key), dict):
            found.update(data[key])
    return found

def installed(tool):
    return os.path.exists(os.path.join("node_modules", ".bin", tool))

declared = (spec.get("framework") or "").lower()
tool = declared if declared in ("vitest", "jest") and installed(declared) else None
if tool is None:
    have = deps()
    tool = next((t for t in ("vitest", "jest") if t in have and installed(t)), None)
plan = {"tool": tool, "files": {}, "workdir": workdir}
files = []
for test_id in spec["ids"]:
    path = test_id.split("::", 1)[0].split(": ", 1)[0]
    if any(path.endswith(ext) for ext in (".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts")):
        plan["files"][path] = os.path.isfile(path)
        if os.path.isfile(path) and path not in files:
            files.append(path)
with open(os.path.join(out_dir, "node-plan.json"), "w") as fh:
    json.dump(plan, fh)
if tool is None:
    print("TJ_NODE no vitest or jest installed in node_modules/.bin", flush=True)
    sys.exit(4)
report = os.path.join(out_dir, "node-report.json")
binary = os.path.join("node_modules", ".bin", tool)
if tool == "vitest":
    args = [binary, "run", "--reporter=json", "--outputFile=" + report, "--no-color"]
    args += files
else:
    args = [binary, "--json", "--outputFile=" + report, "--ci", "--watchAll=false", "--colors=false"]
    args += ["--runTestsByPath"] + files if files else []
env = dict(os.environ, CI="1", NO_COLOR="1", FORCE_COLOR="0")
print("TJ_NODE " + " ".join(args), flush=True)
with open(os.path.join(out_dir, "node-run.log"), "wb") as log:
    code = subprocess.call(args, stdout=log, stderr=subprocess.STDOUT, env=env)
sys.exit(code)
'''

_SKIPPED = {"pending", "skipped", "todo", "disabled"}
_EXTS = (".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts")


class NodeTestRunner(LaunchedRunner):
    """vitest / jest; see the module docstring for ids and outcome keys."""

    name = "vitest"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
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

    def spec_extra(self) -> dict:
        return {"framework": self.framework}

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        def report(suffix: str) -> bytes | None:
            return report_named(reports, suffix)

        plan = json_report(reports, PLAN)
        log = (report(LOG) or b"").decode(errors="replace")
        tests, broken = read_report(report(REPORT), plan.get("workdir", ""))
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            outcomes[test_id] = self._one(test_id, tests, broken, plan, log, result, outcomes)
        return outcomes

    def _one(self, test_id, tests, broken, plan, log, result, outcomes) -> TestOutcome:
        if not plan.get("tool"):
            if result.timed_out:
                return TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            return TestOutcome(test_id, "error", "no test runner: neither vitest nor jest is installed "
                               "in node_modules/.bin " + trim(log or result.output, 500))
        path, sep, name = _split(test_id)
        if path and not plan.get("files", {}).get(path, False):
            return TestOutcome(test_id, "not_found", "no such test file")
        if path in broken:
            return TestOutcome(test_id, "error", "the test file failed to load: " + trim(broken[path], 2000))
        if path:
            mine = [t for t in tests if t[0] == path]
            if sep:
                mine = [t for t in mine if t[1] == name or t[1].startswith(name + " > ")]
            for file, full, status, message, duration, _ in mine:
                outcomes[f"{file}::{full}"] = TestOutcome(f"{file}::{full}", status, message, duration)
                outcomes[f"{file}: {full}"] = TestOutcome(f"{file}: {full}", status, message, duration)
        else:  # jest fullName: "<describe> <title>"
            mine = [t for t in tests if t[5] == test_id]
        if mine:
            status = aggregate([t[2] for t in mine])
            bad = next((t for t in mine if t[2] == status), mine[0])
            return TestOutcome(test_id, status, bad[3], sum(t[4] for t in mine))
        if result.timed_out:
            return TestOutcome(test_id, "timed_out", "the test run hit its timeout (the reporter "
                               "writes its file at the end, so no test of this run is known)")
        if not tests and not broken and result.exit_code not in (0, 1):
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


def read_report(data: bytes | None, workdir: str):
    """([(file, "a > b > title", status, message, seconds, jest fullName)], {file: load error})."""
    tests: list[tuple] = []
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
            status = "passed" if raw == "passed" else "skipped" if raw in _SKIPPED else "failed"
            message = trim("\n".join(str(m) for m in a.get("failureMessages") or []), 2000)
            duration = float(a.get("duration") or 0) / 1000.0
            tests.append((file, " > ".join(titles), status, message, duration,
                          str(a.get("fullName") or " ".join(titles))))
    return tests, broken


class JestRunner(NodeTestRunner):
    name = "jest"
    framework = "jest"
