"""pytest: one process for all requested ids, outcomes from JUnit XML written outside the repo.

Requested ids are not passed to pytest as node ids (one missing id makes pytest stop with a
usage error and run nothing); instead their files are passed and a small plugin keeps only
the requested items, so a missing id is simply reported as not found. The plugin also logs
progress to a file, so a run killed by its timeout still tells which tests finished.
A file that does not collect (it imports an API the change adds) does not stop the others
(`--continue-on-collection-errors`). Deterministic: no cache provider, PYTHONHASHSEED=0, and addopts that change which tests run
or where reports go (-x, --lf, --junitxml, ...) are dropped from the repo's config.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dataclasses
import json
import re
import secrets

from ..api import ExecResult, TestOutcome, TestStatus, as_status
from ..canaries import PYTEST
from ..trial_user import TRIAL_HOME, TRIAL_NAME
from ..hidden_names import PYTHON
from .base import OUT_ROOT, aggregate, report_named, trim
from ..test_ids import is_pytest_id, junit_to_pytest, pytest_candidates, pytest_to_junit
from .junit import parse_junit
from .run_wrapper import WRAPPER

LAUNCHER_PATH = f"{OUT_ROOT}/pytest_launch.py"
PLUGIN_PATH = f"{OUT_ROOT}/plugins/tj_select.py"
RESTORED_LOG = "restored.txt"  # the harness restore's output, for runs that end without a trailer

# Runs in the container with the environment's python (any python3 >= 3.6).
LAUNCHER = r'''
import configparser, json, os, shlex, sys

# The spec (ids, report paths) is read and deleted before any code of the repo runs: the ids
# (witness and canary names) are never in the environment nor on disk for the tests to read.
spec = json.load(open(sys.argv[1]))
try:
    os.unlink(sys.argv[1])
except OSError:
    pass
workdir = spec["workdir"]
os.chdir(workdir)
out_dir = os.path.dirname(spec["junit"])
if not os.path.isdir(out_dir):
    os.makedirs(out_dir)
# An id in the benchmark's JUnit scheme (`tests.test_x.TestY.test_z`) comes with the node ids it
# can mean (sandbox/test_ids.pytest_candidates); the one whose file exists here is run.
def resolve(test_id):
    choices = spec.get("alternatives", {}).get(test_id)
    if not choices:
        return test_id
    return next((c for c in choices if os.path.exists(c.split("::")[0])), choices[0])

spec["ids"] = [resolve(i) for i in spec["ids"]]
files = []
for test_id in spec["ids"]:
    path = test_id.split("::")[0]
    if path not in files and os.path.exists(path):
        files.append(path)

DROP = {"-x", "--exitfirst", "--lf", "--last-failed", "--ff", "--failed-first", "--nf",
        "--new-first", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--cache-clear",
        "--pdb", "--trace", "--co", "--collect-only", "--setup-only", "--setup-plan", "-f",
        "--looponfail", "--no-cov", "--cov-branch", "--cov-append"}
DROP_WITH_VALUE = {"--maxfail", "--junitxml", "--junit-xml", "--junit-prefix", "--lfnf",
                   "--last-failed-no-failures", "--basetemp",
                   # pytest-xdist: workers would not have our selection plugin; one process runs
                   # the focused set (the ids are few), as the harness runs one test file.
                   "-n", "--numprocesses", "--maxprocesses", "--dist", "--tx", "--max-worker-restart",
                   "--rsyncdir",
                   # pytest-cov: a focused run's coverage is not the suite's (--cov-fail-under
                   # would fail every run); ghost branches measure coverage their own way.
                   "--cov-fail-under", "--cov-report", "--cov-config", "--cov-context"}
OPTIONAL_VALUE = {"--cov"}  # `--cov`, `--cov=pkg`, `--cov pkg`

def read_ini():
    """(file, the repo's pytest ini section as a dict) in pytest's order of config files."""
    def ini(name, section):
        cp = configparser.ConfigParser(interpolation=None)
        try:
            cp.read(name)
        except Exception:
            return None
        return dict(cp.items(section)) if cp.has_section(section) else None
    for name in ("pytest.ini", ".pytest.ini"):
        if os.path.exists(name):
            return name, ini(name, "pytest") or {}
    if os.path.exists("pyproject.toml"):
        try:
            try:
                import tomllib
            except ImportError:  # python < 3.11: pytest itself reads it with tomli
                import tomli as tomllib
            with open("pyproject.toml", "rb") as fh:
                opts = tomllib.load(fh).get("tool", {}).get("pytest", {}).get("ini_options")
            if opts is not None:
                return "pyproject.toml", opts
        except Exception:
            pass
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if os.path.exists(name):
            found = ini(name, section)
            if found is not None:
                return name, found
    return None, {}

def as_list(value):
    if value is None:
        return None
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value))
    except ValueError:
        return None

def clean(opts):
    """(opts without those that break a focused run, the ones left out)."""
    out, dropped, at = [], [], 0
    while at < len(opts):
        tok = opts[at]
        at += 1
        head = tok.split("=", 1)[0]
        if tok in DROP or head in DROP_WITH_VALUE or head in OPTIONAL_VALUE or head.startswith("--cov-") \
                or (tok.startswith("-n") and not tok.startswith("--")):
            takes = tok in DROP_WITH_VALUE or (tok in OPTIONAL_VALUE and at < len(opts)
                                               and not opts[at].startswith("-"))
            if takes and at < len(opts):
                tok += " " + opts[at]
                at += 1
            dropped.append(tok)
            continue
        if tok.startswith("-") and not tok.startswith("--") and len(tok) > 2 and tok[1] not in "rkmpocnWW" \
                and tok[1:].isalpha() and "x" in tok:
            dropped.append("-x")
            tok = tok.replace("x", "")
        out.append(tok)
    return out, dropped

def covers(patterns, ours):
    """Does one of the repo's name patterns (prefixes or globs) take our names (`test_...`)?"""
    import fnmatch
    return any(ours.startswith(p) or fnmatch.fnmatch(ours, p) for p in patterns)

args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tj_select",
        "--rootdir", workdir, "--junitxml", spec["junit"], "-o", "junit_family=xunit1",
        "-o", "junit_logging=no", "-rN", "-q", "--continue-on-collection-errors"]
notes = []
config_file, ini = read_ini()
addopts = as_list(ini.get("addopts"))
if addopts is None and ini.get("addopts"):
    args += ["-o", "addopts="]
    notes.append("%s: addopts unreadable, left out" % config_file)
elif addopts:
    cleaned, dropped = clean(addopts)
    if dropped:
        args += ["-o", "addopts=" + " ".join(shlex.quote(t) for t in cleaned)]
        notes.append("%s: addopts %s left out (a focused run in one process)" % (config_file, " ".join(dropped)))
env_opts = os.environ.get("PYTEST_ADDOPTS")
if env_opts:
    try:
        cleaned, dropped = clean(shlex.split(env_opts))
    except ValueError:
        cleaned, dropped = [], [env_opts]
    if dropped:
        os.environ["PYTEST_ADDOPTS"] = " ".join(shlex.quote(t) for t in cleaned)
        notes.append("PYTEST_ADDOPTS: %s left out" % " ".join(dropped))
# Files given on the command line are collected whatever `python_files` says; the functions and
# classes in them only when `python_functions` / `python_classes` match. Candidates and canaries
# are `test_*` / `Test*`: the repo's patterns are kept and ours added when they do not match.
for key, ours, name in (("python_functions", "test", "test_x"), ("python_classes", "Test", "TestX")):
    patterns = as_list(ini.get(key))
    if patterns and not covers(patterns, name):
        args += ["-o", "%s=%s" % (key, " ".join(patterns + [ours]))]
        notes.append("%s: %s %s: %s added for candidate tests (the repo's own runs collect only %s)"
                     % (config_file, key, " ".join(patterns), ours, " ".join(patterns)))
patterns = as_list(ini.get("python_files"))
if patterns and not covers(patterns, "test_x.py"):
    notes.append("%s: python_files %s: candidate files are passed by path (collected anyway)"
                 % (config_file, " ".join(patterns)))
args += files
# Printed before any code of the repo runs (the engine believes only these first lines).
for note in notes:
    print("TJ_CONFIG " + note, flush=True)
print("TJ_FILES " + json.dumps(files), flush=True)
if not files:
    sys.exit(5)
# Run pytest in this interpreter exactly as `python -m pytest` would (saves a second start-up):
# the current directory first on sys.path, pytest's __main__ as the main module.
import runpy
sys.path[0] = os.getcwd()
# Our selection plugin; appended (not PYTHONPATH) so the image's own PYTHONPATH stays intact.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins"))
import tj_select
tj_select.configure(spec["ids"], spec["progress"])
del spec
sys.argv = [sys.executable] + args[3:]
runpy.run_module("pytest", run_name="__main__", alter_sys=True)
'''

PLUGIN = r'''
"""PYTEST_DONT_REWRITE: imported by our launcher before pytest loads it with `-p tj_select`; without
this mark pytest warns that it cannot rewrite it, and a repo with `filterwarnings = error` fails."""
import json, os
import pytest

_EXACT = set()
_DIRS = set()
_progress = None


def configure(ids, progress_path):
    """Called by the launcher before pytest starts (the ids never pass through the environment)."""
    global _EXACT, _DIRS, _progress
    _EXACT = set(ids)
    _DIRS = set(i.rstrip("/") for i in ids)
    _progress = open(progress_path, "a", buffering=1)


def _wanted(nodeid):
    """An id selects itself and what lies under it (`id::...`, `id[...]`, `dir/...`). Checked by
    the node id's own cut points against sets: a suite of thousands of ids stays linear."""
    if nodeid in _EXACT:
        return True
    for at, ch in enumerate(nodeid):
        if ch == "[" or (ch == ":" and nodeid.startswith("::", at)):
            if nodeid[:at] in _EXACT:
                return True
        elif ch == "/" and nodeid[:at] in _DIRS:
            return True
    return False


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    keep, dropped = [], []
    for item in items:
        (keep if _wanted(item.nodeid) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    if _progress is None:
        return
    _progress.write(json.dumps({"id": nodeid, "event": "start"}) + "\n")


def pytest_runtest_logreport(report):
    if _progress is None:
        return
    _progress.write(json.dumps({"id": report.nodeid, "when": report.when,
                                "outcome": report.outcome}) + "\n")
'''


class PytestRunner:
    name = "pytest"
    canaries = PYTEST
    names = PYTHON  # how its witness files and tests are renamed per run (sandbox/hidden_names.py)
    witness_hint = ("for example `tests/test_tj_<topic>.py`; run_tests takes the file's path, "
                    "`path::test_name`, or an id in the benchmark's own `module.Class.test_name` "
                    "scheme")

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        return sorted(n for n in outcomes if n.startswith(path + "::"))

    def __init__(self, python: str = "python3"):
        self.python = python

    def support_files(self) -> dict[str, str]:
        return {LAUNCHER_PATH: LAUNCHER, PLUGIN_PATH: PLUGIN}

    def new_out_dir(self) -> str:
        return f"{OUT_ROOT}/run-{secrets.token_hex(6)}"

    def command(self, test_ids: list[str], *, workdir: str, out_dir: str
                ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        alternatives = {i: pytest_candidates(i) for i in test_ids if not is_pytest_id(i)}
        spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "junit": f"{out_dir}/junit.xml",
                           "progress": f"{out_dir}/progress.jsonl", "alternatives": alternatives})
        env = {"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PY_COLORS": "0"}
        # The spec goes in as a file the launcher deletes once read (not through the environment).
        files = {f"{out_dir}/spec.json": spec}
        return [self.python, LAUNCHER_PATH, f"{out_dir}/spec.json"], env, files

    def inline_command(self, argv: list[str], env: dict[str, str], files_json: str, mark: str,
                       out_dir: str, restore: list[str] | None = None, cpu_seconds: int | None = None,
                       workdir: str = "/", user: str = "", own: dict[str, Any] | None = None
                       ) -> tuple[list[str], dict[str, str]]:
        """argv and env that run `restore` (argv; its stdout also goes to out_dir/restored.txt),
        write `files_json` (trailer.encode_files) before the run and return the reports as a
        stdout trailer marked `mark` (see sandbox/trailer.py). With `user` ("uid:gid") the
        tests run as that user, who then owns out_dir and the files written into `workdir`."""
        spec: dict[str, Any] = {"mark": mark, "argv": argv[1:], "reports": self.report_paths(out_dir),
                      "cpu": cpu_seconds, "out": out_dir, "repo": workdir.rstrip("/") or "/"}
        if user:
            spec["user"] = {"id": user, "home": TRIAL_HOME, "name": TRIAL_NAME}
        if restore:
            spec["restore"] = {"argv": list(restore), "log": f"{out_dir}/{RESTORED_LOG}"}
        if own:
            spec["own"] = own  # our own runs of the witness tests (sandbox/own_run.py)
        wrap = json.dumps(spec)
        env = {**env, "TJ_WRAP": wrap}
        if files_json != "{}":
            env["TJ_FILES"] = files_json
        return [argv[0], "-I", "-S", "-c", WRAPPER], env

    def report_paths(self, out_dir: str) -> list[str]:
        return [f"{out_dir}/junit.xml", f"{out_dir}/progress.jsonl"]

    own_run = True  # witness tests also get our own run without pytest (sandbox/own_run.py)

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """Where pytest's exit status and terminal summary contradict its JUnit report."""
        from ..channels import pytest_agreement  # channels -> own_run -> runners: not at import
        return pytest_agreement(report_named(reports, "junit.xml"), result)

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        """Outcomes of the requested ids, keyed as given, and of every case the run reported
        (a file or class id is answered through its cases too). An id in the benchmark's JUnit
        scheme is read as the node id in the files the run reported (the launcher ran the
        candidate whose file exists), and the cases under it are named in its scheme."""
        files = _reported_files(reports)
        chosen = {i: (i if is_pytest_id(i) else junit_to_pytest(i, files)) for i in test_ids}
        found = self._parse_nodes(list(dict.fromkeys(chosen.values())), reports, result)
        requested = set(test_ids)
        junit_chosen = tuple(c for i, c in chosen.items() if c != i)
        under = tuple(p for c in junit_chosen for p in (c + "::", c + "["))
        outcomes: dict[str, TestOutcome] = {}
        for node, outcome in found.items():
            if node in requested or node in junit_chosen:
                continue
            if under and node.startswith(under):
                node = pytest_to_junit(node)
                outcome = dataclasses.replace(outcome, id=node)
            outcomes[node] = outcome
        for test_id, node in chosen.items():
            got = found[node]
            outcomes[test_id] = got if got.id == test_id else dataclasses.replace(got, id=test_id)
        return outcomes

    def _parse_nodes(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
                     ) -> dict[str, TestOutcome]:
        junit = next((v for k, v in reports.items() if k.endswith("junit.xml")), None)
        progress = next((v for k, v in reports.items() if k.endswith("progress.jsonl")), None)
        outcomes: dict[str, TestOutcome] = {}
        collection_errors: dict[str, str] = {}
        if junit and not result.timed_out:
            try:
                outcomes, collection_errors = parse_junit(junit, test_ids)
            except Exception as exc:  # a truncated or forged report: fall back to progress
                outcomes = {}
                collection_errors = {"": f"unreadable JUnit report: {exc}"}
        if not outcomes and progress:
            outcomes = _from_progress(progress, result)
        crashed = not junit and not result.timed_out and result.exit_code not in (0, 1, 5)
        note = trim(result.output, 2000)
        for test_id in test_ids:
            if test_id in outcomes:
                continue
            under = [o for k, o in outcomes.items()
                     if k.startswith((test_id + "::", test_id + "[", test_id.rstrip("/") + "/"))]
            path = test_id.split("::")[0]
            if under:
                status = aggregate([o.status for o in under])
                bad = next((o for o in under if o.status == status), under[0])
                outcomes[test_id] = TestOutcome(test_id, status, bad.message,
                                                sum(o.duration for o in under))
            elif path in collection_errors:
                outcomes[test_id] = TestOutcome(test_id, "error", collection_errors[path])
            elif result.timed_out:
                outcomes[test_id] = TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            elif crashed:
                outcomes[test_id] = TestOutcome(
                    test_id, "error", f"pytest ended without a report (exit {result.exit_code}; "
                    f"137 = killed, e.g. by the memory or disk limit; 152 = its CPU-time limit): {note}")
            else:
                outcomes[test_id] = TestOutcome(test_id, "not_found", "no such test was collected")
        return outcomes


def _reported_files(reports: dict[str, bytes | None]) -> list[str]:
    """The test files a run reported on (JUnit `file` attributes, progress node ids)."""
    files: set[str] = set()
    for path, data in reports.items():
        if not data:
            continue
        if path.endswith("junit.xml"):
            files |= {m.decode(errors="replace")
                      for m in re.findall(rb'<testcase[^>]*?\sfile="([^"]+)"', data)}
        elif path.endswith("progress.jsonl"):
            files |= {m.decode(errors="replace") for m in re.findall(rb'"id": "([^":]+)::', data)}
    return sorted(files)


def _from_progress(data: bytes, result: ExecResult) -> dict[str, TestOutcome]:
    """Outcomes of the tests that finished before the run was killed; the running one timed out."""
    phases: dict[str, dict[str, str]] = {}
    for line in data.decode(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        phases.setdefault(rec["id"], {})
        if rec.get("when"):
            phases[rec["id"]][rec["when"]] = rec.get("outcome", "")
    outcomes: dict[str, TestOutcome] = {}
    for nodeid, seen in phases.items():
        setup, call, teardown = seen.get("setup"), seen.get("call"), seen.get("teardown")
        status: TestStatus
        if setup == "failed" or teardown == "failed":
            status = "error"
        elif setup == "skipped" or call == "skipped":
            status = "skipped"
        elif call in ("passed", "failed") and teardown:
            status = as_status(call)
        else:
            status = "timed_out" if result.timed_out else "error"
        message = ""
        if status == "timed_out":
            message = "the test run hit its timeout during this test"
        elif status == "error":
            message = (f"the test process ended during this test (exit {result.exit_code}; "
                       "137 = killed, e.g. by the memory or disk limit; 152 = its CPU-time limit)")
        outcomes[nodeid] = TestOutcome(nodeid, status, message)
    return outcomes
