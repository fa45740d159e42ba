"""1. World start: a fresh container from a world's snapshot (`Sandbox.exec(world, ["true"])`:
create, start, exec, result) vs a raw `podman run --rm --network=none IMAGE true` of the same
snapshot image. Interleaved rounds, medians; target <= 1.3x.

Our container's removal happens in the background after the result (that is the product's
behaviour); we wait for it to finish before the next baseline run so it never slows the baseline.
"""
from __future__ import annotations

import asyncio
import subprocess
import time

from .common import fmt_s, median, ratio, row
from .demo import DEMO_TASK, demo_benchmark

TARGET = 1.3


async def _measure(rounds: int) -> tuple[list[float], list[float], str]:
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.labels import owner_labels

    bench = demo_benchmark()
    task = bench.tasks[DEMO_TASK]
    ours, raw = [], []
    async with Sandbox(session="perf-world-start") as sb:
        world = await sb.prepare(task, "reference")
        env = sb.service.cli_env()
        # Our owner labels on the raw run too (team rule: every container is labelled ours).
        labels = [a for k, v in owner_labels("perf-cli").items() for a in ("--label", f"{k}={v}")]
        argv = ["podman", "run", "--rm", "--network=none", *labels, world.image, "true"]
        # One warm-up of each: page cache, service connection pool.
        await sb.exec(world, ["true"])
        subprocess.run(argv, env=env, check=True, capture_output=True)
        for _ in range(rounds):
            await _drain(sb)
            t = time.perf_counter()
            subprocess.run(argv, env=env, check=True, capture_output=True)
            raw.append(time.perf_counter() - t)
            t = time.perf_counter()
            result = await sb.exec(world, ["true"])
            ours.append(time.perf_counter() - t)
            if result.exit_code != 0:
                raise RuntimeError(f"`true` exited {result.exit_code} in {world.name}")
        await _drain(sb)
    return ours, raw, world.image


async def _drain(sb) -> None:
    # The sandbox removes finished containers in the background (Sandbox._cleanups).
    pending = list(getattr(sb, "_cleanups", ()))
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def run(quick: bool = False) -> list[dict]:
    rounds = 5 if quick else 15
    ours, raw, image = asyncio.run(_measure(rounds))
    o, b = median(ours), median(raw)
    r = ratio(o, b)
    return [row("1 world start from snapshot (median)", fmt_s(o), fmt_s(b), r, f"<= {TARGET}x",
                r is not None and r <= TARGET,
                note=f"Sandbox.exec(world,['true']) vs `podman run --rm --network=none IMAGE true`, "
                     f"{rounds} interleaved rounds each, image {image.split(':')[-1][:40]}")]
