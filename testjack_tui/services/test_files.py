"""What the front ends ask about test files: which of our runners a task's framework uses, and
whether a repository path may hold a candidate test (the rule the agents' tools apply too).
Imported lazily: the runner registry stays out of `--help`."""
from __future__ import annotations

from typing import Any


def runner_name(framework: str | None) -> str | None:
    """Our runner for a framework (pytest, django, go, vitest, jest, mocha, node, cargo), or None."""
    from testjack_tui.sandbox.runners import runner_name as name

    return name(framework)


def check_test_path(path: Any) -> str | None:
    """Why a candidate test may not go to `path` (None: it may)."""
    from testjack_tui.agents.toolbox import check_test_path as check

    return check(path)
