"""Rust: one `cargo test --no-fail-fast` for all requested ids (compile once, run all), per-test
results read from libtest's `test <name> ... ok|FAILED|ignored` lines of each test binary.

Ids, in the forms benchmarks and our witnesses use:
- `<package>: <path::to::test>` (unit tests of the library) and `<package>::<target>: <test>`
  (integration test target `tests/<target>.rs`) — the binary ids cargo-nextest reports, which
  DeepSWE's Rust tasks use;
- `tests/<target>.rs` — every test of that integration-test file; `tests/<target>.rs::<test>` —
  one of them (in a workspace, `<member folder>/tests/<target>.rs`).
Only the test targets the ids name are built and run (`--lib`, `--test <target>`). In a cargo
workspace (its members read from `cargo metadata`; a virtual manifest has no root package)
each package the ids name is tested by its own `cargo test -p <package>`, and its part of the
log is headed by its name, since libtest's lines name neither. Canaries (sandbox/canaries.py
`CargoCanaries`) come as `tests/<package>/<name>.rs`: the launcher moves each into that
package's `tests/` folder. A crate that does not compile gives `error` with the compiler's
message for every id. Outcome keys: every
requested id, plus `<file>::<test>` and `<package>::<target>: <test>` for each test of a
requested file.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Iterable

import posixpath
import re

from ..api import ExecResult, TestOutcome, TestStatus
from ..canaries import Canaries, CargoCanaries
from ..hidden_names import RUST
from .base import LAUNCHER_PRELUDE, OUT_ROOT, LaunchedRunner, aggregate, json_report, report_named, trim

if TYPE_CHECKING:
    from ..own_exec import OwnPlan
from .pytest_runner import PytestRunner

LAUNCHER_PATH = f"{OUT_ROOT}/cargo_launch.py"
LOG = "cargo-test.log"
PLAN = "cargo-plan.json"
# Our own runs' builds use the launcher's build settings (LAUNCHER: the user base's flag file), so
# they reuse what the run built instead of building the test target again.
CARGO_AS_RUN = ('[ -e "$HOME/.tj-cargo-noincr" ] && export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_STRIP=debuginfo; '
                'exec "$@"')

LAUNCHER = LAUNCHER_PRELUDE + r'''package = ""
try:
    text = open("Cargo.toml").read()
    m = re.search(r'\[package\][^\[]*?\bname\s*=\s*"([^"]+)"', text, re.S)
    package = m.group(1) if m else ""
except (IOError, OSError):
    text = ""
# Package name -> its folder ("" for the root). A workspace (a virtual manifest has no root
# package) names its members through `cargo metadata`; each is then tested on its own.
members = {package: ""} if package else {}
if re.search(r"(?m)^\s*\[workspace\]", text):
    try:
        meta = json.loads(subprocess.run(["cargo", "metadata", "--no-deps", "--offline", "--format-version", "1"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout)
        for p in meta.get("packages") or []:
            d = os.path.relpath(os.path.dirname(p["manifest_path"]), os.getcwd())
            if not d.startswith(".."):
                members[p["name"]] = "" if d == "." else d
    except (OSError, ValueError, KeyError, TypeError):
        pass
workspace = len(members) > 1 or (bool(members) and not package)

def place(path):
    # A canary for package P (sandbox/canaries.py CargoCanaries) is written as tests/P/<name>.rs:
    # it becomes an integration test of P (P's folder's tests/<name>.rs).
    m = re.match(r"^tests/([^/]+)/([^/]+\.rs)$", path)
    if not m or m.group(1) not in members or not os.path.isfile(path):
        return path
    target = os.path.join(members[m.group(1)], "tests", m.group(2))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.rename(path, target)
    try:
        os.removedirs(os.path.dirname(path))
    except OSError:
        pass
    return target

def owner(path):
    # The package whose integration test `path` is (None when it is none's).
    folder, name = os.path.split(path)
    for pkg, d in members.items():
        if folder == os.path.join(d, "tests") and name.endswith(".rs"):
            return pkg
    return None if members else ("" if folder == "tests" else None)

PLACED = {}
plan = {"package": package, "workspace": workspace, "ids": {}}
targets = {}  # package -> cargo target options
for test_id in spec["ids"]:
    entry = {"binary": None, "name": "", "file": None, "missing": ""}
    path, sep, name = test_id.partition("::")
    if path.endswith(".rs"):
        entry["file"] = path
        if path not in PLACED:
            PLACED[path] = place(path)
        where = PLACED[path]
        target = os.path.splitext(os.path.basename(where))[0]
        pkg = owner(where)
        if pkg is None:
            entry["missing"] = ("witness files are integration tests: tests/<name>.rs"
                                + (" in a member's folder" if workspace else ""))
        elif not os.path.isfile(where):
            entry["missing"] = "no such test file"
        entry["binary"], entry["name"] = (pkg or "") + "::" + target, name
        if not entry["missing"]:
            targets.setdefault(pkg, []).append(("--test", target))
    else:
        binary, sep2, name = test_id.partition(": ")
        entry["binary"], entry["name"] = binary, name
        pkg, colons, target = binary.partition("::")
        targets.setdefault(pkg, []).append(("--test", target) if colons else ("--lib",))
    plan["ids"][test_id] = entry
with open(os.path.join(out_dir, "cargo-plan.json"), "w") as fh:
    json.dump(plan, fh)
# T0's features (`cargo test --features X`): a witness of code behind a feature builds only with it.
flags = [f for f in spec.get("build_flags") or [] if f.startswith(("--features=", "--all-features", "--no-default-features"))]
# Printed before any code of the repo runs (the engine believes only these first lines).
if flags:
    print("TJ_CONFIG cargo test %s: T0's features, for every witness run" % " ".join(flags), flush=True)
print("TJ_FILES " + json.dumps(sorted(PLACED.values())), flush=True)
if not targets:
    sys.exit(5)
env = dict(os.environ, CARGO_TERM_COLOR="never", RUST_BACKTRACE="0")
# Built as the user base built target/ when it says so (sandbox/user_base.py): only the crates a
# patch or witness changed compile, and a run writes small binaries instead of copying rustc's
# incremental session up. (RUST_BACKTRACE=0: no backtrace printed needs the debug info.)
if os.path.exists(os.path.expanduser("~/.tj-cargo-noincr")):
    env.update(CARGO_INCREMENTAL="0", CARGO_PROFILE_DEV_STRIP="debuginfo")
code = 0
with open(os.path.join(out_dir, "cargo-test.log"), "wb") as log:
    # One cargo test for a single crate; one per package in a workspace, each log part headed by
    # its package (libtest's lines name neither package nor crate).
    for pkg, options in (targets.items() if workspace else [(None, [t for ts in targets.values() for t in ts])]):
        args = ["cargo", "test", "--no-fail-fast", "--offline"] + (["-p", pkg] if pkg is not None else []) + flags
        for t in dict.fromkeys(options):
            args += list(t)
        print("TJ_CARGO " + " ".join(args), flush=True)
        if pkg is not None:
            log.write(("TJ_PACKAGE %s\n" % pkg).encode())
            log.flush()
        code = subprocess.call(args, stdout=log, stderr=subprocess.STDOUT, env=env) or code
sys.exit(code)
'''

_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
_RESULT = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\b")
_SECTION = re.compile(r"^---- (\S+) stdout ----$")
_PACKAGE = re.compile(r"^TJ_PACKAGE (\S+)$")
_SUMMARY = re.compile(r"^test result: \w+\. \d+ passed; (\d+) failed;.*$", re.M)
_TEST_FN = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?fn\s+(\w+)")


class CargoTestRunner(LaunchedRunner):
    """`cargo test`; see the module docstring for ids and outcome keys."""

    name = "cargo test"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
    reports = (LOG, PLAN)
    canaries = CargoCanaries()
    names = RUST
    witness_hint = ("a new integration test `tests/tj_<topic>.rs` using the crate's public API "
                    "(`use <crate>::...;`) with `#[test]` functions; run_tests takes the file's path "
                    "or `path::<test fn>` (T0's ids read `<package>: <module::test>` or "
                    "`<package>::<target>: <test>`)")
    inline_command = PytestRunner.inline_command  # the same python3 wrapper: files in, reports out

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        target = path.rsplit("/", 1)[-1].removesuffix(".rs")
        return sorted(n for n in outcomes if "::" in n.split(": ", 1)[0]
                      and n.split(": ", 1)[0].endswith("::" + target) and ": " in n)

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py): each witness test, and a must-pass and a
        must-fail canary test, by its target's test binary run alone with `--exact`."""
        from ..own_exec import OwnPlan, canary_picks  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        wanted: dict[str, list[str]] = {}
        for test_id in test_ids:
            path, sep, name = test_id.partition("::")
            if path.endswith(".rs") and posixpath.basename(posixpath.dirname(path)) == "tests" and path in files:
                wanted.setdefault(path, []).extend([name] if sep else _TEST_FN.findall(files[path]))
        for node in canary_picks(canary, posixpath.dirname(next(iter(wanted), ""))) if wanted else []:
            file, _, name = node.partition("::")
            wanted.setdefault(file, []).append(name)
        for path, names in wanted.items():
            member = posixpath.dirname(posixpath.dirname(path))
            target = posixpath.basename(path)[:-3]
            manifest = ["--manifest-path", posixpath.join(member, "Cargo.toml")] if member else []
            build = "cargo-" + re.sub(r"\W", "_", path)
            plan.builds[build] = {"argv": ["sh", "-c", CARGO_AS_RUN, "sh", "cargo", "test", "--offline", "--no-run",
                                           "--message-format=json", *manifest, "--test", target],
                                  "cwd": "", "pick": "cargo"}
            for name in names:
                plan.tests[f"{path}::{name}"] = {"argv": ["{bin}", "--exact", name, "--test-threads=1"],
                                                 "cwd": member, "build": build,
                                                 "failed_if": (LOG, *(f"^test {re.escape(name)} \\.\\.\\. {w}"
                                                                      for w in ("FAILED", "ok")))}
        return plan

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """cargo's exit status and libtest's `test result:` lines against the per-test lines."""
        from ..own_exec import exit_agreement

        log = (report_named(reports, LOG) or b"").decode(errors="replace")
        results, _ = read_log(log, json_report(reports, PLAN).get("package", ""))
        failed = sorted(n for (_, n), s in results.items() if s == "failed")
        said = [m for m in _SUMMARY.finditer(log) if int(m.group(1))]
        return exit_agreement("cargo test", result, failed, 1 if said else None, said[0].group(0) if said else "")

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        def report(suffix: str) -> bytes | None:
            return report_named(reports, suffix)

        plan = json_report(reports, PLAN)
        log = (report(LOG) or b"").decode(errors="replace")
        results, messages = read_log(log, plan.get("package", ""))
        compile_error = _compile_error(log) if not results else ""
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            entry = (plan.get("ids") or {}).get(test_id)
            status: TestStatus
            if entry is None:
                status = "timed_out" if result.timed_out else "error"
                outcomes[test_id] = TestOutcome(test_id, status, "cargo test did not start: "
                                                + trim(log or result.output, 1000))
                continue
            if entry.get("missing"):
                outcomes[test_id] = TestOutcome(test_id, "not_found", entry["missing"])
                continue
            binary, name = entry["binary"], entry["name"]
            mine = [(n, s) for (b, n), s in results.items() if b == binary
                    and (not name or n == name or n.startswith(name + "::"))]
            if entry.get("file"):
                for n, s in mine:
                    message = messages.get((binary, n), "")
                    outcomes[f"{entry['file']}::{n}"] = TestOutcome(f"{entry['file']}::{n}", s, message)
                    outcomes[f"{binary}: {n}"] = TestOutcome(f"{binary}: {n}", s, message)
            if mine:
                status = aggregate([s for _, s in mine])
                bad = next((n for n, s in mine if s == status), mine[0][0])
                outcomes[test_id] = TestOutcome(test_id, status, messages.get((binary, bad), ""))
            elif compile_error:
                outcomes[test_id] = TestOutcome(test_id, "error", "build failed: " + compile_error)
            elif result.timed_out:
                outcomes[test_id] = TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            else:
                outcomes[test_id] = TestOutcome(test_id, "not_found", "no such test ran")
        return outcomes


_CARGO_STATUS: dict[str, TestStatus] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}


def read_log(log: str, package: str) -> tuple[dict[tuple[str, str], TestStatus], dict[tuple[str, str], str]]:
    """({(binary id, test name): status}, {(binary id, test name): failure output})."""
    results: dict[tuple[str, str], TestStatus] = {}
    messages: dict[tuple[str, str], str] = {}
    binary = package
    section: tuple[str, str] | None = None
    for line in log.splitlines():
        m = _PACKAGE.match(line)
        if m:  # the launcher's head of one package's part of a workspace's log
            package = binary = m.group(1)
            section = None
            continue
        m = _RUNNING.match(line)
        if m:
            source = m.group(1)
            target = source.rsplit("/", 1)[-1].removesuffix(".rs")
            binary = f"{package}::{target}" if source.startswith("tests/") else package
            section = None
            continue
        m = _RESULT.match(line)
        if m:
            results[(binary, m.group(1))] = _CARGO_STATUS[m.group(2)]
            continue
        m = _SECTION.match(line)
        if m:
            section = (binary, m.group(1))
            messages[section] = ""
            continue
        if section is not None:
            if line.startswith("failures:") or line.startswith("test result:"):
                section = None
            else:
                messages[section] = trim(messages[section] + line + "\n", 2000)
    return results, messages


def _compile_error(log: str) -> str:
    lines = log.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("error")), None)
    return trim("\n".join(lines[start:start + 40]), 2000) if start is not None else ""
