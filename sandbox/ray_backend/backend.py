"""`RayBackend`: the `SandboxBackend` whose operations run as Ray actor calls on cluster nodes.

The engine and the LLM calls stay in the operator's process; only sandbox operations travel.
Each node that offers the custom resource `testjack_slot` gets one `NodeSandbox` actor pinned
to it, running podman there with as many containers at once as the node has slots. Task files
travel through the object store (no shared disk). A world lives on the node that built it and
every run of that world goes there; a node lost mid-run costs only its runs in flight: the world
is prepared again on another live node and the run is retried there, so the engine sees each
run once (its budget and store count it once).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from types import ModuleType
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Sequence

from testjack_tui.model import Task, Trial

from ..api import ExecResult, TestRun, WorldEvent, WorldKind, WorldListener, WorldRef
from ..errors import PatchError, SandboxError
from .bundle import TaskBundle, pack_task

SLOT_RESOURCE = "testjack_slot"
EVENT_POLL_SECONDS = 1.0


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise SandboxError("the ray backend needs Ray: pip install 'testjack-tui[ray]'") from None
    return ray


def node_lost_errors() -> tuple[type[BaseException], ...]:
    """What a call raises when its node (or the actor on it) is gone."""
    from ray import exceptions as rx

    names = ("RayActorError", "ActorUnavailableError", "NodeDiedError", "WorkerCrashedError",
             "ObjectLostError", "OwnerDiedError", "LocalRayletDiedError")
    return tuple(getattr(rx, n) for n in names if hasattr(rx, n))


@dataclass
class Node:
    node_id: str
    label: str  # shown in the worlds panel: address/short id
    slots: int
    actor: Any = None
    alive: bool = True
    inflight: int = 0
    worlds: int = 0
    tasks: set[str] = field(default_factory=set)  # tasks whose environment image it holds
    pump: asyncio.Future[None] | None = None


def slot_nodes(nodes: list[dict[str, Any]]) -> list[Node]:
    """The alive nodes offering testjack slots, in a stable order."""
    out = []
    for info in nodes:
        slots = int((info.get("Resources") or {}).get(SLOT_RESOURCE, 0))
        if info.get("Alive") and slots > 0:
            node_id = info["NodeID"]
            out.append(Node(node_id=node_id, label=f"{info.get('NodeManagerAddress', '?')}/{node_id[:6]}",
                            slots=slots))
    return sorted(out, key=lambda n: n.node_id)


def world_name(task_id: str, kind: str, trial: Trial | None) -> str:
    return f"{task_id}/{kind}" + (f"/{trial.id}" if trial is not None and kind == "model" else "")


class RayBackend:
    """Sandbox operations on a Ray cluster (`address`: "auto", "ray://HOST:10001", HOST:PORT;
    None: the RAY_ADDRESS variable, else a Ray started here with this machine's cores as slots)."""

    def __init__(self, listener: WorldListener | None = None, session: str = "sandbox",
                 address: str | None = None, max_attempts: int = 3):
        self.listener = listener
        self.session = session
        self.address = address
        self.max_attempts = max_attempts
        self.nodes: list[Node] = []
        self.retries = 0  # runs retried after their node was lost
        self._started_ray = False
        self._bundles: dict[str, tuple[str, Any]] = {}  # task id -> (digest, object ref)
        self._plans: dict[str, tuple[Task, WorldKind, Trial | None]] = {}
        self._homes: dict[str, Node] = {}
        self._refs: dict[str, WorldRef] = {}  # as prepared on its home node
        # What the engine sees: the first ref of each world. A node building the world again
        # after a loss may tag its snapshot differently (its own base image id); run keys hold
        # the tag, so the engine keeps one identity while the node-local ref does the work.
        self._stable: dict[str, WorldRef] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._lost: tuple[type[BaseException], ...] = ()

    # --- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> "RayBackend":
        ray = _ray()
        self._lost = node_lost_errors()
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address, logging_level="WARNING", log_to_driver=False)
            else:
                # A Ray of our own reports nothing home: our machines reach no network.
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                cores = os.cpu_count() or 1
                ray.init(num_cpus=cores, resources={SLOT_RESOURCE: cores}, include_dashboard=False,
                         logging_level="WARNING", log_to_driver=False)
            self._started_ray = True
        self.nodes = slot_nodes(ray.nodes())
        if not self.nodes:
            raise SandboxError(f"no node of the Ray cluster offers the resource {SLOT_RESOURCE!r}: "
                               f"start Ray with --resources '{{\"{SLOT_RESOURCE}\": CORES}}' on each node")
        try:
            await asyncio.gather(*(self._start_node(node) for node in self.nodes))
        except BaseException:
            await self.close()
            raise
        return self

    async def _start_node(self, node: Node) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .node import NodeSandbox

        ray = _ray()
        actor_class = ray.remote(NodeSandbox)
        node.actor = actor_class.options(
            num_cpus=0, max_concurrency=1000, max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
        ).remote(self.session, node.slots, node.label)
        await node.actor.start.remote()
        node.pump = asyncio.ensure_future(self._pump(node))

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        ray = _ray()
        for node in self.nodes:
            if node.pump is not None:
                node.pump.cancel()
        live = [n for n in self.nodes if n.alive and n.actor is not None]
        await asyncio.gather(*(self._stop_node(n) for n in live), return_exceptions=True)
        for node in self.nodes:
            if node.actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(node.actor)
                node.actor = None
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    async def _stop_node(self, node: Node) -> None:
        try:
            await node.actor.stop.remote()
            await self._drain(node)
        except self._lost:
            node.alive = False

    # --- events ----------------------------------------------------------------------------
    def _deliver(self, node: Node, events: list[WorldEvent]) -> None:
        if self.listener is None:
            return
        for event in events:
            try:
                self.listener(dataclasses.replace(event, node=node.label))
            except Exception:  # a broken listener must not break container work
                pass

    async def _drain(self, node: Node) -> None:
        self._deliver(node, await node.actor.events.remote(0))

    async def _pump(self, node: Node) -> None:
        while node.alive:
            try:
                events = await node.actor.events.remote(EVENT_POLL_SECONDS)
            except self._lost:
                return
            self._deliver(node, events)

    def _node_lost(self, node: Node, world: str, exc: BaseException) -> None:
        if not node.alive:
            return
        node.alive = False
        self._deliver(node, [WorldEvent(world=world, container="", kind="removed",
                                        text=f"node {node.label} lost ({type(exc).__name__}); "
                                             "its runs in flight are retried on another node")])

    # --- placement -------------------------------------------------------------------------
    def _live_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.alive]

    def _choose(self, task_id: str) -> Node:
        """Locality first: a node already holding the task's environment image; among those (or
        all), the least busy, then the one holding fewest worlds."""
        live = self._live_nodes()
        if not live:
            raise SandboxError("every node of the Ray cluster is lost")
        return min(live, key=lambda n: (n.inflight, task_id not in n.tasks, n.worlds,
                                        self.nodes.index(n)))

    def _bundle(self, task: Task) -> tuple[str, Any]:
        entry = self._bundles.get(task.id)
        if entry is None:
            bundle: TaskBundle = pack_task(task)
            entry = self._bundles[task.id] = (bundle.digest, _ray().put(bundle))
        return entry

    async def _call(self, node: Node, call: Callable[[Any], Awaitable[Any]]) -> Any:
        node.inflight += 1
        try:
            return await call(node.actor)
        finally:
            node.inflight -= 1

    async def prepare(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> WorldRef:
        if kind not in ("null", "reference", "model"):
            raise ValueError(f"unknown world kind {kind!r}")
        if kind == "model" and trial is None:
            raise ValueError("a model world needs a trial")
        name = world_name(task.id, kind, trial)
        self._plans[name] = (task, kind, trial if kind == "model" else None)
        world, _ = await self._placed(name)
        return self._stable.setdefault(name, world)

    async def _placed(self, name: str) -> tuple[WorldRef, Node]:
        """The world on a live node: its home, or prepared again on another node."""
        home = self._homes.get(name)
        if home is not None and home.alive and name in self._refs:
            return self._refs[name], home
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            home = self._homes.get(name)
            if home is not None and home.alive and name in self._refs:
                return self._refs[name], home
            task, kind, trial = self._plans[name]
            digest, ref = self._bundle(task)
            last: BaseException | None = None
            for _ in range(self.max_attempts):
                node = self._homes.get(name)
                if node is None or not node.alive:
                    node = self._choose(task.id)
                try:
                    result = await self._call(node, lambda a: a.prepare.remote(digest, [ref], kind, trial))
                except self._lost as exc:
                    self._node_lost(node, name, exc)
                    last = exc
                    continue
                if isinstance(result, tuple) and result and result[0] == "patch_error":
                    raise PatchError(result[1], result[2], result[3])
                if self._homes.get(name) is not node:
                    self._homes[name] = node
                    node.worlds += 1
                node.tasks.add(task.id)
                self._refs[name] = result
                return result, node
            raise SandboxError(f"{name}: no node could prepare the world: {last}")

    async def _on_world(self, world: WorldRef, op: Callable[[Any, WorldRef], Awaitable[Any]]) -> Any:
        """Run `op` on the node holding the world; on a lost node, again on another one."""
        if world.name not in self._plans:
            raise SandboxError(f"{world.name}: not prepared by this backend")
        last: BaseException | None = None
        for attempt in range(self.max_attempts):
            placed, node = await self._placed(world.name)
            try:
                return await self._call(node, lambda a: op(a, placed))
            except self._lost as exc:
                self._node_lost(node, world.name, exc)
                last = exc
                self.retries += 1
        raise SandboxError(f"{world.name}: lost {self.max_attempts} nodes in a row: {last}")

    # --- runs --------------------------------------------------------------------------------
    async def run_tests(self, world: WorldRef, test_ids: Sequence[str],
                        files: dict[str, str] | None = None, timeout: float | None = 300,
                        isolate_harness: bool = False) -> TestRun:
        ids = list(test_ids)
        return await self._on_world(world, lambda a, w: a.run_tests.remote(
            w, ids, files, timeout, isolate_harness))

    async def run_official(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> TestRun:
        """T0 through the task's own verifier flow on a node: the one holding the task's worlds
        when there is one (its images are there), else the least busy; again elsewhere if lost."""
        if kind == "model" and trial is None:
            raise ValueError("a model world needs a trial")
        digest, ref = self._bundle(task)
        name = world_name(task.id, kind, trial)
        last: BaseException | None = None
        for _ in range(self.max_attempts):
            home = self._homes.get(name)
            node = home if home is not None and home.alive else self._choose(task.id)
            try:
                run = await self._call(node, lambda a: a.run_official.remote(digest, [ref], kind, trial))
            except self._lost as exc:
                self._node_lost(node, name, exc)
                last = exc
                self.retries += 1
                continue
            node.tasks.add(task.id)
            return run
        raise SandboxError(f"{name}: lost {self.max_attempts} nodes in a row: {last}")

    async def exec(self, world: WorldRef, cmd: Any, timeout: float | None = 60,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   stdin: str | bytes | None = None) -> ExecResult:
        return await self._on_world(world, lambda a, w: a.exec.remote(w, cmd, timeout, cwd, env, stdin))

    @contextlib.asynccontextmanager
    async def open(self, world: WorldRef) -> AsyncIterator["RemoteLiveWorld"]:
        """A container kept on the world's node for an agent session. Its state lives there:
        if the node is lost, the session's calls fail with SandboxError."""
        placed, node = await self._placed(world.name) if world.name in self._plans else (world, None)
        if node is None:
            raise SandboxError(f"{world.name}: not prepared by this backend")
        try:
            live_id = await node.actor.open_live.remote(placed)
        except self._lost as exc:
            self._node_lost(node, world.name, exc)
            raise SandboxError(f"{world.name}: node {node.label} lost") from exc
        live = RemoteLiveWorld(self, node, live_id, placed)
        try:
            yield live
        finally:
            if node.alive:
                with contextlib.suppress(*self._lost):
                    await asyncio.shield(node.actor.close_live.remote(live_id))

    async def remove(self, world: WorldRef) -> bool:
        node = self._homes.pop(world.name, None)
        self._refs.pop(world.name, None)
        self._stable.pop(world.name, None)
        if node is None or not node.alive:
            return True
        node.worlds -= 1
        try:
            return bool(await node.actor.remove.remote(world))
        except self._lost as exc:
            self._node_lost(node, world.name, exc)
            return True

    async def sweep(self) -> list[str]:
        removed: list[str] = []
        for node in self._live_nodes():
            try:
                removed += await node.actor.sweep.remote()
            except self._lost as exc:
                self._node_lost(node, "", exc)
        return removed

    def placement(self) -> dict[str, str]:
        """World name -> label of the node holding it."""
        return {name: node.label for name, node in self._homes.items()}


class RemoteLiveWorld:
    """`LiveWorldHandle` of a container kept on a cluster node."""

    def __init__(self, backend: RayBackend, node: Node, live_id: str, world: WorldRef):
        self._backend = backend
        self._node = node
        self._live_id = live_id
        self.world = world

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self._node.alive:
            raise SandboxError(f"{self.world.name}: node {self._node.label} was lost")
        try:
            return await self._node.actor.live_call.remote(self._live_id, method, args, kwargs)
        except self._backend._lost as exc:
            self._backend._node_lost(self._node, self.world.name, exc)
            raise SandboxError(f"{self.world.name}: node {self._node.label} lost") from exc

    async def exec(self, cmd: Any, timeout: float | None = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None, stdin: str | bytes | None = None) -> ExecResult:
        return await self._call("exec", cmd, timeout=timeout, cwd=cwd, env=env, stdin=stdin)

    async def read_file(self, path: str, max_bytes: int = 2 * 1024 * 1024) -> str:
        return await self._call("read_file", path, max_bytes)

    async def write_file(self, path: str, text: str | bytes) -> None:
        await self._call("write_file", path, text)

    async def list_files(self, path: str = ".") -> list[str]:
        return await self._call("list_files", path)

    async def run_tests(self, test_ids: Sequence[str], files: dict[str, str] | None = None,
                        timeout: float | None = 300, isolate_harness: bool = False) -> TestRun:
        return await self._call("run_tests", list(test_ids), files=files, timeout=timeout,
                                isolate_harness=isolate_harness)
