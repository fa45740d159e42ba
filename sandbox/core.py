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
import secrets
import time
from typing import Any, AsyncIterator, Callable, Sequence

from podman.domain.containers import Container

from testjack_tui.model import Environment, Task, Trial

from . import cleanup, machine_lock
from .api import ExecResult, TestRun, WorldEvent, WorldKind, WorldRef
from .containers import create_container, get_file, init_pid, put_files
from .errors import SandboxError
from .execs import ExecHandle, Killable, as_user, result_of, run_exec
from .images import api_image_id, api_images, ensure_env_image, resolve_env_image
from .output import OutputCollector
from .podman_conf import podman
from .runners import runner_name
from .official import OfficialPlan, plan_official, read_official, run_official_in, trailer_reports
from .main_process import GATE_ENV, ContainerHandle, GateNotReached, attach_and_start, run_main, start_gated
from .testruns import InlineRefused, RunPlan, finish_run, plan_run, read_trailer, run_tests_in
from .trailer import TrailerSplitter, exit_code_of
from .user_base import ensure_user_base, user_base_tag, warm_for
from .worlds import WorldPlan, build_world, find_world
from .trial_user import ROOT_USER, TRIAL_HOME, TRIAL_NAME
from .pool import ContainerPool, T

Command = str | Sequence[str]
LOCK_POLL = 0.2  # seconds between tries of a world snapshot's machine-wide build lock


def _exec_plan(world: WorldRef, cmd: Command, cwd: str | None, stdin: str | bytes | None
               ) -> tuple[list[str], list[str], str | None, str | None, dict[str, str | bytes]]:
    """How a one-off command runs in a fresh container of `world`, as an exec or as the
    container's main process alike: (argv it is named by, argv to run, working directory, user,
    the stdin file to put in first)."""
    argv = run_argv = _argv(cmd)
    stdin_file: dict[str, str | bytes] = {}
    if stdin is not None:
        path = f"/tmp/tj/stdin-{secrets.token_hex(4)}"  # 0644: readable by the trial user
        stdin_file[path] = stdin
        run_argv = ["sh", "-c", 'exec "$@" < "$0"', path, *argv]
    if cwd and not cwd.startswith("/"):
        cwd = f"{world.workdir.rstrip('/')}/{cwd}"
    # As the world's unprivileged trial user, without capabilities (as_user drops them): a
    # command here may run trial code.
    user = None
    if world.user:
        run_argv, user = as_user(run_argv, world.user, TRIAL_HOME, TRIAL_NAME), ROOT_USER
    return argv, run_argv, cwd, user, stdin_file


def _argv(cmd: Command) -> list[str]:
    return ["sh", "-c", cmd] if isinstance(cmd, str) else [str(a) for a in cmd]


class Sandbox(ContainerPool):
    """Worlds, execs and test runs in podman containers.

    listener: called with WorldEvent for container lifecycle and streamed output.
    concurrency: containers working at once (default: the number of cores).
    session: a label for this user of the sandbox (shown in `podman ps`).
    limits: per-container limits (defaults: 1 GiB, 256 pids, 1 CPU, network none).
    prestart: containers started ahead of their turn for waiting runs (default: one per slot,
    fewer when memory is short; 0 starts each container only when its run's turn comes).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Images whose verifier flow wrapper could not start as a container's main process (no
        # python3 there): their runs take the exec at once, not a failed container first.
        self._exec_only: set[str] = set()

    async def env_image(self, task: Task) -> str:
        """The task's environment image (built or pulled when missing; cached by content)."""
        env = task.environment
        key = (env.image, str(env.containerfile or ""), str(env.context or ""))
        async with self._lock(("env", key)):
            if key not in self._env_images:
                cli_env = self._service.cli_env()
                image, image_id = await self._call(resolve_env_image, env, cli_env, self.log, "",
                                                   api_images(self._service.client))
                self._env_images[key] = (image, image_id or image)
        return self._env_images[key][0]

    async def _world_base(self, task: Task) -> tuple[str, str]:
        """(image, id) world snapshots are built on: the environment image with the repo given
        to the trial user once (sandbox/user_base.py), so a snapshot holds only its changes."""
        await self.env_image(task)
        env = task.environment
        image, image_id = self._env_images[(env.image, str(env.containerfile or ""), str(env.context or ""))]
        # A Go task's user base holds Go's build cache too, a Rust task's a non-incremental target/
        warm = warm_for(runner_name(task.tests.framework))
        key = ("user-base", image_id, env.workdir, warm)
        async with self._lock(key):
            if key not in self._env_images:
                tag = user_base_tag(image_id, env.workdir, warm)
                while (fd := await self._call(machine_lock.try_acquire, f"user-base:{tag}")) is None:
                    await asyncio.sleep(LOCK_POLL)  # another session builds this very image
                try:
                    self._env_images[key] = await self._call(
                        ensure_user_base, self._service.client, image, image_id, env.workdir,
                        self._labels(f"user-base {task.id}", task.id, None), self.limits,
                        api_image_id(self._service.client), warm)
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
                                             cli_env, self.log, "", api_images(self._service.client))
                except SandboxError:
                    if ev.verifier_containerfile is None:
                        raise
            if built is None:
                containerfile = ev.verifier_containerfile
                assert containerfile is not None  # checked above: a verifier image or a Containerfile
                parent = await self._call(api_image_id(self._service.client), image) or image
                recipe = Environment(containerfile=containerfile, context=containerfile.parent)
                built = await self._call(ensure_env_image, recipe, cli_env, self.log, parent,
                                         api_images(self._service.client))
            self._env_images[key] = (built, built)
        return built

    async def run_official(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> TestRun:
        """T0 through the benchmark's own verifier flow (testjack_tui.sandbox.official) in a fresh container
        from the verifier image; outcomes keyed by T0's ids exactly as the benchmark writes them.
        The flow's wrapper is the container's main process (no exec, started ahead of its turn)
        when its files fit in its environment and the image can start it; else an exec."""
        if kind == "model" and trial is None:
            raise ValueError("a model world needs a trial")
        image = await self.verifier_image(task)
        trial_id = trial.id if kind == "model" and trial else None
        name = f"{task.id}/{kind}" + (f"/{trial_id}" if trial_id else "")
        plan = plan_official(task, kind, trial if kind == "model" else None, name,
                             self.limits.cpu_seconds_for(task.tests.evaluator.timeout_sec
                                                         if task.tests.evaluator else None))
        if plan.inline_ok() and image not in self._exec_only:
            try:
                run = await self._official_as_main(plan, image, trial_id)
            except InlineRefused:
                self._exec_only.add(image)  # the exec below, with its own ways in for the files
            else:
                if run is not None:
                    return run

        def work(container: Container, handles: list[Killable]) -> TestRun:
            run = run_official_in(
                self._service.client, container, plan, handles, on_output=self._output_sink(name, container.id),
                on_start=lambda cmd: self._emit(WorldEvent(world=name, container=container.id[:12],
                                                           kind="running", command=cmd)))
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

    def _gated(self, handles: dict[str, ContainerHandle], image: str, name: str, task_id: str,
               trial_id: str | None, memory_mb: int | None, argv: list[str], env: dict[str, str], workdir: str,
               user: str | None = None) -> Container:
        """A fresh container whose main process (`argv`, our wrapper) is started and held at its
        gate until its turn, its handle kept in `handles`. InlineRefused: the wrapper never
        reached the gate (e.g. no python3 in the image)."""
        container = create_container(self._service.client(), image, self._labels(name, task_id, trial_id),
                                     self._limits_for(memory_mb), user=user, command=argv,
                                     env={**env, GATE_ENV: "1"}, workdir=workdir)
        self._track(container, name, image)
        handle = handles[container.id] = ContainerHandle(self._service.client, container.id)
        try:
            start_gated(handle)
        except BaseException as exc:
            handle.close_stream()
            self._remove_tracked(container.id)
            if isinstance(exc, GateNotReached):
                raise InlineRefused(f"the wrapper did not start: {exc}") from exc
            raise
        if handle.upper_dir:
            self._upper_dirs[container.id] = handle.upper_dir
        return container

    async def _official_as_main(self, plan: OfficialPlan, image: str, trial_id: str | None) -> TestRun | None:
        """The verifier flow's wrapper as the main process of a fresh container (as
        `_run_as_main` runs tests). None: the wrapper ended without its trailer and with exit
        127 (a shell without python3 behind it), which the exec path runs the plain way."""
        task, name = plan.task, plan.world_name
        argv, env, mark = plan.inline()
        handles: dict[str, ContainerHandle] = {}

        def make() -> Container:
            return self._gated(handles, image, name, task.id, trial_id, task.environment.memory_mb, argv, env,
                               task.environment.workdir)

        def work(container: Container, killables: list[Killable]) -> TestRun | None:
            self._emit(WorldEvent(world=name, container=container.id[:12], kind="running",
                                  command=" ".join(plan.argv)))
            handle = handles.pop(container.id)
            killables.append(handle)
            splitter = TrailerSplitter(OutputCollector(f"t0-{name}", self._output_sink(name, container.id)), mark)
            result = run_main(handle, argv, timeout=plan.evaluator.timeout_sec, collector=splitter,
                              reported_exit=lambda: exit_code_of(splitter.report))
            found = trailer_reports(splitter.report)
            if found is None and result.exit_code == 127 and not result.timed_out:
                return None
            run = read_official(container, plan, result, found)
            self._exec_events(name, container.id, run.exec.argv, run.exec)
            return run
        # A writable root (the benchmark's script runs as it would there): measured.
        return await self._with_fresh(None, work, make, guard_disk=True)

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
            return self._gated(handles, world.image, world.name, world.task_id, world.trial_id, world.memory_mb,
                               argv, env, world.workdir, user=ROOT_USER)

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
        """Run a command (shell string or argv) in a fresh container from the world: the
        command is the container's main process (created ahead of its turn, started on it),
        which saves podman an exec's conmon and `runc exec`. A read-only root keeps the exec:
        its repo mount belongs to the container's user."""
        if not self.limits.read_only:
            return await self._exec_as_main(world, cmd, timeout, cwd, env, stdin)

        def work(container: Container, handles: list[Killable]) -> ExecResult:
            return self._exec_in(container, world, cmd, timeout, cwd, env, stdin, handles)
        return await self._with_fresh(world, work)

    async def _exec_as_main(self, world: WorldRef, cmd: Command, timeout: float | None, cwd: str | None,
                            env: dict[str, str] | None, stdin: str | bytes | None) -> ExecResult:
        argv, run_argv, cwd, user, stdin_file = _exec_plan(world, cmd, cwd, stdin)

        def make() -> Container:
            container = create_container(self._service.client(), world.image,
                                         self._labels(world.name, world.task_id, world.trial_id),
                                         self._limits_for(world.memory_mb), user=user, command=run_argv,
                                         env=env, workdir=cwd or world.workdir)
            self._track(container, world.name, world.image)
            try:
                put_files(container, stdin_file)
            except BaseException:
                self._remove_tracked(container.id)
                raise
            return container

        def work(container: Container, handles: list[Killable]) -> ExecResult:
            handle = ContainerHandle(self._service.client, container.id)
            handles.append(handle)
            self._emit(WorldEvent(world=world.name, container=container.id[:12], kind="running",
                                  command=" ".join(argv)))
            collector = OutputCollector(f"exec-{world.name}", self._output_sink(world.name, container.id))
            why = attach_and_start(handle)
            if why:  # as an exec podman could not start: 127 and podman's word
                handle.close_stream()
                collector.add(None, why.encode())
                collector.close()
                result = result_of(argv, 127, False, collector, time.monotonic())
            else:
                result = run_main(handle, argv, timeout=timeout, collector=collector, gated=False)
            self._exec_events(world.name, container.id, argv, result)
            return result
        return await self._with_fresh(world, work, make)

    def _exec_in(self, container: Container, world: WorldRef, cmd: Command, timeout: float | None, cwd: str | None,
                 env: dict[str, str] | None, stdin: str | bytes | None, handles: list[Killable]) -> ExecResult:
        argv, run_argv, cwd, user, stdin_file = _exec_plan(world, cmd, cwd, stdin)
        put_files(container, stdin_file)
        handle = ExecHandle(self._service.client, container.id, init_pid(container))
        handles.append(handle)
        self._emit(WorldEvent(world=world.name, container=container.id[:12], kind="running",
                              command=" ".join(argv)))
        collector = OutputCollector(f"exec-{world.name}", self._output_sink(world.name, container.id))
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
