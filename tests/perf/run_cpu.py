"""CPU seconds (user+system, every process: podman service, conmon, runc, the container's init,
our wrapper, the runner, this Python) and bytes written of ONE test run in a fresh container,
per runner (issue 32).

Runs in a child process of its own (`python -m tests.perf.run_cpu COUNT FIXTURE...`) that makes
itself a child subreaper, like tests/perf/lifecycle_cpu.py: conmon double-forks away from the
podman service, so only a subreaper collects the CPU and block writes of conmon, runc, the
container's processes and podman's cleanup processes (their rusage arrives when they are
reaped). The service is this child's own; its CPU and writes are read from /proc. Prints one
JSON line: {fixture: {"cpu": s per run, "written": bytes per run, "runs": n}}.
"""
from __future__ import annotations

import asyncio
import ctypes
import json
import os
import resource
import sys
import time
from pathlib import Path

from .lifecycle_cpu import PR_SET_CHILD_SUBREAPER, SETTLE, _proc_cpu, _reap

ROOT = Path(__file__).resolve().parents[2]
# fixture folder (tests/fixtures) -> the trial whose model world is run (its T0 ids)
FIXTURES = {
    "pytest": ("../../benchmarks/demo", None),
    "django": ("swebench-django", None),
    "go": ("golang", "slugify-separators__kestrel__1"),
    "cargo": ("rust", "roman-numerals__kestrel__1"),
    "vitest": ("typescript", "query-parse__kestrel__1"),
    "jest": ("jest", "clamp-bounds__kestrel__1"),
    "mocha": ("mocha", "clamp-bounds__kestrel__1"),
    "node --test": ("nodetest", "parse-duration__kestrel__1"),
}


def _written(pid: int | None) -> int:
    if not pid:
        return 0
    try:
        for line in open(f"/proc/{pid}/io"):
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _mine() -> tuple[float, int]:
    """CPU seconds and bytes written by this process and its reaped children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime), (s.ru_oublock + c.ru_oublock) * 512


async def measure(names: list[str], count: int) -> dict[str, dict[str, float]]:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    out: dict[str, dict[str, float]] = {}
    async with Sandbox(session="perf-run-cpu", concurrency=1) as sb:
        service = sb.service.owned_pid()
        keep = {pid for pid in (service, getattr(sb._reaper, "pid", None)) if pid}
        for name in names:
            folder, trial_id = FIXTURES[name]
            bench = load_benchmark(ROOT / "tests" / "fixtures" / folder)
            trial = next(t for t in bench.trials if trial_id in (None, t.id))
            task = bench.tasks[trial.task_id]
            ids = list(task.tests.fail_to_pass + task.tests.pass_to_pass)
            world = await sb.prepare(task, "model", trial)
            first = await sb.run_tests(world, ids, timeout=300)  # warm-up: page cache, connections
            await asyncio.sleep(1.0)
            await asyncio.to_thread(_reap, keep, SETTLE)
            cpu0, w0 = _mine()
            s0, sw0 = (_proc_cpu(service), _written(service)) if service else (0.0, 0)
            t = time.perf_counter()
            for _ in range(count):
                run = await sb.run_tests(world, ids, timeout=300)
                if {run.status(i) for i in ids} != {first.status(i) for i in ids}:
                    raise RuntimeError(f"{name}: outcomes changed between runs: {run.outcomes}")
            wall = time.perf_counter() - t
            await asyncio.sleep(2.0)  # the background removal of the last container
            while sb._cleanups:
                await asyncio.gather(*list(sb._cleanups), return_exceptions=True)
            await asyncio.to_thread(_reap, keep, SETTLE)
            cpu1, w1 = _mine()
            s1, sw1 = (_proc_cpu(service), _written(service)) if service else (0.0, 0)
            out[name] = {"cpu": (cpu1 - cpu0 + s1 - s0) / count, "service_cpu": (s1 - s0) / count,
                         "written": (w1 - w0 + sw1 - sw0) / count,
                         "service_written": (sw1 - sw0) / count, "wall": wall / count, "runs": count,
                         "statuses": sorted({first.status(i) for i in ids})}
            print(f"[run_cpu] {name}: {json.dumps(out[name])}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    count, names = int(sys.argv[1]), sys.argv[2:] or list(FIXTURES)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    print(json.dumps(asyncio.run(measure(names, count))))


if __name__ == "__main__":
    main()
