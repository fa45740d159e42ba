"""7. Mutation evidence: what `--mutants N` adds to the audit of one trial.

ours  — `collect_mutation_evidence(limit=N)` on a demo trial (the AST mutator over the diff's
        added lines, then N mutants each run under T0 as a budgeted, stored run through the
        engine's TestRunner, side by side under the sandbox's concurrency), after the trial's T0
        run is stored, as it is once the engine has checked the task.
floor — the trial's files read and the same N mutated files run under T0 straight through the
        sandbox (`run_tests`, same concurrency, nothing stored): the work itself. Each mutant needs one fresh container
        and one T0 process — that is the method, so the floor is physical.
Context rows: the cost per mutant, and N mutants against one plain T0 run of the trial.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from .common import fmt_s, ratio, row
from .demo import demo_benchmark

OVERHEAD_TARGET = 1.2  # ours within 1.2x of the bare mutant runs
TASK, TRIAL = "merge-list-strategies", "merge-list-strategies__kestrel__3"


async def _measure(quick: bool) -> list[dict]:
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.budget import Budget
    from testjack_tui.engine.budgeted import BudgetedBackend
    from testjack_tui.engine.config import BudgetLimits
    from testjack_tui.engine.detectors.mutation import collect_mutation_evidence, mutants_of, pick
    from testjack_tui.engine.detectors import parse_diff
    from testjack_tui.engine.detectors.ghost import source_files
    from testjack_tui.engine.repo_files import read_repo_files
    from testjack_tui.engine.runner import TestRunner
    from testjack_tui.engine.store import SessionStore

    n = 4 if quick else 8
    bench = demo_benchmark()
    task = bench.tasks[TASK]
    trial = next(t for t in bench.trials if t.id == TRIAL)
    ids = list(task.tests.ids)
    reps = 1 if quick else 2
    with tempfile.TemporaryDirectory() as home:
        async with Sandbox(session="perf-mutation") as sb:
            world = await sb.prepare(task, "model", trial=trial)
            ours_times, floor_times, plain = [], [], 0.0

            async def floor_once() -> list:
                t = time.perf_counter()
                files = source_files(parse_diff(trial.patch))
                sources = await read_repo_files(sb, world, [f.path for f in files], world.workdir)
                picked = pick([m for f in files
                               for m in mutants_of(f.path, sources[f.path] or "", f.added_numbers)], n)
                await asyncio.gather(*(sb.run_tests(world, ids, files={m.file: m.source}) for m in picked))
                floor_times.append(time.perf_counter() - t)
                return picked

            # Alternate, a fresh store each time (a stored run would be answered from the store),
            # and keep each side's best: the two sides then see the same warm caches.
            mutants = await floor_once()  # also warms the snapshot's layers for both sides
            floor_times.clear()
            for rep in range(reps):
                mutants = await floor_once()
                store = SessionStore(Path(home) / f"perf-{rep}.sqlite")
                runner = TestRunner(BudgetedBackend(sb, Budget(store, BudgetLimits(), "perf")),
                                    store, lambda e: None, "perf")
                t = time.perf_counter()
                await runner.run(world, ids, task_id=task.id, trial_id=trial.id)  # as after the task check
                plain = time.perf_counter() - t
                t = time.perf_counter()
                report = await collect_mutation_evidence(runner, sb, task, trial, world, n)
                ours_times.append(time.perf_counter() - t)
                store.close()
    ours, floor = min(ours_times), min(floor_times)
    if report.run != len(mutants):
        raise RuntimeError(f"ran {report.run} mutants, the floor ran {len(mutants)}")
    r = ratio(ours, floor)
    return [
        row(f"7 mutation evidence, {report.run} mutants vs their bare runs", fmt_s(ours), fmt_s(floor), r,
            f"<= {OVERHEAD_TARGET}", r is not None and r <= OVERHEAD_TARGET,
            note=f"{TRIAL}: {report.generated} mutants of its added lines, {report.run} run, {report.killed} "
                 f"killed, {len(report.survivors)} survive (no coverage given here, so every mutant is run)"),
        row("7b mutation evidence per mutant vs one plain T0 run", fmt_s(ours / max(1, report.run)),
            fmt_s(plain), ratio(ours / max(1, report.run), plain), "-", None,
            note="context: mutants run side by side, so one costs less than a T0 run on its own"),
    ]


def run(quick: bool = False) -> list[dict]:
    return asyncio.run(_measure(quick))
