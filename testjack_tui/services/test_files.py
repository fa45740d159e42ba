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


def syntax_check(todo: list[tuple[Any, Any, str, str, str]]) -> tuple[tuple[Any, str, str] | None, str]:
    """((item, task id, error) of the first candidate its toolchain cannot parse, or None; why
    the check could not be made, "" when it was). Each is checked in a null world of its task
    (sandbox/syntax_check.py); todo holds (item, task, kind, repo path, source). When no world
    started or a check did not finish, the files not yet checked are not known to parse: the
    front end says so, and the audit's runs will say why."""
    if not todo:
        return None, ""
    import asyncio

    from testjack_tui.errors import SandboxError
    from testjack_tui.sandbox.core import Sandbox
    from testjack_tui.sandbox.syntax_check import syntax_error

    async def check() -> tuple[Any, str, str] | None:
        async with Sandbox(session="operator-syntax") as sb:
            worlds: dict[str, Any] = {}
            for item, task, kind, path, source in todo:
                if task.id not in worlds:
                    worlds[task.id] = await sb.prepare(task, "null")
                error = await syntax_error(sb, worlds[task.id], kind, path, source)
                if error:
                    return item, task.id, error
        return None

    try:
        return asyncio.run(check()), ""
    except SandboxError as error:
        return None, str(error).splitlines()[0] if str(error) else type(error).__name__
