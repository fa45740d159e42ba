"""14. CPU seconds (user+system, every process: podman service, conmon, runc, the container's
init, our wrapper, the runner, this Python) and bytes written of ONE test run in a fresh
container, per runner (issue 32); full run only (it prepares a world of each runner's fixture).

Row 14 go: a go test run on the world as it is (Go's build cache warmed for the trial user in
the user base image, sandbox/user_base.py) vs the same run with GOCACHE pointed at an empty
folder (what every run compiled before: the standard library and the repo's packages), in one
run, CPU-s per run; target <= 0.6x. Rows 14 <runner>: CPU-s and MB written per run (INFO).

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
import resource
import sys
import time
from pathlib import Path
from typing import Any

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


def _self() -> float:
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


def _mine() -> tuple[float, int]:
    """CPU seconds and bytes written by this process and its reaped children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime), (s.ru_oublock + c.ru_oublock) * 512


COLD_GO = "go (cold build cache)"  # the Go fixture's run as it was before the warm cache
GO_TARGET = 0.6


def _cold_go_cache() -> None:
    """Every go test run of this process gets an empty build cache (the run before the user
    base warmed one): GOCACHE in the runner's environment, a folder the trial user may create."""
    from testjack_tui.sandbox.runners.go_runner import GoTestRunner
    from testjack_tui.sandbox.trial_user import TRIAL_HOME

    command = GoTestRunner.command

    def cold(self, test_ids, *, workdir, out_dir):  # type: ignore[no-untyped-def]
        argv, env, files = command(self, test_ids, workdir=workdir, out_dir=out_dir)
        return argv, {**env, "GOCACHE": f"{TRIAL_HOME}/.cache/tj-perf-cold"}, files
    GoTestRunner.command = cold  # type: ignore[method-assign]


async def measure(names: list[str], count: int) -> dict[str, dict[str, Any]]:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    out: dict[str, dict[str, Any]] = {}
    async with Sandbox(session="perf-run-cpu", concurrency=1) as sb:
        service = sb.service.owned_pid()
        keep = {pid for pid in (service, getattr(sb._reaper, "pid", None)) if pid}
        for name in names:
            if name == COLD_GO:
                _cold_go_cache()
            folder, trial_id = FIXTURES["go" if name == COLD_GO else name]
            bench = load_benchmark(ROOT / "tests" / "fixtures" / folder)
            trial = next(t for t in bench.trials if trial_id in (None, t.id))
            task = bench.tasks[trial.task_id]
            ids = list(task.tests.fail_to_pass + task.tests.pass_to_pass)
            world = await sb.prepare(task, "model", trial)
            first = await sb.run_tests(world, ids, timeout=300)  # warm-up: page cache, connections
            await asyncio.sleep(1.0)
            await asyncio.to_thread(_reap, keep, SETTLE)
            cpu0, w0 = _mine()
            me0 = _self()
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
            me1 = _self()
            s1, sw1 = (_proc_cpu(service), _written(service)) if service else (0.0, 0)
            out[name] = {"cpu": (cpu1 - cpu0 + s1 - s0) / count, "service_cpu": (s1 - s0) / count,
                         "own_cpu": (me1 - me0) / count,
                         "written": (w1 - w0 + sw1 - sw0) / count,
                         "service_written": (sw1 - sw0) / count, "wall": wall / count, "runs": count,
                         "statuses": sorted({first.status(i) for i in ids})}
            print(f"[run_cpu] {name}: {json.dumps(out[name])}", file=sys.stderr, flush=True)
    return out


def run(quick: bool) -> list[dict[str, Any]]:
    import subprocess

    from .common import PYTHON, ROOT as REPO, fmt_s, ratio, row

    if quick:
        return []  # a world per runner to prepare: the full run only
    proc = subprocess.run([PYTHON, "-m", "tests.perf.run_cpu", "3", *FIXTURES, COLD_GO], cwd=REPO,
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"run CPU measurement failed: {proc.stderr[-300:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    warm, cold = got["go"]["cpu"], got[COLD_GO]["cpu"]
    r = ratio(warm, cold)
    rows = [row("14 run CPU go (warm vs cold build cache)", f"{warm:.2f} CPU-s", f"{cold:.2f} CPU-s", r,
                f"<= {GO_TARGET}x", r is not None and r <= GO_TARGET,
                note="CPU seconds (user+system of the podman service, conmon, runc, the container's "
                     "processes and ours) per go test run in a fresh container: the user base's warmed "
                     "build cache vs an empty GOCACHE, 3 runs each (tests/perf/run_cpu.py)")]
    for name in FIXTURES:
        m = got[name]
        rows.append(row(f"14 run CPU {name}", f"{m['cpu']:.2f} CPU-s", f"{m['written'] / 1e6:.1f} MB written",
                        None, "-", None, note=f"per run, {m['runs']} runs, wall {fmt_s(m['wall'])} each; "
                        f"podman service {m['service_cpu']:.2f} CPU-s and {m['service_written'] / 1e6:.1f} MB of it"))
    return rows


def main() -> None:
    count, names = int(sys.argv[1]), sys.argv[2:] or list(FIXTURES)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    print(json.dumps(asyncio.run(measure(names, count))))


if __name__ == "__main__":
    main()
