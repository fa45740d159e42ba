"""The test-runner interface: how to run a set of test ids and read back per-test outcomes.

pytest is the first runner; go test (`-json`), cargo test (libtest JSON) and jest/vitest
(`--json`/JUnit reporters) fit the same shape: support files to copy in, one command for all
ids (batched replay: one process for W witnesses), report files to copy out, a parser.
"""
from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from typing import Any, Protocol

from ..api import ExecResult, TestOutcome, TestStatus
from ..canaries import CanaryStyle
from ..hidden_names import NameStyle

OUT_ROOT = "/tmp/tj"  # outside the repo, so reports never show up in the repo or its git status

# How every launcher starts in the container: read the run's spec (a file, not the environment:
# the run wrapper strips TJ_* variables before tests run), go to the repo, make the report folder.
LAUNCHER_PRELUDE = r'''
import json, os, re, subprocess, sys

spec = json.loads(os.environ["TJ_SPEC"]) if os.environ.get("TJ_SPEC") else json.load(open(sys.argv[1]))
if len(sys.argv) > 1:
    try:  # the ids name the canaries: not left on disk for the tests to read
        os.unlink(sys.argv[1])
    except OSError:
        pass
workdir, out_dir = spec["workdir"], spec["out_dir"]
os.chdir(workdir)
if not os.path.isdir(out_dir):
    os.makedirs(out_dir)
'''


class LaunchedRunner:
    """A runner whose in-container work is a python3 launcher baked into the snapshot
    (`launcher_path`, `launcher`), given one spec file per run (ids, workdir, out_dir and
    `spec_extra()`) and writing the files named in `reports` under out_dir."""

    launcher_path = ""
    launcher = ""
    canaries: CanaryStyle | None = None  # how its canaries are written (sandbox/canaries.py)
    names: NameStyle | None = None  # how its witnesses are renamed per run (sandbox/hidden_names.py)
    reports: tuple[str, ...] = ()
    build_flags: tuple[str, ...] = ()  # T0's build options (runners/build_flags.py), for every run

    def spec_extra(self) -> dict[str, Any]:
        return {}

    def spec_for(self, test_ids: list[str]) -> dict[str, Any]:
        """Extra spec fields for one run of test_ids (default: `spec_extra()`); a runner that
        maps ids on the host (django: ids -> runtests.py labels) adds its plan here."""
        return self.spec_extra()

    def support_files(self) -> dict[str, str]:
        return {self.launcher_path: self.launcher}

    def new_out_dir(self) -> str:
        return f"{OUT_ROOT}/run-{secrets.token_hex(6)}"

    def command(self, test_ids: list[str], *, workdir: str, out_dir: str
                ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "out_dir": out_dir,
                           "build_flags": list(self.build_flags), **self.spec_for(test_ids)})
        return ["python3", self.launcher_path, f"{out_dir}/spec.json"], {}, {f"{out_dir}/spec.json": spec}

    def report_paths(self, out_dir: str) -> list[str]:
        return [f"{out_dir}/{name}" for name in self.reports]


CONFIG_NOTE = "TJ_CONFIG "  # a launcher's line: how it fitted the run to the repo's test configuration
FILES_LINE = "TJ_FILES "  # the launcher's last line before any code of the repo runs


def config_notes(stdout_head: str) -> list[str]:
    """What a launcher changed of the repo's test configuration for a focused run (options
    left out, patterns added), from its `TJ_CONFIG` lines. Only lines before its `TJ_FILES` line
    count: they are printed before any code of the repo runs, so tests cannot add any."""
    notes: list[str] = []
    for line in stdout_head.splitlines():
        if line.startswith(FILES_LINE):
            return notes
        if line.startswith(CONFIG_NOTE):
            notes.append(line[len(CONFIG_NOTE):].strip())
    return []


def report_named(reports: dict[str, bytes | None], suffix: str) -> bytes | None:
    """The content of the fetched report whose path ends with suffix (None when absent)."""
    return next((v for k, v in reports.items() if k.endswith(suffix)), None)


def json_report(reports: dict[str, bytes | None], suffix: str) -> dict[str, Any]:
    """A fetched JSON report (a launcher's plan); {} when it is missing or cut short."""
    try:
        data = json.loads(report_named(reports, suffix) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class Runner(Protocol):
    name: str
    witness_hint: str  # for the agents: where witness files go and how their ids look
    # How sandbox/canaries.py writes and places this runner's canaries (None: its runs carry
    # none). A runner that also decides how they are requested (Django: as whole modules) has a
    # `make_canaries(test_ids, existing)` that calls canaries.make_canaries with its style.
    @property
    def canaries(self) -> CanaryStyle | None:  # read-only: each runner names its own style
        ...

    # How sandbox/hidden_names.py renames this runner's candidate test files and tests on each
    # run (None: they run under their own names).
    @property
    def names(self) -> NameStyle | None:
        ...

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        """The ids the benchmark's own grader uses for the tests of one witness file."""
        ...

    def new_out_dir(self) -> str:
        """A fresh directory in the container for one run's reports."""
        ...

    def support_files(self) -> dict[str, str]:
        """Absolute path in the container -> content (launchers, plugins); copied in once."""
        ...

    def command(self, test_ids: list[str], *, workdir: str, out_dir: str
                ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        """(argv, extra env, files to write (absolute path -> content)) for one run of all ids."""
        ...

    def report_paths(self, out_dir: str) -> list[str]:
        """Files to copy out after the run (missing ones are passed to parse as None)."""
        ...

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        ...


def aggregate(statuses: list[TestStatus]) -> TestStatus:
    """The status of a group of tests (a file, a class, a parametrized id, a witness's ids) from
    theirs: the worst one decides, in the order unverifiable (a void run), timed_out, failed, error,
    not_found; all skipped
    is skipped; otherwise passed. The engine's "does this witness fail on this trial" rule
    (`testjack_tui.engine.runner.witness_fails`) reads this one status."""
    if not statuses:
        return "not_found"
    for status in ("unverifiable", "timed_out", "failed", "error", "not_found"):
        if status in statuses:
            return status
    if all(s == "skipped" for s in statuses):
        return "skipped"
    return "passed"


def trim(text: str, limit: int = 4000) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n[...]\n" + text[-half:]
