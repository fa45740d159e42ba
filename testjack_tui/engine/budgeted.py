"""The sandbox as everyone who runs trial code sees it: one `BudgetedBackend` around the
session's `SandboxBackend`, the only place --budget-runs is counted and refused.

The session builds it once and hands it to the engine's stored runs (`TestRunner`, through
`once`), the detectors (coverage runs), the steps and the agents' tools (their live
containers). Each run of trial code reserves one run from the session's `Budget` before it
starts, and raises `BudgetExceeded` instead at the limit. What runs no trial code of ours to
count goes through `unmetered`, by name at its call site: building worlds, reading a world's
files, the task's reference program, the agent tools' own set-up of a container.
"""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Awaitable, Callable, Sequence, TypeVar

from testjack_tui.model import Task, Trial
from testjack_tui.sandbox.api import ExecResult, TestRun, WorldKind, WorldRef
from testjack_tui.sandbox.backend import Command, LiveWorldHandle, SandboxBackend

from .budget import Budget
from .roles import BudgetExceeded

T = TypeVar("T")


class BudgetedWorld:
    """A live container of one world (`BudgetedBackend.open`): its commands and test runs are
    counted like any other; reading and writing its files is not."""

    def __init__(self, live: LiveWorldHandle, reserve: Callable[[], None]):
        self.world = live.world
        self._live = live
        self._reserve = reserve

    @property
    def unmetered(self) -> LiveWorldHandle:
        """The same container without counting: for set-up of ours, not a run anyone asked for."""
        return self._live

    async def exec(self, cmd: Command, timeout: float | None = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None, stdin: str | bytes | None = None) -> ExecResult:
        self._reserve()
        return await self._live.exec(cmd, timeout=timeout, cwd=cwd, env=env, stdin=stdin)

    async def run_tests(self, test_ids: Sequence[str], files: dict[str, str] | None = None,
                        timeout: float | None = 300, isolate_harness: bool = False) -> TestRun:
        self._reserve()
        return await self._live.run_tests(test_ids, files=files, timeout=timeout,
                                          isolate_harness=isolate_harness)

    async def read_file(self, path: str, max_bytes: int = 2 * 1024 * 1024) -> str:
        return await self._live.read_file(path, max_bytes=max_bytes)

    async def write_file(self, path: str, text: str | bytes) -> None:
        await self._live.write_file(path, text)

    async def list_files(self, path: str = ".") -> list[str]:
        return await self._live.list_files(path)


class BudgetedBackend:
    """A `SandboxBackend` that reserves one test run from `budget` before each run of trial
    code (a test run, a command, T0 by the benchmark's evaluator, in a fresh container or in an
    open one). `budget` None: nothing is counted (a backend outside any session)."""

    def __init__(self, backend: SandboxBackend, budget: Budget | None = None):
        self._backend = backend
        self.budget = budget

    @property
    def unmetered(self) -> SandboxBackend:
        """The backend without counting: for what runs no trial code of ours to count (reading
        a world's files, the task's reference program)."""
        return self._backend

    def _reserve(self) -> None:
        if self.budget is not None:
            self.budget.reserve_test_runs(1)

    async def once(self, job: Callable[[SandboxBackend], Awaitable[T]], where: str) -> T:
        """One reserved run, however many container calls `job` makes on the backend (T0 with
        its null-world fill is one run), stopped at the wall-time limit: a hanging trial is
        stopped there (the container is removed), not at the end of its own timeout."""
        self._reserve()
        budget = self.budget
        left = budget.seconds_left() if budget is not None else None
        if budget is None or left is None:
            done = await job(self._backend)
        else:
            try:
                done = await asyncio.wait_for(job(self._backend), timeout=max(0.0, left))
            except asyncio.TimeoutError:
                raise BudgetExceeded("seconds", f"wall-time limit reached during a test run on {where}: "
                                     f"{budget.seconds:.0f}s of {budget.limits.seconds:.0f}s") from None
        if budget is not None:
            budget.save_clock()  # a killed process loses little of its elapsed time
        return done

    # -- SandboxBackend -------------------------------------------------------------------------
    async def __aenter__(self) -> BudgetedBackend:
        await self._backend.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._backend.__aexit__(*exc)

    async def prepare(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> WorldRef:
        return await self._backend.prepare(task, kind, trial)

    async def run_tests(self, world: WorldRef, test_ids: Sequence[str],
                        files: dict[str, str] | None = None, timeout: float | None = 300,
                        isolate_harness: bool = False) -> TestRun:
        self._reserve()
        return await self._backend.run_tests(world, test_ids, files=files, timeout=timeout,
                                             isolate_harness=isolate_harness)

    async def run_official(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> TestRun:
        self._reserve()
        return await self._backend.run_official(task, kind, trial)

    async def exec(self, world: WorldRef, cmd: Command, timeout: float | None = 60,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   stdin: str | bytes | None = None) -> ExecResult:
        self._reserve()
        return await self._backend.exec(world, cmd, timeout=timeout, cwd=cwd, env=env, stdin=stdin)

    @contextlib.asynccontextmanager
    async def open(self, world: WorldRef) -> AsyncIterator[BudgetedWorld]:
        async with self._backend.open(world) as live:
            yield BudgetedWorld(live, self._reserve)

    async def remove(self, world: WorldRef) -> bool:
        return await self._backend.remove(world)

    async def sweep(self) -> list[str]:
        return await self._backend.sweep()


def budgeted(backend: SandboxBackend) -> BudgetedBackend:
    """`backend` as a BudgetedBackend (itself when it is one; uncounted otherwise)."""
    return backend if isinstance(backend, BudgetedBackend) else BudgetedBackend(backend)


__all__ = ["BudgetedBackend", "BudgetedWorld", "budgeted"]
