"""12. Channels and environment-varied replay: a witness run on the demo task's reference world
with our own run of each witness test and its varied replay (sandbox/own_run.py: another uid,
argv[0], HOME/TMPDIR, clock) vs the same run without them (pytest's run alone, as before).
Interleaved rounds, medians; target <= 1.2x (the varied replay may add at most a fifth to the
replay it varies).

Switched off for the baseline through the runner's `own_run` flag, which `plan_run` reads; the
same world, witness files and container path either way.
"""
from __future__ import annotations

import asyncio
import time

from .common import fmt_s, median, ratio, row
from .demo import DEMO_TASK, demo_benchmark, witnesses

TARGET = 1.2
WITNESSES = 2  # a task's audit confirms a few witnesses; each is a file of one or two tests


async def _measure(rounds: int) -> tuple[list[float], list[float], int]:
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.runners.pytest_runner import PytestRunner

    task = demo_benchmark().tasks[DEMO_TASK]
    files = witnesses(WITNESSES)
    ours, plain = [], []
    varied = 0
    async with Sandbox(session="perf-varied") as sb:
        world = await sb.prepare(task, "reference")

        async def once(own: bool) -> float:
            nonlocal varied
            PytestRunner.own_run = own
            try:
                t = time.perf_counter()
                run = await sb.run_tests(world, list(files), files=files, isolate_harness=True)
                took = time.perf_counter() - t
            finally:
                PytestRunner.own_run = True
            if own:
                varied = sum(1 for r in run.channels.values() if "varied env" in r)
            return took

        await once(True)
        await once(False)
        for _ in range(rounds):
            plain.append(await once(False))
            ours.append(await once(True))
    return ours, plain, varied


def run(quick: bool = False) -> list[dict]:
    rounds = 3 if quick else 9
    ours, plain, varied = asyncio.run(_measure(rounds))
    o, b = median(ours), median(plain)
    r = ratio(o, b)
    out = row("12 witness run with own run + varied replay (median)", fmt_s(o), fmt_s(b), r,
              f"<= {TARGET}x", r is not None and r <= TARGET,
              note=f"{WITNESSES} witness files of {DEMO_TASK} on its reference world, with our own "
                   f"run and the varied replay of {varied} test(s) vs pytest's run alone, "
                   f"{rounds} interleaved rounds each")
    return [out]
