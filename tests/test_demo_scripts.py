"""The demo's recorded agent candidates behave on the reference world as the scripts claim:
the last version of every chain passes on R[G]; earlier versions (the ones that were repaired)
fail there. One container per task on the real reference world."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox import Sandbox
from testjack_tui.engine.probes import PROBE_SUFFIX

from conftest import DEMO

pytestmark = pytest.mark.podman

SCRIPTS = DEMO / "agent-scripts"


def chains(task_id: str) -> list[dict]:
    base = SCRIPTS / task_id
    docs = [json.loads((base / "analysis.json").read_text())]
    docs += [json.loads(p.read_text()) for p in sorted((base / "audits").glob("*.json"))]
    return [chain for doc in docs for chain in doc["candidates"]]


@pytest.fixture(scope="module")
def reference_results(tmp_path_factory):
    bench = load_benchmark(DEMO)
    mp = pytest.MonkeyPatch()
    mp.setenv("TESTJACK_HOME", str(tmp_path_factory.mktemp("tj-home-scripts")))

    async def run_task(sb, task_id):
        # Differential probes (*.probe.json) get their expected values from the task's reference
        # program at audit time; tests/test_probes.py runs one through a real audit.
        versions = sorted({v for chain in chains(task_id) for v in chain["versions"]
                           if not v.endswith(PROBE_SUFFIX)})
        # every version under its own file name, so one pytest process runs them all
        files = {f"tests/test_tj_check_{Path(v).stem}.py": (SCRIPTS / task_id / v).read_text() for v in versions}
        world = await sb.prepare(bench.tasks[task_id], "reference")
        run = await sb.run_tests(world, list(files), files=files)
        return {v: run.status(f"tests/test_tj_check_{Path(v).stem}.py") for v in versions}

    async def run():
        async with Sandbox(session="demo-scripts") as sb:
            ids = sorted(bench.tasks)
            results = await asyncio.gather(*(run_task(sb, t) for t in ids))
        return dict(zip(ids, results))

    try:
        yield asyncio.run(run())
    finally:
        mp.undo()


def test_final_versions_pass_on_the_reference(reference_results):
    for task_id, statuses in reference_results.items():
        for chain in chains(task_id):
            if chain["versions"][-1].endswith(PROBE_SUFFIX):
                continue
            assert statuses[chain["versions"][-1]] == "passed", (task_id, chain["versions"][-1])


def test_repaired_versions_failed_on_the_reference(reference_results):
    repaired = 0
    for task_id, statuses in reference_results.items():
        for chain in chains(task_id):
            for version in chain["versions"][:-1]:
                repaired += 1
                assert statuses[version] == "failed", (task_id, version, statuses[version])
    assert repaired >= 4
