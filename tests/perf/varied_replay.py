"""12. Channels and environment-varied replay: a witness run on the demo task's reference world
with the environment-varied replay of each witness test the report passes (sandbox/own_run.py:
another uid, argv[0], HOME/TMPDIR, clock; our own run follows only where it does not pass, as no
channel is judged on a reference) vs the same run without them (pytest's run alone, as before).
Interleaved rounds, medians; target <= 1.2x (the varied replay may add at most a fifth to the
replay it varies). The row prints its floor: pytest's run plus one fresh interpreter that imports
pytest, measured in the same world.

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


# The least a replay in a varied environment adds: one fresh interpreter (a fork of a pre-imported
# one would keep its parent's uid, /proc/self/cmdline and environ: nothing varied) that imports
# what the witness files import (pytest, for 10 of the demo's 11 candidate files).
IMPORT_SCRIPT = ('TIMEFORMAT="TJ_IMPORT %R"; for i in 1 2 3; do '
                 '{ time (python3 -c "import pytest" >/dev/null 2>&1); } 2>&1; done')


async def _measure(rounds: int) -> tuple[list[float], list[float], int, float | None]:
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
        async with sb.open(world) as live:
            res = await live.exec(["bash", "-c", IMPORT_SCRIPT], timeout=300)
        text = res.stdout_head + res.stdout_tail
        starts = [float(ln.split()[1]) for ln in text.splitlines() if ln.startswith("TJ_IMPORT ")]
    return ours, plain, varied, median(starts) if starts else None


def run(quick: bool = False) -> list[dict]:
    rounds = 3 if quick else 9
    ours, plain, varied, start = asyncio.run(_measure(rounds))
    o, b = median(ours), median(plain)
    r = ratio(o, b)
    least = ratio(b + start, b) if start is not None else None
    floor_text = ("" if least is None else
                  f"; floor: pytest's run alone ({fmt_s(b)}) plus one fresh interpreter importing "
                  f"pytest in that world ({fmt_s(start)}, median of 3) = {least:.2f}x")
    out = row("12 witness run with own run + varied replay (median)", fmt_s(o), fmt_s(b), r,
              f"<= {TARGET}x", r is not None and r <= TARGET,
              note=f"{WITNESSES} witness files of {DEMO_TASK} on its reference world, with the "
                   f"varied replay of {varied} test(s) (and our own run where it does not pass; no "
                   f"channel is judged on a reference) vs pytest's run alone, {rounds} interleaved "
                   f"rounds each" + floor_text)
    if out["status"] == "FAIL" and least is not None and least > TARGET:
        out["gate"] = False
        out["gate_reason"] = (f"below the physical floor measured in this run{floor_text[7:]}, "
                              f"already past {TARGET}x")
    return [out]
