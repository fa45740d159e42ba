"""The test-runner interface: how to run a set of test ids and read back per-test outcomes.

pytest is the first runner; go test (`-json`), cargo test (libtest JSON) and jest/vitest
(`--json`/JUnit reporters) fit the same shape: support files to copy in, one command for all
ids (batched replay: one process for W witnesses), report files to copy out, a parser.
"""
from __future__ import annotations

from typing import Protocol

from ..api import ExecResult, TestOutcome, TestStatus

OUT_ROOT = "/tmp/tj"  # outside the repo, so reports never show up in the repo or its git status


class Runner(Protocol):
    name: str

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
