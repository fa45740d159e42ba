"""Django-style repositories (a `tests/runtests.py` of Django's kind): one
`python tests/runtests.py --verbosity 2 [--settings=test_sqlite] [--parallel 1] LABELS` for all
requested ids, as the SWE-bench harness runs Django; per-test statuses read from its log by the
harness's own Django log parser (testjack_tui/swebench_harness.parse_log), so ids come out in the
harness's scheme.

Ids, in the forms benchmarks and our witnesses use:
- `test_m (app.test_x.Class)` or `test_m (app.test_x.Class.test_m)` — the harness's scheme
  (Django's runner at verbosity 2, before and since Python 3.11);
- `tests/app/test_x.py` — every test of that module (label `app.test_x`);
- `tests/app/test_x.py::Class` and `tests/app/test_x.py::Class::test_m` — one class, one test;
- `app.test_x.Class.test_m` — a runtests.py label as such.
Ids are mapped to labels on the host (`label_of`); the launcher only checks that witness files
exist, picks the repository's interpreter (the SWE-bench images' `testbed` conda environment when
there is one) and the options its runtests.py knows, and tees the log to a file outside the repo,
so a run killed by its timeout still tells which tests finished. A witness module that does not
import comes back as Django's runner reports it (unittest's `_FailedTest`): `error` with the
traceback. A test whose subTest blocks fail has no status line of its own: on Python 3.11+
Django's runner prints each failing subtest as `  test_m (app.test_x.Class.test_m) (k=v) ... FAIL`,
and every version prints `FAIL: test_m (...) (k=v)` headers; those fold into their test (worst
wins), so a witness that fails only in subtests is `failed`, not missing. Outcome keys: every requested id, plus `<file>::Class::test_m` and the harness id for
each test of a requested file (the first is what the engine reads per candidate file, the second
what an export lists in FAIL_TO_PASS).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Iterable
from typing import Any

import re

from ..api import ExecResult, TestOutcome, TestStatus, as_status
from ..canaries import Canaries, UnittestCanaries, make_canaries
from ..hidden_names import PYTHON
from .base import LAUNCHER_PRELUDE, OUT_ROOT, LaunchedRunner, aggregate, json_report, report_named, trim

if TYPE_CHECKING:
    from ..own_exec import OwnPlan
from .pytest_runner import PytestRunner

LAUNCHER_PATH = f"{OUT_ROOT}/django_launch.py"
LOG = "runtests.log"
PLAN = "django-plan.json"
RUNTESTS = "tests/runtests.py"
# The harness's settings module for Django (its DJANGO command line), when the repo has it.
SETTINGS = "test_sqlite"

LAUNCHER = LAUNCHER_PRELUDE + r'''
plan = {}
labels = []
for test_id in spec["ids"]:
    label, path = spec["labels"].get(test_id), spec["files"].get(test_id)
    missing = ""
    if label is None:
        missing = spec["why"].get(test_id) or "not a Django test id"
    elif path and not os.path.isfile(path):
        missing = "no such test file"
    plan[test_id] = {"label": label, "file": path, "missing": missing}
    if not missing and label not in labels:
        labels.append(label)
with open(os.path.join(out_dir, "django-plan.json"), "w") as fh:
    json.dump({"plan": plan}, fh)
if not os.path.isfile("tests/runtests.py"):
    print("TJ_DJANGO no tests/runtests.py in " + workdir, flush=True)
    sys.exit(4)
# A label inside another requested label would run its tests twice.
labels = [l for l in labels if not any(l != o and l.startswith(o + ".") for o in labels)]
if not labels:
    sys.exit(5)
conda = "/opt/miniconda3/envs/testbed/bin"
python = os.path.join(conda, "python") if os.path.isfile(os.path.join(conda, "python")) else sys.executable
env = dict(os.environ, PYTHONHASHSEED="0", PYTHONUNBUFFERED="1")
if python.startswith(conda):
    env["PATH"] = conda + os.pathsep + env.get("PATH", "")
runtests = open("tests/runtests.py", encoding="utf-8", errors="replace").read()
args = [python, "tests/runtests.py", "--verbosity", "2"]
if "--settings" in runtests and os.path.isfile("tests/" + spec["settings"] + ".py"):
    args.append("--settings=" + spec["settings"])
if "--parallel" in runtests:
    args += ["--parallel", "1"]
args += labels
print("TJ_DJANGO " + " ".join(args[1:]), flush=True)
with open(os.path.join(out_dir, "runtests.log"), "wb") as log:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    for line in proc.stdout:
        log.write(line)
        log.flush()
        sys.stdout.buffer.write(line)
        sys.stdout.flush()
    code = proc.wait()
sys.exit(code)
'''

_SUMMARY = re.compile(r"^FAILED \(([^)]*)\)\s*$", re.M)
_DESCRIPTION = re.compile(r"^(\w+) \(([\w.]+)\)$")
# unittest's subtest description: the test's, then `[msg]` and/or `(k=v, ...)`.
_SUBTEST = re.compile(r"^(\w+ \([\w.]+\)) [\[(].*$", re.S)
_FAILED_IMPORT = ("unittest.loader._FailedTest", "unittest.loader.ModuleImportFailure")


def module_of(path: str) -> str:
    """The runtests.py label of a test module under tests/ (the harness's directive rule)."""
    from testjack_tui.swebench_harness import directives
    label = directives("django/django", [path])[0]
    return label.removesuffix(".__init__")


def dotted(test_id: str) -> str | None:
    """`app.mod.Class.test_m` for a harness id in either of Django's description forms."""
    m = _DESCRIPTION.match(test_id.strip())
    if not m:
        return None
    name, inner = m.groups()
    return inner if inner.endswith("." + name) else f"{inner}.{name}"


def other_form(test_id: str) -> str | None:
    """The same test as Django's runner describes it under the other Python: `test_m
    (app.mod.Class)` before 3.11, `test_m (app.mod.Class.test_m)` since; None for other ids."""
    m = _DESCRIPTION.match(test_id.strip())
    if not m:
        return None
    name, inner = m.groups()
    if inner.endswith("." + name):
        return f"{name} ({inner[:-len(name) - 1]})"
    return f"{name} ({inner}.{name})"


def label_of(test_id: str) -> tuple[str | None, str | None, str]:
    """(runtests.py label, witness file or None, why there is no label)."""
    path, sep, rest = test_id.partition("::")
    if path.endswith(".py"):
        if not path.startswith("tests/"):
            return None, path, "Django's runner runs test modules under tests/ (tests/<app>/test_<topic>.py)"
        parts = [p.partition("[")[0] for p in rest.split("::")] if sep else []
        return ".".join([module_of(path), *parts]), path, ""
    label = dotted(test_id)
    if label is not None:
        return label, None, ""
    if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)*", test_id):
        return test_id, None, ""
    return None, None, ("not a Django test id (`test_m (app.module.Class)`, a file under tests/, "
                        "`file::Class::test_m` or a dotted label)")


def own_test(harness_id: str) -> str:
    """The description of the test a parsed key belongs to: a subtest's key names its test, and a
    line on which a test left without a status (its subtests failed, before Python 3.11) ran on
    into the next test's description is that next test's."""
    harness_id = harness_id.rsplit(" ... ", 1)[-1].strip()
    m = _SUBTEST.match(harness_id)
    return m.group(1) if m and not _DESCRIPTION.match(harness_id) else harness_id


def fold_subtests(statuses: dict[str, TestStatus], texts: dict[str, str]
                  ) -> tuple[dict[str, TestStatus], dict[str, str]]:
    """Statuses and failure texts keyed by test: subtests' fold into their test, worst wins."""
    out: dict[str, TestStatus] = {}
    for key, status in statuses.items():
        test = own_test(key)
        out[test] = aggregate([out[test], status]) if test in out else status
    folded = dict(texts)
    for key, text in texts.items():
        folded.setdefault(own_test(key), text)
    return out, folded


_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (.+)$")
_HEADER_STATUS: dict[str, TestStatus] = {"FAIL": "failed", "ERROR": "error", "UNEXPECTED SUCCESS": "failed"}


def with_headers(statuses: dict[str, TestStatus], log: str) -> dict[str, TestStatus]:
    """The harness's statuses plus those of the FAIL:/ERROR: headers under their whole
    description (the harness keys a header by its first word): before Python 3.11 a test whose
    subtests fail has no line of its own, only its headers; worst wins."""
    out = dict(statuses)
    for raw in log.splitlines():
        m = _HEADER.match(raw.strip())
        if m:
            key, status = m.group(2).strip(), _HEADER_STATUS[m.group(1)]
            out[key] = aggregate([out[key], status]) if key in out else status
    return out


def failure_texts(log: str) -> dict[str, str]:
    """Harness id -> the traceback Django's runner printed for it (FAIL:/ERROR: sections)."""
    out: dict[str, str] = {}
    for block in re.split(r"(?m)^={50,}\s*$", log):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        m = _HEADER.match(lines[0].strip())
        if m:
            body = [ln for ln in lines[1:] if not re.fullmatch(r"-{50,}", ln.strip())]
            out[m.group(2).strip()] = trim("\n".join(body).strip(), 2000)
    return out


def docstring_aliases(log: str) -> dict[str, str]:
    """Django prints a test with a docstring as `test_m (app.mod.Class)` on one line and the
    docstring's first line `... ok` on the next; the harness's parser keys it by the docstring.
    Docstring line -> the test's description."""
    aliases: dict[str, str] = {}
    lines = log.splitlines()
    for here, after in zip(lines, lines[1:]):
        if _DESCRIPTION.match(here.strip()) and " ... " in after:
            aliases[after.split(" ... ", 1)[0].strip()] = here.strip()
    return aliases


class DjangoCanaries(UnittestCanaries):
    """unittest canaries in the run's test folders (an id's file's folder, else its app's),
    never inside a label the run requests whole: an app or package label would count the
    canaries among its own tests."""

    def folders(self, test_ids: list[str]) -> list[str]:
        plan = [label_of(i) for i in test_ids]
        labels = [p[0] for p in plan if p[0]]
        folders = [p[1].rsplit("/", 1)[0] if p[1] else _folder_of(p[0]) for p in plan]
        return [f for f in dict.fromkeys(folders) if f and not any(
            (module_of(f + "/x.py") + ".").startswith(lab + ".") for lab in labels)]


class DjangoRunner(LaunchedRunner):
    """Django's `tests/runtests.py`; see the module docstring for ids and outcome keys."""

    name = "django"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
    reports = (LOG, PLAN)
    canaries = DjangoCanaries()
    names = PYTHON
    witness_hint = ("a new unittest module `tests/<app>/test_tj_<topic>.py` in the existing app folder "
                    "(under tests/) of the code it checks (runtests.py installs only the test apps that "
                    "exist: a model class declared in a witness needs an app with a models.py), with "
                    "`class <Topic>Tests(...)` (`unittest.TestCase`; in Django itself "
                    "`django.test.SimpleTestCase`, or `TestCase` when it needs the database) and "
                    "`def test_<what>(self)` methods without docstrings; it runs under "
                    "`tests/runtests.py` as label `<app>.test_tj_<topic>`. run_tests takes the file's "
                    "path, `path::Class` or `path::Class::test_m` (T0's ids read "
                    "`test_m (<app>.<module>.Class)`, on Python 3.11+ `test_m (<app>.<module>.Class.test_m)`)")
    inline_command = PytestRunner.inline_command  # the same python3 wrapper: files in, reports out

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        """The harness ids (`test_m (app.test_x.Class)`) of the tests of one witness file."""
        module = module_of(path)
        return sorted(k for k in outcomes if "::" not in k
                      and (dotted(k) or "").startswith(module + "."))

    def make_canaries(self, test_ids: list[str], existing: Iterable[str] = ()) -> Canaries:
        """unittest canaries (`DjangoCanaries`). Labels are on runtests.py's command line, where
        the tests can read them: the canaries are requested whole, like the witness files,
        unless the run picks single tests out of them."""
        whole = not any(label_of(i)[1] and "::" in i for i in test_ids)
        return make_canaries(test_ids, list(existing), self.canaries, whole=whole, fallback="tests")

    def spec_for(self, test_ids: list[str]) -> dict[str, Any]:
        plan = {i: label_of(i) for i in test_ids}
        return {"labels": {i: p[0] for i, p in plan.items()},
                "files": {i: p[1] for i, p in plan.items() if p[1]},
                "why": {i: p[2] for i, p in plan.items() if p[2]}, "settings": SETTINGS}

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py): each witness id, and a must-pass and a must-fail
        canary test, by the launcher alone in a fresh runtests.py process each."""
        from ..own_exec import OwnPlan, canary_picks  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        mine = [i for i in test_ids if i.partition("::")[0] in files]
        near = mine[0].partition("::")[0].rsplit("/", 1)[0] if mine and "/" in mine[0] else ""
        for test_id in mine + (canary_picks(canary, near) if mine else []):
            spec = {"ids": [test_id], **self.spec_for([test_id])}
            label = spec["labels"].get(test_id)
            plan.tests[test_id] = {"argv": ["python3", self.launcher_path], "cwd": "", "spec": spec}
            if label:
                plan.tests[test_id]["failed_if"] = (LOG, *(rf"\({re.escape(label)}[.)].* \.\.\. {w}$"
                                                           for w in ("(?:FAIL|ERROR)", "ok")))
        return plan

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """runtests.py's exit status and its `FAILED (failures=N, errors=M)` summary against the
        per-test lines of its log."""
        from ..own_exec import exit_agreement

        from testjack_tui.swebench_harness import parse_log

        log = (report_named(reports, LOG) or b"").decode(errors="replace")
        bad = sorted(k for k, v in parse_log("django", log).items() if as_status(v) in ("failed", "error"))
        said = _SUMMARY.findall(log)  # subtests count apart: only "some" against "none" is sure
        return exit_agreement("runtests.py", result, bad, 1 if said else None,
                              f"FAILED ({said[-1]})" if said else "")

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        from testjack_tui.swebench_harness import parse_log

        plan = json_report(reports, PLAN).get("plan", {})
        log = (report_named(reports, LOG) or b"").decode(errors="replace")
        statuses, texts = fold_subtests(with_headers({k: as_status(v) for k, v in parse_log("django", log).items()},
                                                     log), failure_texts(log))
        aliases = docstring_aliases(log)
        by_label: dict[str, str] = {}  # app.mod.Class.test_m -> harness id
        for harness_id in statuses:
            full = dotted(aliases.get(harness_id, harness_id))
            if full is not None:
                by_label.setdefault(full, harness_id)
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            entry = plan.get(test_id)
            if entry is None:
                outcomes[test_id] = _not_started(test_id, result, log)
                continue
            if entry.get("missing"):
                outcomes[test_id] = TestOutcome(test_id, "not_found", entry["missing"])
                continue
            label = entry["label"]
            mine = {full: h for full, h in by_label.items() if full == label or full.startswith(label + ".")}
            parts = {h: TestOutcome(h, statuses[h], _text(texts, aliases, h)) for h in mine.values()}
            if entry.get("file"):
                module = module_of(entry["file"])
                for full, h in mine.items():
                    node = entry["file"] + "::" + full[len(module) + 1:].replace(".", "::")
                    outcomes[node] = TestOutcome(node, parts[h].status, parts[h].message)
                    outcomes[h] = parts[h]
            if parts:
                status = aggregate([p.status for p in parts.values()])
                bad = next(p for p in parts.values() if p.status == status)
                outcomes[test_id] = TestOutcome(test_id, status, bad.message)
            else:
                outcomes[test_id] = _absent(test_id, label, statuses, texts, result, log)
        return outcomes


def _folder_of(label: str | None) -> str:
    """The app folder a label's tests live in (canaries go beside them)."""
    return f"tests/{label.split('.')[0]}" if label else ""


def _text(texts: dict[str, str], aliases: dict[str, str], harness_id: str) -> str:
    return texts.get(harness_id) or texts.get(aliases.get(harness_id, ""), "")


def _absent(test_id: str, label: str, statuses: dict[str, TestStatus], texts: dict[str, str],
            result: ExecResult, log: str) -> TestOutcome:
    """A requested label none of whose tests reported: its module did not import (Django's
    runner reports a `_FailedTest` named after the part it could not load), the run stopped, or
    there is no such test."""
    parts = set(label.split("."))
    for harness_id, status in statuses.items():
        full = dotted(harness_id) or ""
        if full.startswith(_FAILED_IMPORT) and full.rsplit(".", 1)[-1] in parts:
            return TestOutcome(test_id, "error", "the test module did not load: "
                               + (texts.get(harness_id) or trim(log, 2000)))
    if result.timed_out:
        return TestOutcome(test_id, "timed_out", "the test run hit its timeout before this test ran")
    if not statuses:
        return _not_started(test_id, result, log)
    return TestOutcome(test_id, "not_found", "no such test ran")


def _not_started(test_id: str, result: ExecResult, log: str) -> TestOutcome:
    if result.timed_out:
        return TestOutcome(test_id, "timed_out", "the test run hit its timeout")
    return TestOutcome(test_id, "error", f"tests/runtests.py ran no test (exit {result.exit_code}): "
                       + trim(log or result.output, 2000))
