"""The container pool under the Sandbox (sandbox/core.py): its thread pool, podman service,
reaper and lease; starting, tracking and removing containers; runs in fresh containers (started
ahead of their turn, bounded by semaphores, removed also when cancelled) and the disk guard of a
working container's writable layer. Nothing here knows tasks, worlds' builds or runners."""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Awaitable, Callable, Hashable, ParamSpec, Self, TypeVar

from podman.domain.containers import Container

from . import cleanup
from .api import ExecResult, TestRun, WorldEvent, WorldEventKind, WorldListener, WorldRef
from .containers import Limits, disk_used, remove_container, start_container, upper_dir
from .errors import SandboxError
from .execs import Killable
from .labels import L_TASK, L_TRIAL, L_WORLD, lease_path, new_session_id, owner_labels
from .output import prune_logs
from .reaper import Lease, start_reaper, stop_reaper
from .service import PodmanService

T = TypeVar("T")
P = ParamSpec("P")
Work = Callable[[Container, list[Killable]], T]  # run in a worker thread with a started container
DISK_POLL = 0.5  # seconds between measurements of a working container's writable layer
# Host memory a started, idle container may hold (conmon, init, sleep and the overlay mount take
# about 4 MB; the rest is headroom): the pre-start depth never takes more than a tenth of the
# memory available when the Sandbox opens.
IDLE_CONTAINER_MB = 64


def prestart_depth(concurrency: int, available_mb: int | None = None) -> int:
    """How many containers may be started ahead of their turn: one per working slot, fewer when
    memory is short (a tenth of the available memory, IDLE_CONTAINER_MB each)."""
    if available_mb is None:
        available_mb = _mem_available_mb()
    by_memory = available_mb // 10 // IDLE_CONTAINER_MB if available_mb is not None else concurrency
    return max(0, min(concurrency, by_memory))


def _mem_available_mb() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError):
        pass
    return None


class ContainerPool:
    """Containers for the Sandbox's worlds: see `Sandbox` for what its arguments mean."""

    def __init__(self, listener: WorldListener | None = None, concurrency: int | None = None,
                 session: str = "sandbox", limits: Limits | None = None,
                 service_url: str | None = None, log: Callable[[str], None] | None = None,
                 prestart: int | None = None):
        self.listener = listener
        self.concurrency = max(1, concurrency or os.cpu_count() or 1)
        self.prestart = prestart_depth(self.concurrency) if prestart is None else max(0, prestart)
        self.session = new_session_id(session)
        self.limits = limits or Limits()
        self.log = log or (lambda msg: None)
        self._service = PodmanService(service_url)
        self._pool: ThreadPoolExecutor | None = None
        # made anew by each `async with` (a semaphore needs no running loop to be made)
        self._sem = asyncio.Semaphore(self.concurrency)
        self._started = asyncio.Semaphore(self.concurrency + self.prestart)  # fresh containers alive: working + waiting
        self._loop: asyncio.AbstractEventLoop | None = None
        self._containers: dict[str, str] = {}
        # Writable layers already known (a gated container's inspect found it): the disk guard
        # needs no inspect of its own for them.
        self._upper_dirs: dict[str, str] = {}
        self._worlds: dict[str, WorldRef] = {}
        self._env_images: dict[tuple[object, ...], tuple[str, str]] = {}
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._cleanups: set[asyncio.Future[None]] = set()
        self.swept_at_start: list[str] = []
        self._reaper: subprocess.Popen[bytes] | None = None  # sandbox/reaper.py: cleans up after us if we are killed
        self._lease = Lease(lease_path(self.session))

    # --- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        self._loop = asyncio.get_running_loop()
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency * 3 + 6,
                                        thread_name_prefix="tj-sandbox")
        self._sem = asyncio.Semaphore(self.concurrency)
        self._started = asyncio.Semaphore(self.concurrency + self.prestart)
        # Starts contend for the same cores: started all at once, the first run waits for every
        # pre-start; one start per working slot at a time gets the first runs going sooner.
        self._starting = asyncio.Semaphore(self.concurrency)
        self._lease.start()
        try:
            await self._call(self._service.start)
            if self._reaper is None:
                self._reaper = start_reaper(self._service.owned_pid())
            self.swept_at_start = await self._call(cleanup.sweep, self._service.client())
            await self._call(prune_logs)
        except BaseException:
            await asyncio.get_running_loop().run_in_executor(self._pool, self._service.stop)
            stop_reaper(self._reaper)
            self._reaper = None
            self._lease.stop()
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._pool is None:
            return
        try:
            if self._cleanups:
                await asyncio.gather(*self._cleanups, return_exceptions=True)
            for cid in list(self._containers):
                await self._call(self._remove_tracked, cid)
            await self._call(cleanup.sweep, self._service.client(), self.session)
        finally:
            await self._call(self._service.stop)
            stop_reaper(self._reaper)
            self._reaper = None
            self._lease.stop()
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    @property
    def service(self) -> PodmanService:
        return self._service

    # --- plumbing --------------------------------------------------------------------------
    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if self._pool is None:
            raise SandboxError("the Sandbox is not open: use `async with Sandbox() as sb`")
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, functools.partial(fn, *args, **kwargs))

    def _emit(self, event: WorldEvent) -> None:
        listener = self.listener
        if listener is None or self._loop is None:
            return
        def deliver() -> None:
            try:
                listener(event)
            except Exception:  # a broken listener must not break container work
                pass
        try:
            self._loop.call_soon_threadsafe(deliver)
        except RuntimeError:  # loop closed
            pass

    def _lock(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def _labels(self, world: str, task_id: str = "", trial_id: str | None = None) -> dict[str, str]:
        labels = owner_labels(self.session)
        labels[L_WORLD] = world
        labels[L_TASK] = task_id
        if trial_id:
            labels[L_TRIAL] = trial_id
        return labels

    def _limits_for(self, memory_mb: int | None) -> Limits:
        return self.limits.for_task(memory_mb)

    def _start(self, image: str, world: str, task_id: str, trial_id: str | None,
               memory_mb: int | None = None, writable: list[str] | None = None, extra_mb: int = 0,
               user: str | None = None) -> Container:
        limits = self._limits_for(memory_mb)
        if extra_mb and writable and limits.read_only:
            limits = dataclasses.replace(limits, memory_mb=limits.memory_mb + extra_mb)
        container = start_container(self._service.client(), image,
                                    self._labels(world, task_id, trial_id), limits, writable=writable,
                                    user=user)
        return self._track(container, world, image)

    def _track(self, container: Container, world: str, image: str) -> Container:
        """A container of ours from now on: removed by close() if not before, shown as created."""
        self._containers[container.id] = world
        self._emit(WorldEvent(world=world, container=container.id[:12], kind="created", image=image))
        return container

    def _start_world(self, world: WorldRef) -> Container:
        # Read-only root: trial code writes its repo and /tmp only (containers.writable_mounts).
        # The repo's copy in its tmpfs counts against the memory limit: the tests keep theirs.
        return self._start(world.image, world.name, world.task_id, world.trial_id, world.memory_mb,
                           writable=[world.workdir], extra_mb=world.repo_mb, user=world.user or None)

    def _remove_tracked(self, container_id: str) -> None:
        world = self._containers.pop(container_id, "")
        self._upper_dirs.pop(container_id, None)
        remove_container(self._service.client(), container_id)
        self._emit(WorldEvent(world=world, container=container_id[:12], kind="removed"))

    async def _remove_shielded(self, container_id: str) -> None:
        if self._pool is None:  # already closed: close() swept our containers by label
            return
        task = asyncio.ensure_future(self._call(self._remove_tracked, container_id))
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
        await asyncio.shield(task)

    def _output_sink(self, world: str, container_id: str) -> Callable[[str], None] | None:
        if self.listener is None:
            return None
        return lambda text: self._emit(WorldEvent(world=world, container=container_id[:12],
                                                  kind="output", text=text))

    def _exec_events(self, world: str, container_id: str, argv: list[str], result: ExecResult) -> None:
        kind: WorldEventKind = "timeout" if result.timed_out else "exited"
        self._emit(WorldEvent(world=world, container=container_id[:12], kind=kind,
                              command=" ".join(argv), exit_code=result.exit_code))

    # --- images and worlds -----------------------------------------------------------------


    async def _with_fresh(self, world: WorldRef | None, work: Work[T],
                          make: Callable[[], Container] | None = None, guard_disk: bool = False) -> T:
        # Started before the turn (bounded by _started), worked in only on the turn (_sem).
        # `make` creates the container instead (a run as its main process starts it itself);
        # `guard_disk`: it has a writable root (the benchmark's own flow), measured always.
        if make is None:
            if world is None:
                raise ValueError("a fresh container needs a world or a way to make it")
            make = functools.partial(self._start_world, world)
        async with self._started:
            async with self._starting:
                container = await self._start_fresh(make)
            try:
                async with self._sem:
                    handles: list[Killable] = []
                    work_done = self._call(work, container, handles)
                    # A read-only root leaves only its sized tmpfs mounts to write: nothing to
                    # measure.
                    result = await (work_done if self.limits.read_only and not guard_disk
                                    else self._guard_disk(container.id, handles, work_done))
            except BaseException:
                await self._remove_shielded(container.id)
                raise
        # The result does not wait for the removal; close() waits for all of them.
        self._remove_later(container.id)
        return result

    async def _start_fresh(self, make: Callable[[], Container]) -> Container:
        """Make (start) a container; cancelled meanwhile, the container the worker thread still
        creates is removed as soon as it exists (no leak until close())."""
        start = asyncio.ensure_future(self._call(make))
        try:
            return await asyncio.shield(start)
        except asyncio.CancelledError:
            async def remove_when_started() -> None:
                try:
                    container = await start
                except BaseException:
                    return  # it never started
                await self._call(self._remove_tracked, container.id)
            task = asyncio.ensure_future(remove_when_started())
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)
            raise

    async def _guard_disk(self, container_id: str, handles: list[Killable], work: Awaitable[T]) -> T:
        """Await work while measuring the container's writable layer; past limits.disk_mb the
        commands it runs are killed and the result says so (limit_hit = "disk"). For containers
        with a writable root: the benchmark's own T0 flow, and worlds when limits.read_only is
        off (overlay on ext4 has no quota)."""
        tripped: list[int] = []
        limit = self.limits.disk_mb * 1024 * 1024

        async def guard() -> None:
            # Looked up after the first interval (unless known already): most runs are over by
            # then and cost no inspect round trip.
            await asyncio.sleep(DISK_POLL)
            upper = self._upper_dirs.get(container_id) or await self._call(
                upper_dir, self._service.client(), container_id)
            if upper is None:
                return
            while True:
                used = await self._call(disk_used, upper, limit)
                if used > limit:
                    tripped.append(used)
                    for handle in list(handles):
                        await self._call(handle.kill)
                    return
                await asyncio.sleep(DISK_POLL)

        watcher = asyncio.ensure_future(guard())
        try:
            result = await work
        finally:
            watcher.cancel()
        if tripped:
            note = (f"\n[testjack: killed: the container wrote more than {self.limits.disk_mb} MiB "
                    "(disk limit)]\n")
            ex = result.exec if isinstance(result, TestRun) else result
            if isinstance(ex, ExecResult):
                ex.limit_hit = "disk"
                ex.stderr_tail = (ex.stderr_tail or "") + note
            if isinstance(result, TestRun):
                result.outcomes = {k: o if o.status == "passed" else
                                   dataclasses.replace(o, message=note.strip() + " " + o.message)
                                   for k, o in result.outcomes.items()}
        return result

    def _remove_later(self, container_id: str) -> None:
        if self._pool is None:  # closed: close() swept our containers by label
            return
        task = asyncio.ensure_future(self._call(self._remove_tracked, container_id))
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
