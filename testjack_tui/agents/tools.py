"""WorldTools bound to one task's prepared worlds, for one agent session.

Each world gets one long-lived container (`Sandbox.open`) the first time a tool touches it,
so an agent's commands within a session share state the way a developer's shell would;
`aclose()` (or leaving `async with`) removes them. Candidate files written by the agent are
copied into every open container and into containers opened later.

Only the worlds passed in are reachable: the engine gives the task-analysis role just the
null world and no trial, so nothing here can show it G or a trial's patch.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any, Mapping

from sandbox.backend import SandboxBackend
from testjack_tui.model import Task, Trial

NO_TRIAL = "(no trial in this session)"


def format_test_run(run: Any) -> str:
    """One line per test: id, status and the first lines of its failure message."""
    requested = list(run.test_ids or [])
    # A requested file or class id stands for the tests collected under it.
    ids = [t for t in requested if t in run.outcomes
           or not any(o.startswith(t + "::") for o in run.outcomes)]
    ids += [t for t in run.outcomes if t not in ids]
    lines, summary = [], {}
    for test_id in ids:
        outcome = run.outcomes.get(test_id)
        status = outcome.status if outcome else "not_found"
        summary[status] = summary.get(status, 0) + 1
        lines.append(f"{test_id} {status}")
        if outcome and outcome.message and status != "passed":
            lines.extend("    " + line for line in outcome.message.strip().splitlines()[:12])
    head = ", ".join(f"{n} {status}" for status, n in sorted(summary.items())) or "no test results"
    text = head + "\n" + "\n".join(lines)
    if not run.outcomes:
        text += "\n[runner output]\n" + run.exec.output
    return text


def format_exec(result: Any) -> str:
    status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
    return f"[{status}]\n{result.output}"


class SandboxTools:
    def __init__(self, sandbox: SandboxBackend, task: Task, trial: Trial | None, worlds: Mapping[str, Any],
                 evidence: str | Mapping | None = None):
        self.sandbox = sandbox
        self.task = task
        self.trial = trial
        self.worlds = dict(worlds)  # kind -> WorldRef
        self._evidence = evidence
        self._live: dict[str, Any] = {}
        self._stack = contextlib.AsyncExitStack()
        self.candidates: dict[str, str] = {}

    async def __aenter__(self) -> "SandboxTools":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Remove this session's containers; later tool calls open fresh ones."""
        stack, self._stack = self._stack, contextlib.AsyncExitStack()
        self._live.clear()
        await stack.aclose()

    async def _world(self, world: str):
        if world not in self.worlds:
            raise PermissionError(f"world {world!r} is not available in this session "
                                  f"(available: {', '.join(self.worlds) or 'none'})")
        live = self._live.get(world)
        if live is None:
            live = await self._stack.enter_async_context(self.sandbox.open(self.worlds[world]))
            self._live[world] = live
            for path, source in self.candidates.items():
                await live.write_file(path, source)
        return live

    # ---- roles.WorldTools -------------------------------------------------------------------
    async def run(self, world: str, command: str, timeout: float = 60) -> str:
        live = await self._world(world)
        return format_exec(await live.exec(command, timeout=timeout))

    async def read_file(self, world: str, path: str) -> str:
        live = await self._world(world)
        return await live.read_file(path)

    async def list_files(self, world: str, path: str = ".") -> str:
        live = await self._world(world)
        return "\n".join(await live.list_files(path))

    async def run_tests(self, world: str, test_ids: list[str], files: dict[str, str] | None = None) -> str:
        live = await self._world(world)
        run = await live.run_tests(list(test_ids), files=files or None)
        return format_test_run(run)

    def diff(self) -> str:
        return self.trial.patch if self.trial is not None else NO_TRIAL

    def official_tests(self) -> str:
        tests = self.task.tests
        parts = [f"framework: {tests.framework}",
                 "fail-to-pass (must fail before the change, pass after):",
                 *[f"  {t}" for t in tests.fail_to_pass],
                 "pass-to-pass (must keep passing):",
                 *[f"  {t}" for t in tests.pass_to_pass]]
        if tests.test_patch:
            parts += ["test patch:", tests.test_patch]
        return "\n".join(parts)

    def evidence(self) -> str:
        if not self._evidence:
            return "(no deterministic evidence was collected for this trial)"
        if isinstance(self._evidence, str):
            return self._evidence
        return json.dumps(self._evidence, indent=2, default=str)

    # ---- extras the toolbox uses ------------------------------------------------------------
    async def write_candidate(self, path: str, source: str) -> None:
        self.candidates[path] = source
        for live in self._live.values():
            await live.write_file(path, source)
