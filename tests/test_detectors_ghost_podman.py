"""Ghost branches in a real model world: T0 under `coverage run --branch` in the sandbox,
intersected with the trial's diff."""
from __future__ import annotations

import pytest

from conftest import DEMO

pytestmark = pytest.mark.podman


async def test_ghost_branches_of_a_demo_trial_in_its_model_world():
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.detectors import (attach_ghost, collect_ghost_branches,
                                               collect_static_evidence, evidence_provider)

    bench = load_benchmark(DEMO)
    trial = next(t for t in bench.trials if t.id == "merge-list-strategies__kestrel__3")
    task = bench.tasks[trial.task_id]
    async with Sandbox(session="tj-ghost-test", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        report = await collect_ghost_branches(sb, task, trial, world)
        assert report.error == "", report.error
        assert report.added_lines > 0 and 0 < report.executed_lines <= report.added_lines
        assert report.added_line_pct is not None and report.branches >= report.executed_branches
        # every ghost line is an added line of the diff, with its code
        added = {(f.path, a.number): a.text for f in __import__(
            "testjack_tui.engine.detectors", fromlist=["parse_diff"]).parse_diff(trial.patch) for a in f.added}
        for g in report.ghost_lines:
            assert added[(g.file, g.line)] == g.code
        ev = attach_ghost(collect_static_evidence(task, trial), report)
        assert ev.detector_status()["ghost_branches"] == "clean"
        assert "added lines" in ev.to_text()
        # the engine hook: static evidence plus ghost branches, as a storable dict
        data = await evidence_provider(sb, task, trial, {"model": world})
        assert data["ghost"]["added_lines"] == report.added_lines
        assert data["detectors"]["env_sniffing"] == "suspicious"
