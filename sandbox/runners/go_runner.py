"""go test: one `go test -json` process for all requested ids (compile once, run all).

Ids, in the forms benchmarks and our witnesses use:
- `<import path>.<TestName>[/<subtest>]` — DeepSWE's scheme (go-ctrf-json-reporter's
  `suite.name`), e.g. `example.com/calc.TestAdd` or `example.com/calc.TestAdd/negative`;
- `<dir>/<file>_test.go` — every Test function declared in that witness file;
- `<dir>/<file>_test.go::TestName[/<subtest>]` — one test of that file.
The launcher maps every id to its package and top-level test, runs one `go test -json
-count=1 -run '^(A|B)$' pkg...` over all of them (subtests run under their parent and are
read from the event stream), and writes the events to a file outside the repo, so a run
killed by its timeout still tells which tests finished. A package that does not compile
gives `error` with the compiler's message for every id in it ("build failed").
Canaries (sandbox/canaries.py `GoCanaries`) come as `package _` files: the launcher gives each
its package's clause, and moves one written under an import path to that package's folder.
Outcome keys: every requested id, plus `<file>::TestName` and `<import path>.TestName` for
each test of a requested file (the first is what the engine reads per candidate file, the
second is the id the benchmark's own grader uses; export needs both).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Iterable
from typing import Any

import json
import posixpath
import re

from ..api import ExecResult, TestOutcome
from ..canaries import Canaries, GoCanaries
from ..hidden_names import GO
from .base import LAUNCHER_PRELUDE, OUT_ROOT, LaunchedRunner, aggregate, json_report, report_named, trim

if TYPE_CHECKING:
    from ..own_exec import OwnPlan
from .pytest_runner import PytestRunner

LAUNCHER_PATH = f"{OUT_ROOT}/go_launch.py"
EVENTS = "go-test.jsonl"
STDERR = "go-test.stderr"
PLAN = "go-plan.json"

# Runs in the container with the environment's python3.
LAUNCHER = LAUNCHER_PRELUDE + r'''
def module_path():
    try:
        for line in open("go.mod"):
            m = re.match(r"\s*module\s+(\S+)", line)
            if m:
                return m.group(1).strip('"')
    except (IOError, OSError):
        pass
    return ""

MODULE = module_path()
TOP = re.compile(r"^(Test|Example|Fuzz)[A-Za-z0-9_]*$")
FUNC = re.compile(r"^func\s+((?:Test|Example|Fuzz)[A-Za-z0-9_]*)\s*\(", re.M)

def pkg_of_dir(d):
    d = d.strip("/")
    if not MODULE:
        return "./" + d if d else "."
    return MODULE + "/" + d if d and d != "." else MODULE

def split_canonical(test_id):
    # "<import path>.<Test>[/sub]": the first "." after the last "/" of the package part
    # that is followed by a test name.
    for m in re.finditer(r"\.", test_id):
        head, tail = test_id[:m.start()], test_id[m.end():]
        top = tail.split("/", 1)[0]
        if head and TOP.match(top) and "/" not in head[head.rfind("/") + 1:]:
            return head, tail
    return None, None

def declared(path):
    try:
        return FUNC.findall(open(path, encoding="utf-8", errors="replace").read())
    except (IOError, OSError):
        return []

def dedupe(paths):
    # Witness files written by different audits may declare the same Test function in one
    # package, which would fail the whole package's build in a batched replay. Later files
    # get theirs renamed (NAME -> NAME_tjN); outcomes are reported under the original names.
    seen, renames = {}, {}
    for path in paths:
        folder = os.path.dirname(path)
        names = seen.setdefault(folder, set())
        text = open(path, encoding="utf-8", errors="replace").read()
        changed = False
        for name in FUNC.findall(text):
            if name in names:
                new, n = name + "_tj2", 2
                while new in names:
                    n += 1
                    new = "%s_tj%d" % (name, n)
                text = re.sub(r"(?m)^(func\s+)" + re.escape(name) + r"(\s*\()", r"\g<1>" + new + r"\2", text)
                renames[(path, name)] = new
                names.add(new)
                changed = True
            else:
                names.add(name)
        if changed:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
    return renames

def package_of(folder):
    # The package clause of the folder's Go files (its code's before its tests').
    found = []
    for name in sorted(os.listdir(folder or ".")):
        if name.endswith(".go"):
            try:
                text = open(os.path.join(folder or ".", name), encoding="utf-8", errors="replace").read()
            except (IOError, OSError):
                continue
            m = re.search(r"(?m)^package\s+(\w+)", text)
            if m and m.group(1) != "_":
                found.append((name.endswith("_test.go"), m.group(1)))
    if not found:
        return re.sub(r"\W", "_", os.path.basename(os.path.abspath(folder or "."))) or "main"
    test_file, name = min(found)
    return name[:-5] if test_file and name.endswith("_test") else name

def place_canary(path):
    # A canary (sandbox/canaries.py) is written as `package _`, under the import path of the
    # package it guards when the run names tests by import path: it goes to that package's
    # folder and takes its package clause. Returns where it is (it is gone when the module has
    # no such package: then it is not found, and the run's passes cannot be confirmed).
    try:
        text = open(path, encoding="utf-8").read()
    except (IOError, OSError, ValueError):
        return path
    if not text.startswith("package _\n"):
        return path
    folder, target = os.path.dirname(path), path
    if MODULE and (folder == MODULE or folder.startswith(MODULE + "/")):
        target = os.path.join(folder[len(MODULE) + 1:], os.path.basename(path))
        os.unlink(path)
        try:
            os.removedirs(folder)
        except OSError:
            pass
        if not os.path.isdir(os.path.dirname(target) or "."):
            return path
    with open(target, "w", encoding="utf-8") as fh:
        fh.write("package %s\n" % package_of(os.path.dirname(target)) + text[len("package _\n"):])
    return target

PLACED = {}
for test_id in spec["ids"]:
    path = test_id.partition("::")[0]
    if path.endswith("_test.go") and path not in PLACED and os.path.isfile(path):
        PLACED[path] = place_canary(path)

plan = {}   # id -> {"tests": [[pkg, name, run as], ...], "file": path or None, "missing": reason}
for test_id in spec["ids"]:
    entry = {"tests": [], "file": None, "missing": ""}
    path, sep, name = test_id.partition("::")
    path = PLACED.get(path, path)
    if path.endswith(".go"):
        entry["file"] = path
        pkg = pkg_of_dir(os.path.dirname(path))
        if not os.path.isfile(path):
            entry["missing"] = "no such test file"
        elif not path.endswith("_test.go"):
            entry["missing"] = "not a test file: go test compiles only files named *_test.go"
        else:
            names = declared(path)
            if sep:
                names = [name] if name.split("/", 1)[0] in names else []
            entry["tests"] = [[pkg, n] for n in names]
            if not names:
                entry["missing"] = ("the file declares no such Test function" if sep
                                    else "the file declares no Test function")
    else:
        pkg, name = split_canonical(test_id)
        if pkg is None:
            pkg, name = "./...", test_id  # a bare test name: look in every package
        entry["tests"].append([pkg, name])
    plan[test_id] = entry

files = []
for test_id in spec["ids"]:
    path = test_id.partition("::")[0]
    path = PLACED.get(path, path)
    if path.endswith("_test.go") and os.path.isfile(path) and path not in files:
        files.append(path)
RENAMES = dedupe(files) if len(files) > 1 else {}
for entry in plan.values():
    for test in entry["tests"]:
        top, slash, sub = test[1].partition("/")
        test.append(RENAMES.get((entry["file"], top), top) + slash + sub)

with open(os.path.join(out_dir, "go-plan.json"), "w") as fh:
    json.dump({"module": MODULE, "plan": plan}, fh)

pkgs, tops = [], []
for entry in plan.values():
    for pkg, _, name in entry["tests"]:
        if pkg not in pkgs:
            pkgs.append(pkg)
        top = name.split("/", 1)[0]
        if top not in tops:
            tops.append(top)
if not pkgs:
    sys.exit(5)
def witness_tags(paths):
    # The tags a named file's own `//go:build a && b` line asks for (plain names joined by &&):
    # without them go leaves the file out and its tests are not found.
    tags = []
    for path in paths:
        try:
            head = open(path, encoding="utf-8", errors="replace").read(4000)
        except (IOError, OSError):
            continue
        m = re.search(r"(?m)^//go:build\s+(.+)$", head)
        if m and re.match(r"^\w+(\s*&&\s*\w+)*\s*$", m.group(1)):
            tags += [t for t in re.split(r"\s*&&\s*", m.group(1).strip())
                     if t not in ("ignore", "linux", "unix", "amd64", "arm64", "cgo")]
    return tags

t0_tags = [t for f in spec.get("build_flags") or [] if f.startswith("-tags=") for t in f[6:].split(",") if t]
extra = [t for t in witness_tags(files) if t not in t0_tags]
tags = list(dict.fromkeys(t0_tags + extra))
# Printed before any code of the repo runs (the engine believes only these first lines).
if t0_tags:
    print("TJ_CONFIG go test -tags=%s: T0's build tags, for every witness run" % ",".join(t0_tags), flush=True)
if extra:
    print("TJ_CONFIG go test -tags=%s: asked for by a witness file's //go:build line" % ",".join(extra), flush=True)
print("TJ_FILES " + json.dumps(files), flush=True)
args = ["go", "test", "-json", "-count=1", "-timeout", "0"] + (["-tags=" + ",".join(tags)] if tags else [])
args += ["-run", "^(" + "|".join(re.escape(t) for t in tops) + ")$"]
if spec.get("cover"):
    args += ["-coverprofile", os.path.join(out_dir, "cover.out"), "-covermode", "set",
             "-coverpkg", "./..."]
args += pkgs
env = dict(os.environ)
env.setdefault("GOFLAGS", "")
env.setdefault("GOPROXY", "off")
env.setdefault("GOTOOLCHAIN", "local")
print("TJ_GO " + " ".join(args), flush=True)
with open(os.path.join(out_dir, "go-test.jsonl"), "wb") as out, \
        open(os.path.join(out_dir, "go-test.stderr"), "wb") as err:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, env=env)
    for line in proc.stdout:
        out.write(line)
        out.flush()
    code = proc.wait()
sys.exit(code)
'''


_FUNC = re.compile(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


class GoTestRunner(LaunchedRunner):
    """`go test -json`; see the module docstring for ids and outcome keys."""

    name = "go test"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
    canaries = GoCanaries()
    names = GO
    witness_hint = ("a new `<topic>_tj_test.go` in the directory of the package it tests "
                    "(`package <name>`, or `<name>_test` for the public API only) with "
                    "`func TestTJ<Topic>(t *testing.T)`; run_tests takes the file's path or "
                    "`path::TestName` (T0's ids read `<import path>.<TestName>[/<subtest>]`)")
    # Same in-exec wrapper as pytest (a python3 launcher): files in, reports out on stdout.
    inline_command = PytestRunner.inline_command

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        """`<import path>.TestName` for each `path::TestName` the run reported."""
        names = [n.split("::", 1)[1] for n in outcomes if n.startswith(path + "::")]
        ids = []
        for name in names:
            matches = sorted(k for k in outcomes if "::" not in k and k.endswith("." + name))
            ids.extend(matches[:1] or [f"{path}::{name}"])
        return sorted(ids)

    def __init__(self, cover: bool = False):
        self.cover = cover

    def spec_extra(self) -> dict[str, Any]:
        return {"cover": self.cover}

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py): each witness test, and a must-pass and a
        must-fail canary test, by its package's test binary run alone."""
        from ..own_exec import OwnPlan, canary_picks  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        wanted: dict[str, list[str]] = {}
        for test_id in test_ids:
            path, sep, name = test_id.partition("::")
            if path.endswith("_test.go") and path in files and "/" not in name:
                names = [name] if sep else _FUNC.findall(files[path])
                wanted.setdefault(path, []).extend(n for n in names if n.startswith("Test"))
        for path in canary_picks(canary, posixpath.dirname(next(iter(wanted), ""))) if wanted else []:
            file, _, name = path.partition("::")
            wanted.setdefault(file, []).append(name)
        for path, names in wanted.items():
            folder = posixpath.dirname(path)
            build = "go-" + re.sub(r"\W", "_", folder or "root")
            plan.builds[build] = {"argv": ["env", "GOPROXY=off", "GOTOOLCHAIN=local", "go", "test", "-c",
                                           "-o", "{out}", "./" + folder if folder else "."], "cwd": ""}
            for name in names:
                plan.tests[f"{path}::{name}"] = {
                    "argv": ["{bin}", "-test.run", f"^{name}$", "-test.count=1"], "cwd": folder, "build": build,
                    "failed_if": (EVENTS, *(f'^(?=.*"Action":"{a}")(?=.*"Test":"{re.escape(name)}").*$'
                                            for a in ("fail", "pass")))}
        return plan

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """go test's exit status against its event stream: it exits 0 only when every test passed."""
        from ..own_exec import exit_agreement

        events = parse_events(report_named(reports, EVENTS) or b"")
        failed = sorted(t for (_, t), s in events.status.items() if s == "fail")
        return exit_agreement("go test", result, failed)

    def report_paths(self, out_dir: str) -> list[str]:
        paths = [f"{out_dir}/{EVENTS}", f"{out_dir}/{STDERR}", f"{out_dir}/{PLAN}"]
        return paths + ([f"{out_dir}/cover.out"] if self.cover else [])

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        def report(suffix: str) -> bytes | None:
            return report_named(reports, suffix)

        events = parse_events(report(EVENTS) or b"")
        stderr = (report(STDERR) or b"").decode(errors="replace")
        plan = json_report(reports, PLAN).get("plan", {})
        build_errors = build_failures(stderr, events)
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            entry = plan.get(test_id)
            if entry is None:
                outcomes[test_id] = _unplanned(result, stderr)
                continue
            if entry.get("missing"):
                outcomes[test_id] = TestOutcome(test_id, "not_found", entry["missing"])
                continue
            parts: list[TestOutcome] = []
            for pkg, name, run_as in entry["tests"]:
                found_pkg, one = _outcome(events, build_errors, pkg, run_as, result)
                parts.append(one)
                if entry.get("file"):
                    outcomes[f"{entry['file']}::{name}"] = TestOutcome(
                        f"{entry['file']}::{name}", one.status, one.message, one.duration)
                    if run_as == name:  # a renamed duplicate is not the id the grader sees
                        outcomes[f"{found_pkg}.{name}"] = TestOutcome(
                            f"{found_pkg}.{name}", one.status, one.message, one.duration)
            status = aggregate([p.status for p in parts])
            bad = next((p for p in parts if p.status == status), parts[0] if parts else None)
            outcomes[test_id] = TestOutcome(test_id, status, bad.message if bad else "",
                                            sum(p.duration for p in parts))
        return outcomes


class GoEvents:
    def __init__(self) -> None:
        self.status: dict[tuple[str, str], str] = {}  # (package, test) -> pass|fail|skip|run
        self.output: dict[tuple[str, str], list[str]] = {}
        self.elapsed: dict[tuple[str, str], float] = {}
        self.package_status: dict[str, str] = {}
        self.package_output: dict[str, list[str]] = {}


def parse_events(data: bytes) -> GoEvents:
    ev = GoEvents()
    for line in data.decode(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        pkg, test, action = str(rec.get("Package") or ""), rec.get("Test"), rec.get("Action")
        if test:
            key = (pkg, str(test))
            if action == "output":
                ev.output.setdefault(key, []).append(str(rec.get("Output") or ""))
            elif action in ("run", "pass", "fail", "skip"):
                if action != "run" or key not in ev.status:
                    ev.status[key] = action
                if action != "run":
                    ev.elapsed[key] = float(rec.get("Elapsed") or 0.0)
        elif action == "output":
            ev.package_output.setdefault(pkg, []).append(str(rec.get("Output") or ""))
        elif action in ("pass", "fail", "skip"):
            ev.package_status[pkg] = action
    return ev


def build_failures(stderr: str, events: GoEvents) -> dict[str, str]:
    """Package -> compiler output, for packages that did not build (before Go 1.24 the build
    output goes to stderr as `# pkg` blocks; later versions send build-output events)."""
    failed: dict[str, str] = {}
    current = None
    for line in stderr.splitlines():
        m = re.match(r"^# (\S+)", line)
        if m:
            current = m.group(1)
            failed.setdefault(current, "")
            continue
        if current is not None and line.strip():
            failed[current] += line + "\n"
    for line in stderr.splitlines():
        m = re.match(r"^FAIL\s+(\S+)\s+\[(build|setup) failed\]", line)
        if m:
            failed.setdefault(m.group(1), line)
    for pkg, lines in events.package_output.items():
        text = "".join(lines)
        if "[build failed]" in text or "[setup failed]" in text:
            failed.setdefault(pkg, text)
    # `# example.com/m/pkg [example.com/m/pkg.test]` names the package first.
    return {pkg.split(" [", 1)[0]: text.strip() or "build failed" for pkg, text in failed.items()}


def _outcome(events: GoEvents, build_errors: dict[str, str], pkg: str, name: str,
             result: ExecResult) -> tuple[str, TestOutcome]:
    """(the package the test was found in, its outcome)."""
    keys = [k for k in events.status if k[1] == name and (pkg == "./..." or k[0] == pkg
                                                           or k[0].endswith("/" + pkg.lstrip("./")))]
    if keys:
        key = keys[0]
        raw = events.status[key]
        text = trim("".join(events.output.get(key, [])), 2000)
        found, tid = key[0], f"{key[0]}.{name}"
        if raw == "pass":
            return found, TestOutcome(tid, "passed", "", events.elapsed.get(key, 0.0))
        if raw == "skip":
            return found, TestOutcome(tid, "skipped", text, events.elapsed.get(key, 0.0))
        if raw == "fail":
            return found, TestOutcome(tid, "failed", text, events.elapsed.get(key, 0.0))
        # "run" without an end: the binary died in this test, or the run hit its timeout.
        if result.timed_out:
            return found, TestOutcome(tid, "timed_out", "the test run hit its timeout during this test")
        return found, TestOutcome(tid, "error", "the test binary ended during this test (panic, "
                                  f"os.Exit or a kill; exit {result.exit_code}): {text}")
    broken = next((text for p, text in build_errors.items()
                   if p == pkg or (pkg == "./..." and p) or p.endswith("/" + pkg.lstrip("./"))), None)
    tid = f"{pkg}.{name}"
    if broken is not None:
        return pkg, TestOutcome(tid, "error", "build failed: " + trim(broken, 2000))
    pkg_text = "".join(events.package_output.get(pkg, []))
    if events.package_status.get(pkg) == "fail" and _crashed(events, pkg):
        return pkg, TestOutcome(tid, "error", "the package's test binary failed before this test "
                                "ran (TestMain, init or a panic): " + trim(pkg_text, 2000))
    if result.timed_out:
        return pkg, TestOutcome(tid, "timed_out", "the test run hit its timeout before this test ran")
    return pkg, TestOutcome(tid, "not_found", "no such test ran")


def _crashed(events: GoEvents, pkg: str) -> bool:
    """Did the package's test binary stop early (panic, TestMain/init failure, os.Exit), rather
    than run to the end with some tests failing?"""
    finished = [k for k, v in events.status.items() if k[0] == pkg and v != "run"]
    if not finished:
        return True
    texts = ["".join(events.package_output.get(pkg, []))]
    texts += ["".join(v) for k, v in events.output.items() if k[0] == pkg]
    return any(t.startswith("panic: ") or "\npanic: " in t for t in texts)


def _unplanned(result: ExecResult, stderr: str) -> TestOutcome:
    if result.timed_out:
        return TestOutcome("", "timed_out", "the test run hit its timeout")
    return TestOutcome("", "error", "go test did not start (exit "
                       f"{result.exit_code}): {trim(stderr or result.output, 2000)}")
