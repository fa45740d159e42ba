"""Sandbox speed against its baselines (issue 4), measured in the same run. Not a timed test.

    .venv/bin/python tests/perf/sandbox_speed.py [--rounds 7]

1. starting a world from its snapshot (Sandbox.exec of `true`: fresh container, exec, result)
   vs a raw `podman run --rm --network=none IMAGE true`; target <= 1.3x.
2. replaying a batch of witnesses on a prepared world (Sandbox.run_tests with candidate files)
   vs the same pytest command in an already running container; target <= 1.5x.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.podman_conf import podman_env
from testjack_tui.sandbox.selftest import F2P, P2P, tiny_task

WITNESSES = {f"tests/test_tj_w{i}.py": f"from calc import add\n\ndef test_w{i}():\n    assert add({i}, 1) == {i + 1}\n"
             for i in range(8)}


async def measure(rounds: int) -> dict[str, float]:
    task = tiny_task(Path(tempfile.mkdtemp(prefix="tj-perf-")))
    raw, start, replay, live_runs = [], [], [], []
    async with Sandbox(session="perf") as sb:
        ref = await sb.prepare(task, "reference")
        ids = list(WITNESSES) + list(F2P + P2P)
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run(["podman", "run", "--rm", "--network=none", ref.image, "true"], env=podman_env(), check=True)
            raw.append(time.perf_counter() - t)
            t = time.perf_counter()
            await sb.exec(ref, ["true"])
            start.append(time.perf_counter() - t)
            t = time.perf_counter()
            await sb.run_tests(ref, ids, files=WITNESSES)
            replay.append(time.perf_counter() - t)
        async with sb.open(ref) as live:
            for path, text in WITNESSES.items():
                await live.write_file(path, text)
            for _ in range(rounds):
                t = time.perf_counter()
                await live.exec(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "--junitxml=/tmp/j.xml", *ids])
                live_runs.append(time.perf_counter() - t)
    med = statistics.median
    return {"raw_run": med(raw), "world_start": med(start), "replay": med(replay), "pytest_in_live": med(live_runs)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    m = asyncio.run(measure(parser.parse_args().rounds))
    print(f"world start {m['world_start']:.3f}s vs podman run --rm {m['raw_run']:.3f}s: "
          f"{m['world_start'] / m['raw_run']:.2f}x (target <= 1.3x)")
    print(f"batched replay {m['replay']:.3f}s vs pytest in a running container {m['pytest_in_live']:.3f}s: "
          f"{m['replay'] / m['pytest_in_live']:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
