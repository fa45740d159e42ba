"""Work slots: how many tasks of a session do work at once, and why waiting for a person holds none.

    slots = WorkSlots(2, on_queue=..., on_waits=...)
    async with slots.hold(task.id):          # queued until a slot is free
        ...
        async with waiting_for_person():     # the slot goes back while the person thinks
            await decision

A session bounds the machine's work (container runs, test processes, LLM calls), not a task's
lifetime: a task takes a slot to work and gives it back for as long as it waits for a decision,
a step-mode gate, a pause or the operator's tests, then takes one again when it has work. The
sandbox bounds the containers themselves (its own semaphore) and each LLM profile its requests;
the slots decide which tasks get to ask for them. A task coming back from a wait goes before
tasks that never started (finishing work in flight first); otherwise first come, first served.
The slot a task holds is found through a context variable, so the coroutines a task spawns
(`gather`, `ensure_future` copy the context) give back and take the same slot.
"""
from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable


@dataclass
class _Waiter:
    task_id: str
    returning: bool  # coming back from a wait for a person (goes first)
    future: asyncio.Future[None]


@dataclass
class Lease:
    """One task's claim on the slots (shared by every coroutine of that task)."""

    slots: "WorkSlots"
    task_id: str
    holding: bool = False
    waits: int = 0  # the task's coroutines now waiting for a person
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


_lease: contextvars.ContextVar[Lease | None] = contextvars.ContextVar("testjack_lease", default=None)


class WorkSlots:
    """`size` slots. `on_queue(ahead)`: task id -> how many tasks are ahead of it, for every task
    that has not started yet, called whenever that changes. `on_return(task, ahead)`: a task back
    from a wait for a person is queued for a slot with `ahead` tasks before it (called again when
    that changes), `ahead` None once it has its slot. `on_waits(n)`: how many waits for a person
    are open in the session (0 when none)."""

    def __init__(self, size: int, on_queue: Callable[[dict[str, int]], None] | None = None,
                 on_waits: Callable[[int], None] | None = None,
                 on_return: Callable[[str, int | None], None] | None = None):
        self.size = max(1, size)
        self.free = self.size
        self._queue: deque[_Waiter] = deque()
        self._on_queue = on_queue or (lambda ahead: None)
        self._on_waits = on_waits or (lambda n: None)
        self._on_return = on_return or (lambda task_id, ahead: None)
        self._announced: dict[str, int] = {}
        self._returning: dict[str, int] = {}  # returning task -> ahead, as last announced
        self.person_waits = 0
        self.busy_peak = 0  # most slots in use at once (tests)

    # -- the queue ------------------------------------------------------------------------------
    def _order(self) -> list[_Waiter]:
        return [w for w in self._queue if w.returning] + [w for w in self._queue if not w.returning]

    def queued(self) -> dict[str, int]:
        """Tasks that have not started: how many are ahead of each."""
        return {w.task_id: i for i, w in enumerate(self._order()) if not w.returning}

    def _announce(self) -> None:
        now = self.queued()
        if now != self._announced:
            self._announced = now
            self._on_queue(dict(now))
        back = {w.task_id: i for i, w in enumerate(self._order()) if w.returning}
        for task_id in [t for t in self._returning if t not in back]:
            del self._returning[task_id]  # granted (announced by _release) or cancelled
        for task_id, ahead in back.items():
            if self._returning.get(task_id) != ahead:
                self._returning[task_id] = ahead
                self._on_return(task_id, ahead)

    async def _acquire(self, task_id: str, returning: bool) -> None:
        if self.free > 0 and not self._queue:
            self._take()
            return
        waiter = _Waiter(task_id, returning, asyncio.get_running_loop().create_future())
        self._queue.append(waiter)
        self._announce()
        try:
            await waiter.future
        except BaseException:
            if waiter in self._queue:
                self._queue.remove(waiter)
                self._announce()
            elif waiter.future.done() and not waiter.future.cancelled():
                self._release()  # handed a slot as we were cancelled: pass it on
            raise

    def _take(self) -> None:
        self.free -= 1
        self.busy_peak = max(self.busy_peak, self.size - self.free)

    def _release(self) -> None:
        self.free += 1
        while self._queue and self.free > 0:
            waiter = self._order()[0]
            self._queue.remove(waiter)
            if waiter.future.done():
                continue
            self._take()
            waiter.future.set_result(None)
            if waiter.returning:
                self._on_return(waiter.task_id, None)
        self._announce()

    # -- what tasks use ------------------------------------------------------------------------
    @asynccontextmanager
    async def hold(self, task_id: str) -> AsyncIterator[Lease]:
        """A task's whole run: queued until a slot is free, the slot given back at the end."""
        lease = Lease(self, task_id)
        token = _lease.set(lease)
        try:
            await self._acquire(task_id, returning=False)
            lease.holding = True
            yield lease
        finally:
            _lease.reset(token)
            if lease.holding:
                lease.holding = False
                self._release()

    def _wait_started(self) -> None:
        self.person_waits += 1
        if self.person_waits == 1:
            self._on_waits(1)

    def _wait_ended(self) -> None:
        self.person_waits -= 1
        if self.person_waits == 0:
            self._on_waits(0)


@asynccontextmanager
async def waiting_for_person(resume: bool = True) -> AsyncIterator[None]:
    """Around an await that only a person ends (a decision, a step gate, the operator's tests):
    the task's slot goes back meanwhile and is taken again before the task goes on. With
    `resume=False` the caller takes it again itself (`resume_work`), after recording what the
    person said: a decision is stored and shown at once, not once a slot is free. Outside a
    task (a test calling an approver directly) it does nothing."""
    lease = _lease.get()
    if lease is None:
        yield
        return
    slots = lease.slots
    lease.waits += 1
    slots._wait_started()
    if lease.holding:
        lease.holding = False
        slots._release()
    try:
        yield
    finally:
        lease.waits -= 1
        slots._wait_ended()
    if resume:
        await resume_work()


async def resume_work() -> None:
    """Take the task's slot again if it gave it back (no-op when it holds one, or outside a task)."""
    lease = _lease.get()
    if lease is None:
        return
    async with lease.lock:  # two coroutines of one task coming back take one slot
        if not lease.holding:
            await lease.slots._acquire(lease.task_id, returning=True)
            lease.holding = True
