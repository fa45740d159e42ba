"""The demo task the container measurements use, and its witnesses."""
from __future__ import annotations

import dataclasses
import functools

from .common import ROOT

DEMO = ROOT / "benchmarks" / "demo"
DEMO_TASK = "parse-duration-compound"  # the demo task with the most passing trials (9)


@functools.lru_cache(maxsize=1)
def demo_benchmark():
    from testjack_tui.benchmarks import load_benchmark

    return load_benchmark(DEMO)


def passing_trials(task_id: str = DEMO_TASK):
    return sorted(demo_benchmark().passing(task_id), key=lambda t: t.id)


def synthetic_trials(count: int, base):
    """`count` trials made by copying the patches of `base` round-robin (new ids)."""
    return [dataclasses.replace(base[i % len(base)], id=f"perf-copy-{i:03d}--{base[i % len(base)].id}")
            for i in range(count)]


def witness_sources(task_id: str = DEMO_TASK) -> list[str]:
    """The task's recorded candidate tests (agent-scripts), sorted by file name."""
    folder = DEMO / "agent-scripts" / task_id / "candidates"
    return [p.read_text() for p in sorted(folder.glob("*.py"))]


def witnesses(count: int, task_id: str = DEMO_TASK) -> dict[str, str]:
    """`count` witness files (path -> source): the recorded candidates, cycled, each at its own
    path so all of them can be copied into one world for a batched run."""
    sources = witness_sources(task_id)
    return {f"tests/test_tj_perf_w{i:02d}.py": sources[i % len(sources)] for i in range(count)}
