"""Shared by the per-language end-to-end tests (test_lang_*.py): the CLI in a subprocess, and
running an exported tests/ folder through the task's own test.sh in real worlds."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def cli(*args: str, home: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    env = dict(os.environ, TESTJACK_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


async def grade_with_test_sh(benchmark: Path, task_id: str, tests_dir: Path,
                             worlds: list[str]) -> dict[str, float]:
    """The reward the task's own test.sh (from `tests_dir`, mounted at /tests) gives in each
    world ("reference" or a trial id)."""
    from benchmarks import load_benchmark
    from sandbox import Sandbox

    bench = load_benchmark(benchmark)
    task = bench.tasks[task_id]
    trials = {t.id: t for t in bench.trials}
    rewards: dict[str, float] = {}
    async with Sandbox(session="lang-export-grade") as sb:
        for name in worlds:
            world = await (sb.prepare(task, "reference") if name == "reference"
                           else sb.prepare(task, "model", trials[name]))
            async with sb.open(world) as live:
                for f in tests_dir.iterdir():
                    if f.is_file():
                        await live.write_file(f"/tests/{f.name}", f.read_text())
                run = await live.exec(["bash", "/tests/test.sh"], timeout=900)
                assert "===== grade =====" in run.output, run.output[-2000:]
                rewards[name] = json.loads(await live.read_file("/logs/verifier/reward.json"))["reward"]
    return rewards
