"""Step mode and operator pause: gates the loop waits at (before a round, after a verdict).

`step_next()` lets exactly one waiting gate through; `run_to_end()` turns stepping off and
releases everyone; `pause()` holds every task at its next gate. All methods must be called on
the event loop's thread (AuditSession marshals calls from other threads).
"""
from __future__ import annotations

import asyncio
from typing import Callable

from .events import Paused, Released


class Control:
    def __init__(self, session_id: str, step: bool, emit: Callable[[object], None]):
        self.session_id = session_id
        self.step = step
        self.hold = False
        self.emit = emit
        self._tokens = 0
        self._waiting = 0
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    @property
    def waiting(self) -> int:
        return self._waiting

    async def gate(self, waiting_for: str, task_id: str = "") -> None:
        if not (self.step or self.hold):
            return
        cond = self._condition()
        async with cond:
            self._waiting += 1
            self.emit(Paused(self.session_id, reason="step" if self.step and not self.hold else "operator",
                             waiting_for=waiting_for, task_id=task_id))
            try:
                while (self.step or self.hold) and self._tokens == 0:
                    await cond.wait()
                if (self.step or self.hold) and self._tokens:
                    self._tokens -= 1
            finally:
                self._waiting -= 1
                self.emit(Released(self.session_id, waiting_for=waiting_for, task_id=task_id))

    def _notify(self) -> None:
        cond = self._condition()

        async def wake() -> None:
            async with cond:
                cond.notify_all()

        asyncio.get_running_loop().create_task(wake())

    def step_next(self) -> None:
        self.hold = False
        self.step = True
        self._tokens += 1
        self._notify()

    def run_to_end(self) -> None:
        self.step = False
        self.hold = False
        self._tokens = 0
        self._notify()

    def pause(self) -> None:
        self.hold = True
