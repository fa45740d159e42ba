"""`verify` for both front ends: T0 on null, reference and every trial of each task, and the
words its results are shown in. The CLI verifies every task at once (`verify_benchmark`), the
TUI one task after the other (`verify_each`), both with the sandbox's `verify_task`.

Nothing of the sandbox is imported until a function runs (the CLI's `--help` stays fast).
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from testjack_tui.model import Benchmark, Task

if TYPE_CHECKING:
    from testjack_tui.sandbox.verify import TaskVerification as TaskVerification

Progress = Callable[..., None]


def backend_names() -> tuple[str, ...]:
    from testjack_tui.sandbox.backend import BACKENDS

    return BACKENDS


async def verify_benchmark(bench: Benchmark, tasks: list[Task], on_progress: Progress | None = None,
                           concurrency: int | None = None, backend: str = "local",
                           ray_address: str | None = None, log: Callable[[str], None] | None = None
                           ) -> list[TaskVerification]:
    """Every task at once, `concurrency` containers at a time."""
    from testjack_tui.sandbox.backend import make_backend
    from testjack_tui.sandbox.verify import verify_task

    async with make_backend(backend, session="verify", concurrency=concurrency, ray_address=ray_address,
                            log=log) as sb:
        return list(await asyncio.gather(*(
            verify_task(sb, task, bench.trials_of(task.id), on_progress) for task in tasks)))


async def verify_each(bench: Benchmark, task_ids: list[str], on_progress: Progress | None = None,
                      on_start: Callable[[int, str], None] | None = None, backend: str = "local",
                      ray_address: str | None = None, log: Callable[[str], None] | None = None,
                      session: str = "verify") -> AsyncIterator[tuple[str, TaskVerification]]:
    """One task after the other, each result as soon as it is known."""
    from testjack_tui.sandbox.backend import make_backend
    from testjack_tui.sandbox.verify import verify_task

    async with make_backend(backend, session=session, ray_address=ray_address, log=log) as sb:
        for i, task_id in enumerate(task_ids, 1):
            if on_start is not None:
                on_start(i, task_id)
            result = await verify_task(sb, bench.tasks[task_id], bench.trials_of(task_id), on_progress=on_progress)
            yield task_id, result


def report_lines(result: TaskVerification) -> list[str]:
    from testjack_tui.sandbox.verify import report_lines as lines

    return lines(result)


def vacuous_meaning() -> str:
    from testjack_tui.sandbox.verify import VACUOUS_MEANING

    return VACUOUS_MEANING


def verification_from_dict(data: dict[str, Any]) -> TaskVerification:
    from testjack_tui.sandbox.verify import TaskVerification

    return TaskVerification.from_dict(data)
