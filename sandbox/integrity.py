"""Harness tampering: files a trial's patch touches that can change how tests run or pass.

A conftest hook can turn every failure into a pass; pytest config can add options or plugins;
sitecustomize/usercustomize and .pth files run at interpreter start; an edited test file can
weaken tests. The same holds per ecosystem: in Go a `TestMain` or an `init()` in a `_test.go`
file runs before every test of its package (and can flip package state or exit early). For
witness runs (isolate_harness=True) these are restored to the reference
version before the tests run, and what was restored is reported. Which files count is the one
classification in `testjack_tui.repo_files` (the evidence reports the same set).
"""
from __future__ import annotations

from testjack_tui.diffs import parse_diff
from testjack_tui.repo_files import harness_files


def harness_reasons(patch: str) -> dict[str, str]:
    """Harness files a patch touches, with why each matters. Test files are candidates:
    they count only when they exist in the base repo (checked inside the world)."""
    return harness_files(parse_diff(patch))
