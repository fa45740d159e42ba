"""9. The Ray backend's overhead per run, and a scaling model from measured per-run costs.

Replay of W=20 witnesses over A trials of one demo task (A = 200 synthetic trials copying the
demo's patches, about 40 minutes on 2 cores; quick mode: 8) through the engine's replay
(`TaskLoop._replay`) on the local backend and on a 3-node local Ray cluster on this same
machine (every node runs this machine's podman), in the order local, ray, ray, local; each
figure is the mean of its two runs. Both run 3 containers at once (local concurrency 3; one
`testjack_slot` per node), so on one machine Ray can only add cost: the ratio is the overhead
Ray adds per run (actor call, object transfer, event relay) and must stay <= 1.3x.

The scaling rows are a model, not a measurement: a run occupies a slot for
c = local wall x slots / runs seconds plus Ray's measured overhead o per run, and the operator
dispatches at most 1 / d runs per second (d = measured round trip of a no-op actor call, the
operator's serial cost per call). Runs per second with N nodes of S slots each:
min(N x S / (c + o), 1 / d).
"""
from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from .common import fmt_s, ratio, row
from .demo import DEMO_TASK, demo_benchmark, passing_trials, synthetic_trials, witnesses
from .replay import _ours

OVERHEAD_TARGET = 1.3
NODES = 3
SLOTS = 3  # containers at once on both backends (one slot per Ray node)
MODEL_SLOTS_PER_NODE = 8
MODEL_NODES = (1, 3, 10, 30, 100)
W = 20


async def _prepare(sb, task, trials) -> dict:
    from testjack_tui.sandbox import PatchError

    worlds = {}
    for tr, w in zip(trials, await asyncio.gather(*(sb.prepare(task, "model", tr) for tr in trials),
                                                 return_exceptions=True)):
        if isinstance(w, PatchError):
            continue
        if isinstance(w, BaseException):
            raise w
        worlds[tr.id] = w
    return worlds


def _usable(worlds: dict, trials) -> list:
    return [tr for tr in trials if tr.id in worlds]


async def _noop_round_trip(backend, calls: int = 50) -> float:
    node = backend.nodes[0]
    t = time.perf_counter()
    for _ in range(calls):
        await node.actor.events.remote(0)
    return (time.perf_counter() - t) / calls


async def _measure(quick: bool) -> list[dict]:
    import os

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the cluster reports nothing home
    import ray
    from ray.cluster_utils import Cluster

    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.ray_backend import SLOT_RESOURCE, RayBackend

    task = demo_benchmark().tasks[DEMO_TASK]
    trials = synthetic_trials(8 if quick else 200, list(passing_trials()))
    files = witnesses(W)
    home = Path(tempfile.mkdtemp(prefix="tj-perf-ray-"))
    slots = {SLOT_RESOURCE: SLOTS // NODES}
    store = 80 * 1024 * 1024
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": slots, "object_store_memory": store, "include_dashboard": False})
    walls = {"local": 0.0, "ray": 0.0}
    statuses: dict[str, dict] = {}
    try:
        for _ in range(NODES - 1):
            cluster.add_node(num_cpus=1, resources=slots, object_store_memory=store)
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        async with Sandbox(session="perf-ray-local", concurrency=SLOTS) as local, \
                RayBackend(session="perf-ray") as backend:
            backends = {"local": local, "ray": backend}
            worlds = {name: await _prepare(b, task, trials) for name, b in backends.items()}
            usable = _usable(worlds["local"], trials)
            for name, b in backends.items():  # warm-up outside the timing
                await _ours(b, task, usable[:2], worlds[name], files, home)
            # A B B A: the machine's load drifts (other work shares its cores); this order
            # charges both backends the same drift.
            for name in ("local", "ray", "ray", "local"):
                wall, statuses[name] = await _ours(backends[name], task, usable, worlds[name], files, home)
                walls[name] += wall / 2
            dispatch = await _noop_round_trip(backend)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(home, ignore_errors=True)
    local_wall, ray_wall = walls["local"], walls["ray"]
    local_statuses, ray_statuses = statuses["local"], statuses["ray"]

    if ray_statuses != local_statuses:
        raise RuntimeError("the Ray backend's replay statuses differ from the local backend's")
    runs = len(local_statuses)
    r = ratio(ray_wall, local_wall)
    rows = [row(f"9 ray replay W={W} A={runs} on {NODES} local nodes vs local backend", fmt_s(ray_wall),
                fmt_s(local_wall), r, f"<= {OVERHEAD_TARGET}x", r is not None and r <= OVERHEAD_TARGET,
                gate=not quick,
                metrics={"ray_overhead_slot_s": overhead_for_model(ray_wall, local_wall, runs),
                         "ray_dispatch_s": dispatch},
                note=f"{runs} replay runs (one container per trial, {W} witness files each), {SLOTS} "
                     f"containers at once on both; same statuses on both backends; one machine, so "
                     f"this is Ray's overhead, not a gain")]
    per_run = local_wall * SLOTS / runs  # slot-seconds one run occupies
    overhead = overhead_for_model(ray_wall, local_wall, runs)
    ceiling = 1 / dispatch if dispatch > 0 else float("inf")
    for n in MODEL_NODES:
        rate = min(n * MODEL_SLOTS_PER_NODE / (per_run + overhead), ceiling)
        rows.append(row(f"9 ray model: {n} node(s) x {MODEL_SLOTS_PER_NODE} slots", f"{rate:.1f} runs/s",
                        f"{MODEL_SLOTS_PER_NODE / per_run:.1f} runs/s one local machine", None, "-", None,
                        note=f"model from this run: {fmt_s(per_run)} per run per slot + {fmt_s(overhead)} "
                             f"Ray overhead, dispatch ceiling {ceiling:.0f} runs/s "
                             f"({fmt_s(dispatch)} per actor call)"))
    return rows


def overhead_for_model(ray_wall: float, local_wall: float, runs: int) -> float:
    """Slot-seconds Ray adds to one run (never negative: on one machine it cannot save any)."""
    return max(0.0, (ray_wall - local_wall) * SLOTS / runs)


def run(quick: bool = False) -> list[dict]:
    return asyncio.run(_measure(quick))
