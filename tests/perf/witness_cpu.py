"""CPU seconds of ONE witness run (a model world, an honest witness file copied in, canaries,
our own run and the environment-varied replay) per runner, and the processes its channels start
(the wrapper's trailer `cost`: starts per kind, CPU of the runner and of the channels inside the
container). Not in the table (a world per runner to prepare, minutes): a measuring tool,
`python -m tests.perf.witness_cpu COUNT [KIND...]`, run in a child subreaper as
tests/perf/run_cpu.py is (so conmon, runc and the container's processes are counted).

The witness is one of the repo's own test files under a new name (it passes on the trial's
world, so every channel runs: the honest path a witness run takes most). Prints one JSON line:
{kind: {"cpu": s per run, "service_cpu", "wall", "runs", "cost": the last run's trailer cost}}.

2026-12-04, 3 runs each, load 14-23 on 2 cores (CPU-s per run, all processes; in the container:
the trailer's cpu_runner + cpu_channels): pytest, a witness file with parametrized tests: 1.14
(runner 0.27, channels 0.29: a varied and an own driver) before, 0.82 (0.27, 0.15: one varied
driver) after the driver was given only the tests it calls; pytest, a witness importing no
pytest: 0.75 (0.26, 0.13) before, 0.67 (0.23, 0.05) after the canary file reached the driver
without its `import pytest`. node --test 2.1-2.6 (0.77, 1.27: three plain processes), vitest 4.7
(four vitest processes of about 1 CPU-s each; Debian's node has no code cache, so every node
process compiles node's own JavaScript: `node -e 0` costs 0.09 CPU-s there).
"""
from __future__ import annotations

import asyncio
import ctypes
import json
import sys
import time
from pathlib import Path
from typing import Any

from .lifecycle_cpu import PR_SET_CHILD_SUBREAPER, SETTLE, _proc_cpu, _reap
from .run_cpu import _mine

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
# kind -> (benchmark folder, trial id or None for the first passing one, the repo file copied,
# where the copy goes)
KINDS = {
    "pytest": (ROOT / "benchmarks" / "demo", "parse-duration-compound",
               "environment/repo/tests/test_durations.py", "tests/test_tj_w.py"),
    # a witness importing no pytest (32 of the demo's 50 Python candidates)
    "pytest, no pytest import": (ROOT / "benchmarks" / "demo", "recordset-metadata",
                                 "agent-scripts/recordset-metadata/candidates/au_rec_json_v1.py",
                                 "tests/test_tj_w.py"),
    "node --test": (ROOT / "benchmarks" / "demo", "duration-units-js",
                    "environment-js/repo/test/duration.test.js", "test/tj_w.test.js"),
    "vitest": (FIX / "typescript", "query-parse", "environment/repo/test/query.test.ts", "test/tj_w.test.ts"),
    "jest": (FIX / "jest", "clamp-bounds", "environment/repo/test/clamp.test.js", "test/tj_w.test.js"),
}


async def measure(kinds: list[str], count: int) -> dict[str, dict[str, Any]]:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox import core, testruns

    costs: list[dict[str, Any]] = []
    read = testruns.read_trailer

    def keep_cost(plan, splitter):  # type: ignore[no-untyped-def]
        report, neutralised = read(plan, splitter)
        costs.append(dict((report or {}).get("cost") or {}))
        return report, neutralised
    testruns.read_trailer = core.read_trailer = keep_cost  # type: ignore[assignment]

    out: dict[str, dict[str, Any]] = {}
    async with Sandbox(session="perf-witness-cpu", concurrency=1) as sb:
        service = sb.service.owned_pid()
        keep = {pid for pid in (service, getattr(sb._reaper, "pid", None)) if pid}
        for kind in kinds:
            folder, task_id, source, path = KINDS[kind]
            bench = load_benchmark(folder)
            trial = sorted(bench.passing(task_id), key=lambda t: t.id)[0]
            task = bench.tasks[trial.task_id]
            files = {path: (folder / source).read_text()}
            world = await sb.prepare(task, "model", trial)
            first = await sb.run_tests(world, [path], files=files, timeout=300, isolate_harness=True)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(_reap, keep, SETTLE)
            cpu0, _ = _mine()
            s0 = _proc_cpu(service) if service else 0.0
            t = time.perf_counter()
            for _ in range(count):
                run = await sb.run_tests(world, [path], files=files, timeout=300, isolate_harness=True)
                if run.channels != first.channels or run.canaries != first.canaries:
                    raise RuntimeError(f"{kind}: channels changed between runs: {run.channels}")
            wall = time.perf_counter() - t
            await asyncio.sleep(2.0)
            while sb._cleanups:
                await asyncio.gather(*list(sb._cleanups), return_exceptions=True)
            await asyncio.to_thread(_reap, keep, SETTLE)
            cpu1, _ = _mine()
            s1 = _proc_cpu(service) if service else 0.0
            out[kind] = {"cpu": (cpu1 - cpu0 + s1 - s0) / count, "service_cpu": (s1 - s0) / count,
                         "wall": wall / count, "runs": count, "cost": costs[-1] if costs else {},
                         "canaries": first.canaries, "channels": first.channels}
            print(f"[witness_cpu] {kind}: {json.dumps(out[kind])}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    count, kinds = int(sys.argv[1]), sys.argv[2:] or list(KINDS)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    print(json.dumps(asyncio.run(measure(kinds, count))))


if __name__ == "__main__":
    main()
