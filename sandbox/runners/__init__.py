"""Test runners by framework name."""
from __future__ import annotations

from .base import Runner, aggregate
from .pytest_runner import PytestRunner

RUNNERS: dict[str, type] = {"pytest": PytestRunner}


def get_runner(framework: str = "pytest") -> Runner:
    try:
        return RUNNERS[framework or "pytest"]()
    except KeyError as exc:
        from ..errors import SandboxError
        raise SandboxError(f"no test runner for framework {framework!r} "
                           f"(known: {', '.join(sorted(RUNNERS))})") from exc


__all__ = ["Runner", "PytestRunner", "get_runner", "aggregate", "RUNNERS"]
