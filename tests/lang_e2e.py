"""Shared by the per-language end-to-end tests (test_lang_*.py): the CLI in a subprocess, and
running an exported tests/ folder through the task's own test.sh in real worlds."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def cli(*args: str, home: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    env = dict(os.environ, TESTJACK_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def scripted_audit(benchmark: Path, home: Path, out: Path) -> dict:
    """A headless, auto-approved scripted audit of the whole benchmark (seed 0): its
    summary.json, with the progress lines it printed under `_stdout`."""
    import json

    proc = cli("audit", str(benchmark), "--headless", "--auto-approve", "--agent", "scripted",
               "--seed", "0", "--out", str(out), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    summary["_stdout"] = proc.stdout
    return summary


def logs_of_test_sh(home: Path) -> set[str]:
    """The logs of the runs of a task's own test.sh made with `home` (`t0-...`, one per run)."""
    return {p.name for p in (home / "cache" / "logs").glob("*-t0-*")}


def export_runs_expected(check: dict, ids_differ: bool = False) -> int:
    """How many times an export's check of a CTRF task runs test.sh: G with the witnesses, R, each
    refuted trial, each noted trial again with its harness files restored, and G once more when
    the final ids are not those G first ran with. G without the witnesses is the audit's own run
    of T0 there (the same run: engine/export_official.reported_on_g), not run again."""
    return 2 + (len(check["rewards"]) - 1) + len(check.get("notes") or []) + int(ids_differ)


def export_check(tests_dir: Path) -> dict:
    """What `export` wrote of its own check of a harbor export (testjack_check.json): the exported
    task, with the same test.patch and ids as the folder it wrote, run through the task's own
    unchanged test.sh on G and on every refuted trial (engine/export_official.py); the rewards
    its grader wrote are `rewards`. Its runs answer "does the written folder grade G 1 and each
    refuted trial 0"; a test grades the written folder itself only on worlds the check did not run."""
    import json

    check = json.loads((tests_dir / "testjack_check.json").read_text())
    assert check["flow"] == "official" and check["ok"] is True, check
    # The ids it split on the null world are the ones written, in the written lists; the
    # written patch holds every witness file.
    config = json.loads((tests_dir / "config.json").read_text())
    added = config["testjack"]["added_f2p"] + config["testjack"]["added_p2p"]
    assert sorted(check["null"]) == sorted(added), (check["null"], added)
    assert set(added) <= set(config["f2p_node_ids"]) | set(config["p2p_node_ids"]), added
    patch = (tests_dir / "test.patch").read_text()
    assert all(f"+++ b/{w['path']}" in patch for w in config["testjack"]["witnesses"]), config["testjack"]
    return check


async def grade_with_test_sh(benchmark: Path, task_id: str, tests_dir: Path,
                             worlds: list[str]) -> dict[str, float]:
    """The reward the task's own test.sh (from `tests_dir`, uploaded to /tests) gives to the
    reference solution and to trials (by id), through the benchmark's own flow
    (`Sandbox.run_official`: base state, the patch at /logs/artifacts/model.patch)."""
    import dataclasses

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    bench = load_benchmark(benchmark)
    task = bench.tasks[task_id]
    ev = task.tests.evaluator
    assert ev is not None, f"{task_id} has no verifier flow of its own"
    exported = dataclasses.replace(task, tests=dataclasses.replace(
        task.tests, evaluator=dataclasses.replace(ev, tests_dir=tests_dir)))
    trials = {t.id: t for t in bench.trials}
    rewards: dict[str, float] = {}
    async with Sandbox(session="lang-export-grade") as sb:
        for name in worlds:
            run = await (sb.run_official(exported, "reference") if name == "reference"
                         else sb.run_official(exported, "model", trials[name]))
            assert "===== grade =====" in run.exec.output, run.exec.output[-2000:]
            assert run.reward is not None, run.exec.output[-2000:]
            rewards[name] = run.reward
    return rewards
