"""One node's sandbox: a Ray actor pinned to the node, running the local podman `Sandbox` there.

The operator's `RayBackend` calls it; world events are buffered here and fetched by a long
poll, so the operator's worlds panel shows what each node's containers do.
"""
from __future__ import annotations

import asyncio
import collections
import os
import secrets
import socket
from typing import Any, Sequence

from testjack_tui.model import Task, Trial

from ..api import ExecResult, TestRun, WorldEvent, WorldKind, WorldRef
from ..core import Sandbox
from ..errors import PatchError
from .bundle import TaskBundle, unpack_task

EVENT_BUFFER = 20000  # events kept while nobody polls (oldest dropped first)
EVENT_BATCH_SECONDS = 0.2


class NodeSandbox:
    """The sandbox operations of one node. Methods are awaited by the operator's event loop."""

    def __init__(self, session: str, concurrency: int, label: str):
        self.label = label
        self._sb = Sandbox(listener=self._on_event, session=session, concurrency=concurrency)
        self._events: collections.deque[WorldEvent] = collections.deque(maxlen=EVENT_BUFFER)
        self._wake: asyncio.Event | None = None
        self._tasks: dict[str, Any] = {}
        self._live: dict[str, tuple[Any, Any]] = {}

    async def start(self) -> dict[str, Any]:
        self._wake = asyncio.Event()
        await self._sb.__aenter__()
        return {"pid": os.getpid(), "host": socket.gethostname(), "swept": len(self._sb.swept_at_start)}

    def _on_event(self, event: WorldEvent) -> None:
        self._events.append(event)
        if self._wake is not None:
            self._wake.set()

    async def events(self, wait: float = 1.0) -> list[WorldEvent]:
        """Events since the last call; waits up to `wait` seconds for the first one."""
        if not self._events and self._wake is not None:
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
                # Batch: one call per EVENT_BATCH_SECONDS at most while output streams, so the
                # relay costs a few actor calls a second, not one per output chunk.
                await asyncio.sleep(EVENT_BATCH_SECONDS)
            except asyncio.TimeoutError:
                pass
        out = list(self._events)
        self._events.clear()
        return out

    async def _task(self, digest: str, bundle_box: list[Any]) -> Task:
        task = self._tasks.get(digest)
        if task is None:
            # The bundle is boxed in a list so Ray hands over its reference, not its bytes:
            # it is fetched from the object store only the first time this node sees the task.
            bundle: TaskBundle = await bundle_box[0]
            task = self._tasks[digest] = await asyncio.to_thread(unpack_task, bundle)
        return task

    async def prepare(self, digest: str, bundle_box: list[Any], kind: WorldKind,
                      trial: Trial | None) -> WorldRef | tuple[Any, ...]:
        task = await self._task(digest, bundle_box)
        try:
            return await self._sb.prepare(task, kind, trial)
        except PatchError as exc:  # its constructor takes more than a message: send the parts
            return ("patch_error", exc.world_name, exc.result, exc.stage)

    async def run_official(self, digest: str, bundle_box: list[Any], kind: WorldKind,
                           trial: Trial | None) -> TestRun:
        task = await self._task(digest, bundle_box)
        return await self._sb.run_official(task, kind, trial)

    async def run_tests(self, world: WorldRef, test_ids: Sequence[str], files: dict[str, str] | None,
                        timeout: float | None, isolate_harness: bool) -> TestRun:
        return await self._sb.run_tests(world, test_ids, files=files, timeout=timeout,
                                        isolate_harness=isolate_harness)

    async def exec(self, world: WorldRef, cmd: Any, timeout: float | None, cwd: str | None,
                   env: dict[str, str] | None, stdin: str | bytes | None) -> ExecResult:
        return await self._sb.exec(world, cmd, timeout=timeout, cwd=cwd, env=env, stdin=stdin)

    async def open_live(self, world: WorldRef) -> str:
        manager = self._sb.open(world)
        live = await manager.__aenter__()
        live_id = secrets.token_hex(6)
        self._live[live_id] = (manager, live)
        return live_id

    async def live_call(self, live_id: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        live = self._live[live_id][1]
        return await getattr(live, method)(*args, **kwargs)

    async def close_live(self, live_id: str) -> None:
        entry = self._live.pop(live_id, None)
        if entry is not None:
            await entry[0].__aexit__(None, None, None)

    async def remove(self, world: WorldRef) -> bool:
        return await self._sb.remove(world)

    async def sweep(self) -> list[str]:
        return await self._sb.sweep()

    async def stop(self) -> None:
        for live_id in list(self._live):
            await self.close_live(live_id)
        await self._sb.close()
