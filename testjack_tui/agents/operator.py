"""Operator mode: the human is the audit agent (and, optionally, the reviewer).

The TUI editor or the CLI hands candidates to `OperatorAuditAgent` through a small queue:
`submit_candidate(path_in_repo, source, requirement)` and `finish()`. Both are plain methods
safe to call from any thread or event loop (the TUI and the engine may run on different
loops). The engine validates each candidate on both worlds like any other.

The "operator" reviewer does not judge by itself: it returns a placeholder verdict and sets
`defers_to_approver`, so the engine must ask the Approver, whose label stands.
"""
from __future__ import annotations

import asyncio
import posixpath
import re
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from testjack_tui.engine.ambiguity import quote_in_prompt
from testjack_tui.engine.events import Log
from testjack_tui.engine.roles import AuditContext, AuditOutcome, Candidate, ReviewLabel, ReviewVerdict
from testjack_tui.engine.slots import waiting_for_person

from .roles_llm import next_version_id
from .toolbox import check_test_path

OPERATOR_LABEL = "operator"


@dataclass(frozen=True)
class _Item:
    path: str
    source: str
    requirement: str
    done: bool = False


class _OperatorQueue:
    def __init__(self) -> None:
        self._items: deque[_Item] = deque()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def put(self, item: _Item) -> None:
        with self._lock:
            self._items.append(item)
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def get(self) -> _Item:
        loop = asyncio.get_running_loop()
        while True:
            event = asyncio.Event()
            with self._lock:
                if self._items:
                    return self._items.popleft()
                self._waiters.append((loop, event))
            try:
                await event.wait()
            finally:
                with self._lock:
                    self._waiters.remove((loop, event))

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class OperatorAuditAgent:
    """Candidates come from the operator. `audit()` collects them until `finish()`."""

    label = OPERATOR_LABEL

    def __init__(self, repairs: bool = False):
        # With repairs=True, repair() waits for the operator's revised file (or finish());
        # otherwise a candidate that fails on the reference world is simply dropped.
        self.repairs = repairs
        self._queue = _OperatorQueue()
        self.waiting_for: tuple[str, str | None] | None = None  # (task, trial) while an audit waits
        self._turns: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    # --- the operator's side ---------------------------------------------------------------
    def submit_candidate(self, path_in_repo: str, source: str, requirement: str) -> None:
        problem = check_test_path(path_in_repo)
        if problem:
            raise ValueError(problem)
        if not source.strip():
            raise ValueError("the candidate test is empty")
        self._queue.put(_Item(posixpath.normpath(path_in_repo), source, requirement.strip()))

    def submit_file(self, file: Path | str, path_in_repo: str, requirement: str) -> None:
        self.submit_candidate(path_in_repo, Path(file).read_text(encoding="utf-8"), requirement)

    def finish(self) -> None:
        """No more candidates for the audit that is waiting (or the next one)."""
        self._queue.put(_Item("", "", "", done=True))

    @property
    def pending(self) -> int:
        return len(self._queue)

    # --- the engine's side -----------------------------------------------------------------
    def _turn(self) -> asyncio.Lock:
        """One audit at a time asks the operator. Tasks run concurrently; with several audits
        waiting on the one queue, a shared test went to whichever woke first, not to the trial
        `waiting_for` (what the editor shows as its target) named. The others wait their turn."""
        loop = asyncio.get_running_loop()
        lock = self._turns.get(loop)
        if lock is None:
            lock = self._turns[loop] = asyncio.Lock()
        return lock

    async def _collect(self, ctx: AuditContext, author: str) -> list[Candidate]:
        # Waiting for the operator's tests (or for their turn) holds no work slot.
        async with waiting_for_person(), self._turn():
            return await self._collect_now(ctx)

    async def _collect_now(self, ctx: AuditContext) -> list[Candidate]:
        trial_id = ctx.trial.id if ctx.trial else None
        self.waiting_for = (ctx.task.id, trial_id)
        ctx.emit(Log(ctx.session_id, level="info",
                 message=f"waiting for operator candidates for {ctx.task.id}/{trial_id or 'analysis'}"))
        out: list[Candidate] = []
        try:
            while True:
                item = await self._queue.get()
                if item.done:
                    return out
                out.append(Candidate(id=f"{ctx.task.id}:{trial_id or 'analysis'}:op{len(out) + 1}.v1",
                                     path=item.path, source=item.source, requirement=item.requirement,
                                     author="operator", origin="operator"))
        finally:
            self.waiting_for = None

    async def audit(self, ctx: AuditContext) -> AuditOutcome:
        candidates = await self._collect(ctx, "audit")
        return AuditOutcome(candidates=candidates, notes="candidates written by the operator")

    async def analyse(self, ctx: AuditContext) -> list[Candidate]:
        return await self._collect(ctx, "task_analysis")

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str) -> Candidate | None:
        if not self.repairs:
            return None
        async with waiting_for_person(), self._turn():
            self.waiting_for = (ctx.task.id, ctx.trial.id if ctx.trial else None)
            ctx.emit(Log(ctx.session_id, level="info",
                     message=f"candidate {candidate.id} failed on the reference world; waiting for the "
                             f"operator's revision of {candidate.path}"))
            try:
                item = await self._queue.get()
            finally:
                self.waiting_for = None
        if item.done:
            return None
        return Candidate(id=next_version_id(candidate.id), path=item.path, source=item.source,
                         requirement=item.requirement or candidate.requirement, author="operator",
                         attempt=candidate.attempt + 1, parent=candidate.id, origin="operator")


_QUOTED = re.compile(r'"([^"]+)"|\u201c([^\u201d]+)\u201d')


def prompt_quote(requirement: str, instruction: str) -> str:
    """The words of P the operator's requirement quotes: the whole requirement or a "quoted"
    part of it, checked by the engine's one quote rule (`quote_in_prompt`). Empty when none is."""
    parts: list[str] = [a or b for a, b in _QUOTED.findall(requirement)] + [requirement]
    for part in parts:
        if quote_in_prompt(part.strip(), instruction):
            return part.strip()
    return ""


class OperatorReviewer:
    """Leaves the judgement to the operator's approval (the Approver's label stands).

    Whether the requirement is explicit is checked, not asked: it is when the operator's
    requirement quotes the task prompt word for word (see `prompt_quote`)."""

    label = OPERATOR_LABEL
    defers_to_approver = True

    async def review(self, ctx: AuditContext, candidate: Candidate) -> ReviewVerdict:
        quote = prompt_quote(candidate.requirement, getattr(ctx.task, "instruction", "") or "")
        reason = ("awaiting the operator's judgement; explicit: the requirement quotes the prompt" if quote else
                  "awaiting the operator's judgement; implicit: the requirement does not quote the prompt")
        return ReviewVerdict(candidate_id=candidate.id, label=ReviewLabel.QUESTIONABLE,
                             requirement=candidate.requirement, explicit=bool(quote), quote=quote,
                             reason=reason, reviewer=OPERATOR_LABEL)
