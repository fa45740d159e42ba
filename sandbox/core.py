"""The Sandbox: the async face of the package. The engine and the agents call only this.

Blocking podman-py calls run in our own thread pool; a semaphore sized to the machine's cores
bounds how many containers work at once. Every run starts a fresh container from the world's
snapshot and removes it afterwards, also when the caller cancels (cleanup is shielded from
cancellation). Starting is not part of a run's turn: while `concurrency` runs work, up to
`prestart` more callers start their containers and wait (nothing runs in a container before its
turn), so a replay over many trials does not pay container start between runs. Listener
callbacks run on the event loop that entered the Sandbox.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import AsyncIterator, Awaitable, Callable, Hashable, ParamSpec, Sequence, TypeVar

from podman.domain.containers import Container

from testjack_tui.model import Environment, Task, Trial

from . import cleanup, machine_lock
from .api import ExecResult, TestRun, WorldEvent, WorldEventKind, WorldKind, WorldListener, WorldRef
from .containers import (create_container, Limits, disk_used, get_file, init_pid,
                         put_files, remove_container, start_container, upper_dir)
from .errors import SandboxError
from .execs import ExecHandle, Killable, as_user, run_exec
from .images import _image_id, ensure_env_image, resolve_env_image
from .labels import L_TASK, L_TRIAL, L_WORLD, lease_path, new_session_id, owner_labels
from .output import OutputCollector, prune_logs
from .reaper import Lease, start_reaper, stop_reaper
from .podman_conf import podman
from .service import PodmanService
from .official import run_official_in
from .main_process import GATE_ENV, ContainerHandle, GateNotReached, run_main, start_gated
from .testruns import InlineRefused, RunPlan, finish_run, plan_run, read_trailer, run_tests_in
from .trailer import TrailerSplitter, exit_code_of
from .user_base import ensure_user_base, user_base_tag
from .worlds import WorldPlan, build_world, find_world
from .trial_user import ROOT_USER, TRIAL_HOME, TRIAL_NAME

Command = str | Sequence[str]
T = TypeVar("T")
P = ParamSpec("P")
Work = Callable[[Container, list[Killable]], T]  # run in a worker thread with a started container
DISK_POLL = 0.5  # seconds between measurements of a working container's writable layer
# Host memory a started, idle container may hold (conmon, init, sleep and the overlay mount take
# about 4 MB; the rest is headroom): the pre-start depth never takes more than a tenth of the
# memory available when the Sandbox opens.
IDLE_CONTAINER_MB = 64
LOCK_POLL = 0.2  # seconds between tries of a world snapshot's machine-wide build lock


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


def _argv(cmd: Command) -> list[str]:
    return ["sh", "-c", cmd] if isinstance(cmd, str) else [str(a) for a in cmd]


class Sandbox:
    """Worlds, execs and test runs in podman containers.

    listener: called with WorldEvent for container lifecycle and streamed output.
    concurrency: containers working at once (default: the number of cores).
    session: a label for this user of the sandbox (shown in `podman ps`).
    limits: per-container limits (defaults: 1 GiB, 256 pids, 1 CPU, network none).
    prestart: containers started ahead of their turn for waiting runs (default: one per slot,
    fewer when memory is short; 0 starts each container only when its run's turn comes).
    """

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
        self._worlds: dict[str, WorldRef] = {}
        self._env_images: dict[tuple[object, ...], tuple[str, str]] = {}
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._cleanups: set[asyncio.Future[None]] = set()
        self.swept_at_start: list[str] = []
        self._reaper: subprocess.Popen[bytes] | None = None  # sandbox/reaper.py: cleans up after us if we are killed
        self._lease = Lease(lease_path(self.session))

    # --- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> "Sandbox":
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
    async def env_image(self, task: Task) -> str:
        """The task's environment image (built or pulled when missing; cached by content)."""
        env = task.environment
        key = (env.image, str(env.containerfile or ""), str(env.context or ""))
        async with self._lock(("env", key)):
            if key not in self._env_images:
                cli_env = self._service.cli_env()
                image, image_id = await self._call(resolve_env_image, env, cli_env, self.log)
                self._env_images[key] = (image, image_id or image)
        return self._env_images[key][0]

    async def _world_base(self, task: Task) -> tuple[str, str]:
        """(image, id) world snapshots are built on: the environment image with the repo given
        to the trial user once (sandbox/user_base.py), so a snapshot holds only its changes."""
        await self.env_image(task)
        env = task.environment
        image, image_id = self._env_images[(env.image, str(env.containerfile or ""), str(env.context or ""))]
        key = ("user-base", image_id, env.workdir)
        async with self._lock(key):
            if key not in self._env_images:
                cli_env = self._service.cli_env()
                tag = user_base_tag(image_id, env.workdir)
                while (fd := await self._call(machine_lock.try_acquire, f"user-base:{tag}")) is None:
                    await asyncio.sleep(LOCK_POLL)  # another session builds this very image
                try:
                    self._env_images[key] = await self._call(
                        ensure_user_base, self._service.client, image, image_id, env.workdir,
                        self._labels(f"user-base {task.id}", task.id, None), self.limits,
                        lambda ref: _image_id(ref, cli_env))
                finally:
                    await asyncio.shield(self._call(machine_lock.release, fd))
        return self._env_images[key]

    async def verifier_image(self, task: Task) -> str:
        """The image the task's own verifier runs in: R itself (shared mode), or in separate mode
        the named verifier image when present or pullable, else one built from tests/Dockerfile
        on top of R (cached by content and R's id)."""
        image = await self.env_image(task)
        ev = task.tests.evaluator
        if ev is None or not ev.separate or not (ev.verifier_image or ev.verifier_containerfile):
            return image
        if ev.verifier_image and ev.verifier_image == task.environment.image and ev.verifier_containerfile is None:
            return image  # the task's own image, which we built under our own tag
        key = ("verifier", task.id, ev.verifier_image, str(ev.verifier_containerfile or ""))
        async with self._lock(key):
            if key in self._env_images:
                return self._env_images[key][0]
            cli_env = self._service.cli_env()
            built = None
            if ev.verifier_image:
                try:
                    built = await self._call(ensure_env_image, Environment(image=ev.verifier_image),
                                             cli_env, self.log)
                except SandboxError:
                    if ev.verifier_containerfile is None:
                        raise
            if built is None:
                containerfile = ev.verifier_containerfile
                assert containerfile is not None  # checked above: a verifier image or a Containerfile
                parent = await self._call(_image_id, image, cli_env) or image
                recipe = Environment(containerfile=containerfile, context=containerfile.parent)
                built = await self._call(ensure_env_image, recipe, cli_env, self.log, parent)
            self._env_images[key] = (built, built)
        return built

    async def run_official(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> TestRun:
        """T0 through the benchmark's own verifier flow (testjack_tui.sandbox.official) in a fresh container
        from the verifier image; outcomes keyed by T0's ids exactly as the benchmark writes them."""
        if kind == "model" and trial is None:
            raise ValueError("a model world needs a trial")
        image = await self.verifier_image(task)
        trial_id = trial.id if kind == "model" and trial else None
        name = f"{task.id}/{kind}" + (f"/{trial_id}" if trial_id else "")

        def work(container: Container, handles: list[Killable]) -> TestRun:
            run = run_official_in(
                self._service.client, container, task, kind, trial if kind == "model" else None,
                name, handles, on_output=self._output_sink(name, container.id),
                on_start=lambda cmd: self._emit(WorldEvent(world=name, container=container.id[:12],
                                                           kind="running", command=cmd)),
                cpu_seconds=self.limits.cpu_seconds_for(task.tests.evaluator.timeout_sec
                                                        if task.tests.evaluator else None))
            self._exec_events(name, container.id, run.exec.argv, run.exec)
            return run

        async with self._sem:
            container = await self._call(self._start, image, name, task.id, trial_id,
                                         task.environment.memory_mb)
            handles: list[Killable] = []
            try:
                # A writable root (the benchmark's script runs as it would there): measured.
                result = await self._guard_disk(container.id, handles,
                                                self._call(work, container, handles))
            except BaseException:
                await self._remove_shielded(container.id)
                raise
        self._remove_later(container.id)
        return result

    async def prepare(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> WorldRef:
        """The snapshot of one world of the task (cached). Raises PatchError when G or s (or the
        test patch) does not apply."""
        if kind not in ("null", "reference", "model"):
            raise ValueError(f"unknown world kind {kind!r}")
        if kind == "model" and trial is None:
            raise ValueError("a model world needs a trial")
        image, image_id = await self._world_base(task)
        plan = WorldPlan(task=task, kind=kind, trial=trial if kind == "model" else None,
                         env_image=image, env_image_id=image_id)
        tag = plan.tag()
        if tag in self._worlds:
            return self._worlds[tag]
        async with self._lock(("world", tag)):
            if tag in self._worlds:
                return self._worlds[tag]
            world = await self._call(find_world, self._service.client(), plan)
            if world is None:
                # Machine-wide: another session may be building this very snapshot.
                while (fd := await self._call(machine_lock.try_acquire, f"world:{tag}")) is None:
                    await asyncio.sleep(LOCK_POLL)
                try:
                    world = await self._call(find_world, self._service.client(), plan)
                    if world is None:
                        async with self._sem:
                            world = await self._build(plan)
                finally:
                    await asyncio.shield(self._call(machine_lock.release, fd))
            self._worlds[tag] = world
            return world

    async def _build(self, plan: WorldPlan) -> WorldRef:
        labels = self._labels(plan.name, plan.task.id, plan.trial.id if plan.trial else None)
        started: list[str] = []

        def on_container(kind: str, cid: str) -> None:
            if kind == "created":
                started.append(cid)
                self._containers[cid] = plan.name
            else:
                self._containers.pop(cid, None)
            self._emit(WorldEvent(world=plan.name, container=cid[:12], kind=kind,  # type: ignore[arg-type]
                                  image=plan.env_image))

        def emit_output(text: str) -> None:
            self._emit(WorldEvent(world=plan.name, container="", kind="output", text=text))

        sink = emit_output if self.listener is not None else None
        loop = asyncio.get_running_loop()

        def remove_later(cid: str) -> None:  # the snapshot is committed: the result need not wait
            try:
                loop.call_soon_threadsafe(self._remove_later, cid)
            except RuntimeError:  # the loop is gone: remove it here
                self._remove_tracked(cid)

        try:
            return await self._call(build_world, self._service.client, plan, labels,
                                    self._limits_for(plan.task.environment.memory_mb), sink, on_container,
                                    remove_later)
        except asyncio.CancelledError:
            for cid in started:
                if cid in self._containers:
                    await self._remove_shielded(cid)
            raise

    # --- runs in fresh containers ----------------------------------------------------------
    async def _with_fresh(self, world: WorldRef, work: Work[T],
                          make: Callable[[], Container] | None = None) -> T:
        # Started before the turn (bounded by _started), worked in only on the turn (_sem).
        # `make` creates the container instead (a run as its main process starts it itself).
        async with self._started:
            async with self._starting:
                container = await self._start_fresh(make or (lambda: self._start_world(world)))
            try:
                async with self._sem:
                    handles: list[Killable] = []
                    work_done = self._call(work, container, handles)
                    # A read-only root leaves only its sized tmpfs mounts to write: nothing to
                    # measure.
                    result = await (work_done if self.limits.read_only
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
            # Looked up after the first interval: most runs are over by then and cost no
            # inspect round trip.
            await asyncio.sleep(DISK_POLL)
            upper = await self._call(upper_dir, self._service.client(), container_id)
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

    async def run_tests(self, world: WorldRef, test_ids: Sequence[str],
                        files: dict[str, str] | None = None, timeout: float | None = 300,
                        isolate_harness: bool = False) -> TestRun:
        """Run test ids (and candidate files copied in) in a fresh container from the world.
        One container and one test process for all ids (batched replay)."""
        if world.user and not self.limits.read_only:
            plan = plan_run(world, list(test_ids), files, isolate_harness)
            if plan.inline_ok():
                try:
                    return await self._run_as_main(plan, timeout)
                except InlineRefused:
                    pass  # the exec path below copies the files in the way that always works

        def work(container: Container, handles: list[Killable]) -> TestRun:
            return self._tests_in(container, world, list(test_ids), files, timeout, isolate_harness, handles)
        return await self._with_fresh(world, work)

    async def _run_as_main(self, plan: RunPlan, timeout: float | None) -> TestRun:
        """The run's wrapper as the main process of a fresh container (sandbox/main_process.py):
        no keep-alive process and no exec. Only for worlds whose tests run as the trial user: the
        wrapper and the container's init run as root, so the tests can read neither's
        environment (the trailer's mark)."""
        world = plan.world
        argv, env, mark = plan.inline(self.limits.cpu_seconds_for(timeout), timeout)

        handles: dict[str, ContainerHandle] = {}

        def make() -> Container:
            limits = self._limits_for(world.memory_mb)
            container = create_container(self._service.client(), world.image,
                                         self._labels(world.name, world.task_id, world.trial_id), limits,
                                         user=ROOT_USER, command=argv, env={**env, GATE_ENV: "1"},
                                         workdir=world.workdir)
            self._track(container, world.name, world.image)
            handle = handles[container.id] = ContainerHandle(self._service.client, container.id)
            try:
                start_gated(handle)
            except BaseException as exc:
                handle.close_stream()
                self._remove_tracked(container.id)
                if isinstance(exc, GateNotReached):
                    raise InlineRefused(f"the wrapper did not start: {exc}") from exc
                raise
            return container

        def work(container: Container, killables: list[Killable]) -> TestRun:
            self._emit(WorldEvent(world=world.name, container=container.id[:12], kind="running",
                                  command=" ".join(plan.argv)))
            handle = handles.pop(container.id)
            killables.append(handle)
            splitter = TrailerSplitter(OutputCollector(f"tests-{world.name}",
                                                       self._output_sink(world.name, container.id)), mark)
            result = run_main(handle, plan.argv, timeout=timeout, collector=splitter,
                              reported_exit=lambda: exit_code_of(splitter.report))
            report, neutralised = read_trailer(plan, splitter)
            run = finish_run(plan, container, result, report, neutralised, inline=True)
            self._exec_events(world.name, container.id, plan.argv, run.exec)
            return run
        return await self._with_fresh(world, work, make)

    def _tests_in(self, container: Container, world: WorldRef, test_ids: list[str], files: dict[str, str] | None,
                  timeout: float | None, isolate_harness: bool, handles: list[Killable],
                  rename: bool = True) -> TestRun:
        argv_seen: list[str] = []

        def started(cmd: str) -> None:
            argv_seen.append(cmd)
            self._emit(WorldEvent(world=world.name, container=container.id[:12], kind="running", command=cmd))

        run = run_tests_in(
            self._service.client, container, world, test_ids, files, timeout, isolate_harness,
            handles, on_output=self._output_sink(world.name, container.id),
            on_start=started,
            rename=rename, cpu_seconds=self.limits.cpu_seconds_for(timeout))
        self._exec_events(world.name, container.id, run.exec.argv, run.exec)
        return run

    async def exec(self, world: WorldRef, cmd: Command, timeout: float | None = 60,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   stdin: str | bytes | None = None) -> ExecResult:
        """Run a command (shell string or argv) in a fresh container from the world."""
        def work(container: Container, handles: list[Killable]) -> ExecResult:
            return self._exec_in(container, world, cmd, timeout, cwd, env, stdin, handles)
        return await self._with_fresh(world, work)

    def _exec_in(self, container: Container, world: WorldRef, cmd: Command, timeout: float | None, cwd: str | None,
                 env: dict[str, str] | None, stdin: str | bytes | None, handles: list[Killable]) -> ExecResult:
        argv = _argv(cmd)
        run_argv = argv
        if stdin is not None:
            path = f"/tmp/tj/stdin-{secrets.token_hex(4)}"  # 0644: readable by the trial user
            put_files(container, {path: stdin})
            run_argv = ["sh", "-c", 'exec "$@" < "$0"', path, *argv]
        if cwd and not cwd.startswith("/"):
            cwd = f"{world.workdir.rstrip('/')}/{cwd}"
        handle = ExecHandle(self._service.client, container.id, init_pid(container))
        handles.append(handle)
        self._emit(WorldEvent(world=world.name, container=container.id[:12], kind="running",
                              command=" ".join(argv)))
        collector = OutputCollector(f"exec-{world.name}", self._output_sink(world.name, container.id))
        # As the world's unprivileged trial user, without capabilities: a command here may run
        # trial code.
        user = None
        if world.user:
            run_argv, user = as_user(run_argv, world.user, TRIAL_HOME, TRIAL_NAME), ROOT_USER
        result = run_exec(handle, run_argv, cwd=cwd or world.workdir, env=env, timeout=timeout,
                          collector=collector, user=user)
        result.argv = argv
        self._exec_events(world.name, container.id, argv, result)
        return result

    # --- long-lived containers -------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def open(self, world: WorldRef) -> AsyncIterator["LiveWorld"]:
        """A container that lives for the block (an agent session): exec, files, test runs."""
        container = await self._call(self._start_world, world)
        live = LiveWorld(self, world, container)
        try:
            yield live
        finally:
            await self._remove_shielded(container.id)

    async def remove(self, world: WorldRef) -> bool:
        """Drop the world's snapshot image; False when a running container still uses it."""
        self._worlds.pop(world.image, None)
        res = await self._call(podman, "rmi", world.image, check=False)
        return res.returncode == 0

    async def sweep(self) -> list[str]:
        """Remove leftover containers whose owning process is dead. Returns their ids."""
        return await self._call(cleanup.sweep, self._service.client())


class LiveWorld:
    """A running container of one world, kept for the duration of `Sandbox.open`."""

    def __init__(self, sandbox: Sandbox, world: WorldRef, container: Container):
        self.sandbox = sandbox
        self.world = world
        self.container = container

    @property
    def container_id(self) -> str:
        return str(self.container.id)

    def _path(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.world.workdir.rstrip('/')}/{path}"

    async def _guarded(self, work: Callable[[list[Killable]], T]) -> T:
        sb = self.sandbox
        handles: list[Killable] = []
        async with sb._sem:
            future = sb._call(work, handles)
            try:
                return await sb._guard_disk(self.container.id, handles, future)
            except asyncio.CancelledError:
                # Keep the container, kill what this call started in it.
                for handle in handles:
                    await asyncio.shield(sb._call(handle.kill))
                raise

    async def exec(self, cmd: Command, timeout: float | None = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None, stdin: str | bytes | None = None) -> ExecResult:
        return await self._guarded(lambda handles: self.sandbox._exec_in(
            self.container, self.world, cmd, timeout, cwd, env, stdin, handles))

    async def read_file(self, path: str, max_bytes: int = 2 * 1024 * 1024) -> str:
        """Text of a file (relative to the repo or absolute). FileNotFoundError when missing."""
        data = await self.sandbox._call(get_file, self.container, self._path(path), max_bytes)
        return data.decode(errors="replace")

    async def write_file(self, path: str, text: str | bytes) -> None:
        owner = int(self.world.user.split(":")[0]) if self.world.user else 0  # the trial user's, like the repo
        await self.sandbox._call(put_files, self.container, {self._path(path): text}, owner=owner)

    async def list_files(self, path: str = ".") -> list[str]:
        """Entries of a directory, sorted; directories end with '/'. FileNotFoundError when missing."""
        result = await self.exec(["ls", "-1Ap", "--", self._path(path)], timeout=30)
        if result.exit_code != 0:
            raise FileNotFoundError(f"{path}: {result.output.strip()[-200:]}")
        return sorted(line for line in (result.stdout_head + result.stdout_tail).splitlines() if line)

    async def run_tests(self, test_ids: Sequence[str], files: dict[str, str] | None = None,
                        timeout: float | None = 300, isolate_harness: bool = False) -> TestRun:
        return await self._guarded(lambda handles: self.sandbox._tests_in(
            self.container, self.world, list(test_ids), files, timeout, isolate_harness, handles,
            rename=False))
