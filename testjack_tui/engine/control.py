"""Step mode and operator pause: gates the loop waits at (before a round, after a verdict).

`step_next()` lets exactly one waiting gate through, the one waiting longest (`next_gate` names
it, so a front end can say which task `n` releases); with none waiting it lets the next gate
reached pass. `run_to_end()` turns stepping off and releases everyone; `pause()` holds every
task at its next gate. A task held at a gate holds no work slot (engine/slots.py). All methods
must be called on the event loop's thread (AuditSession marshals calls from other threads).
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from .events import Paused, Released
from .slots import waiting_for_person


@dataclass
class Gate:
    task_id: str
    waiting_for: str
    future: asyncio.Future[None]


class Control:
    def __init__(self, session_id: str, step: bool, emit: Callable[[object], None]):
        self.session_id = session_id
        self.step = step
        self.hold = False
        self.emit = emit
        self._tokens = 0
        self._gates: list[Gate] = []  # oldest first

    @property
    def waiting(self) -> int:
        return len(self._gates)

    def next_gate(self) -> tuple[str, str] | None:
        """(task id, what it waits for) of the gate `step_next` releases, None if none waits."""
        return (self._gates[0].task_id, self._gates[0].waiting_for) if self._gates else None

    async def gate(self, waiting_for: str, task_id: str = "") -> None:
        if not (self.step or self.hold):
            return
        gate = Gate(task_id, waiting_for, asyncio.get_running_loop().create_future())
        self.emit(Paused(self.session_id, reason="step" if self.step and not self.hold else "operator",
                         waiting_for=waiting_for, task_id=task_id))
        if self._tokens:  # a step given before anyone waited
            self._tokens -= 1
            self.emit(Released(self.session_id, waiting_for=waiting_for, task_id=task_id))
            return
        self._gates.append(gate)
        async with waiting_for_person():  # the task's work slot is free meanwhile
            try:
                await gate.future
            finally:
                if gate in self._gates:
                    self._gates.remove(gate)
                self.emit(Released(self.session_id, waiting_for=waiting_for, task_id=task_id))

    def _open(self, gate: Gate) -> None:
        if gate in self._gates:
            self._gates.remove(gate)
        if not gate.future.done():
            gate.future.set_result(None)

    def step_next(self) -> None:
        self.hold = False
        self.step = True
        if self._gates:
            self._open(self._gates[0])
        else:
            self._tokens += 1

    def run_to_end(self) -> None:
        self.step = False
        self.hold = False
        self._tokens = 0
        for gate in list(self._gates):
            self._open(gate)

    def pause(self) -> None:
        self.hold = True
