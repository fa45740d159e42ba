"""11. Go replay: 20 witness `_test.go` files replayed on a prepared Go world in one run.

ours  — `Sandbox.run_tests` of the 20 witness files on a trial's world snapshot of our Go fixture
        (tests/fixtures/golang): a fresh container, the files and canaries copied in, one
        `go test -json` build + run of every witness through the Go runner's launcher, reports read
        back and parsed.
hand  — the same `go test -json -count=1 -run '^(...)$' .` typed by hand in an already running
        container of the same world, the 20 files already written, timed inside it (bash `time`):
        the first `go test` there, so its build cache is as cold as ours.
Median of alternating rounds; target <= 1.5x (the issue on runners for every language). Full run
only: building the Go toolchain image on a machine without it costs minutes.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

from .common import ROOT, fmt_s, median, ratio, row

TARGET = 1.5
FIXTURE = ROOT / "tests" / "fixtures" / "golang"
TASK = "slugify-separators"
TRIAL = f"{TASK}__kestrel__1"  # a sound trial
COUNT = 20


def witnesses() -> dict[str, str]:
    return {f"tj_perf_w{i:02d}_test.go":
            f'package textkit\n\nimport "testing"\n\nfunc TestTJPerfW{i:02d}(t *testing.T) {{\n'
            f'\tif got := Slugify("Perf  Case {i}"); got == "" {{\n\t\tt.Fatalf("empty slug")\n\t}}\n}}\n'
            for i in range(COUNT)}


HAND = ('TIMEFORMAT="TJ_HAND %R"; { time (go test -json -count=1 -run "$1" . >/dev/null 2>&1); } 2>&1')


async def _measure(rounds: int) -> tuple[list[float], list[float], dict[str, str]]:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    bench = load_benchmark(FIXTURE)
    task = next(t for t in bench.tasks.values() if t.id.endswith(TASK))
    trial = next(t for t in bench.trials if t.id.endswith(TRIAL))
    files = witnesses()
    pattern = "^(" + "|".join(f"TestTJPerfW{i:02d}" for i in range(COUNT)) + ")$"
    ours, hand, statuses = [], [], {}
    async with Sandbox(session="perf-go-replay", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)  # built (or found) before any timing
        for i in range(rounds + 1):
            t = time.perf_counter()
            run = await sb.run_tests(world, list(files), files=files, timeout=600)
            a = time.perf_counter() - t
            statuses = {p: run.status(p) for p in files}
            async with sb.open(world) as live:
                for path, text in files.items():
                    await live.write_file(path, text)
                res = await live.exec(["bash", "-c", HAND, "hand", pattern], timeout=600)
                text = res.stdout_head + res.stdout_tail
                line = next((ln for ln in text.splitlines() if ln.startswith("TJ_HAND ")), None)
                if line is None:
                    raise RuntimeError(f"go test by hand printed no time: {res.output[-500:]}")
                b = float(line.split()[1])
            if i:  # the first round warms the page cache and the world's image layers
                ours.append(a)
                hand.append(b)
    return ours, hand, statuses


def run(quick: bool = False) -> list[dict]:
    if quick:
        return []  # CI time: the full run only
    ours, hand, statuses = asyncio.run(_measure(3))
    a, b = median(ours), median(hand)
    r = ratio(a, b)
    bad = {p: s for p, s in statuses.items() if s != "passed"}
    return [row("11 Go replay: 20 witness files, one run vs go test by hand", fmt_s(a), fmt_s(b), r,
                f"<= {TARGET}x", r is not None and r <= TARGET and not bad,
                note=f"{TRIAL} of {Path(FIXTURE).name}: Sandbox.run_tests of {COUNT} `_test.go` witness "
                     f"files (fresh container, canaries, one `go test -json` build + run) vs the "
                     f"same `go test` run by hand in a running container of that world, its first "
                     f"run there; median of {len(ours)} alternating rounds"
                     + (f"; not passing: {bad}" if bad else ""))]
