"""The demo's recorded agent candidates (pytest files, and node:test files for the JavaScript
task) behave on the reference world as the scripts claim:
the last version of every chain passes on R[G]; earlier versions (the ones that were repaired)
fail there, on the real reference world. The shared per-trial demo audit (tests/conftest.py) has
already run every candidate it submitted on that world: those statuses are read from its session;
only versions it did not run get a container here (one per task)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox import Sandbox
from testjack_tui.engine.probes import PROBE_SUFFIX

from conftest import DEMO

pytestmark = [pytest.mark.podman, pytest.mark.timeout(3600)]  # may set up the shared demo audits; slow under load

SCRIPTS = DEMO / "agent-scripts"
# Where a candidate goes so the task's runner collects it (candidates import the code under test
# relative to that folder).
WITNESS_NAMES = {"python": "tests/test_tj_check_{}.py", "javascript": "test/tj_check_{}.tj.test.js"}


def chains(task_id: str) -> list[dict]:
    base = SCRIPTS / task_id
    docs = [json.loads((base / "analysis.json").read_text())]
    docs += [json.loads(p.read_text()) for p in sorted((base / "audits").glob("*.json"))]
    return [chain for doc in docs for chain in doc["candidates"]]


def validated_on_the_reference(audit: dict) -> dict[tuple[str, str], set[str]]:
    """(task, version file) -> the statuses the shared per-trial demo audit (tests/conftest.py)
    recorded for that file's candidate on the reference world: every candidate an audit agent or
    the task analysis submits is run on R[G] first (its validation), and the per-trial audit
    submits every passing trial's recorded chains. Only a candidate whose source is the file's
    text counts. Read-only, straight from the session's database."""
    import sqlite3

    from testjack_tui.engine.store import db_path

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESTJACK_HOME", str(audit["home"]))
        db = db_path(audit["session_id"])
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT c.task_id, c.origin, c.source, v.reference FROM candidates c "
                           "JOIN validations v ON v.candidate_id = c.id").fetchall()
    finally:
        con.close()
    found: dict[tuple[str, str], set[str]] = {}
    for task_id, origin, source, status in rows:
        path = SCRIPTS / task_id / (origin or "")
        if origin and path.is_file() and path.read_text() == source and status:
            found.setdefault((task_id, origin), set()).add(status)
    return found


# What the fixture below took from the shared audit and what it ran itself (for the README's counts).
SHARED_COUNTS = {"from_the_audit": 0, "run_here": 0, "containers": 0}


@pytest.fixture(scope="module")
def reference_results(demo_per_trial_audit, tmp_path_factory):
    """task -> version -> its status on the reference world. A version the shared audit already
    ran on R[G] (one status on every run there) is read from it; the rest run here, all of a task's
    in one container (none, when the audit covered them all)."""
    bench = load_benchmark(DEMO)
    validated = validated_on_the_reference(demo_per_trial_audit)
    mp = pytest.MonkeyPatch()
    mp.setenv("TESTJACK_HOME", str(tmp_path_factory.mktemp("tj-home-scripts")))

    async def run_task(sb, task_id, versions):
        # every version under its own file name, so one test process (pytest, node --test) runs them all
        task = bench.tasks[task_id]
        name = WITNESS_NAMES[task.language]
        files = {name.format(Path(v).stem): (SCRIPTS / task_id / v).read_text() for v in versions}
        world = await sb.prepare(task, "reference")
        run = await sb.run_tests(world, list(files), files=files)
        SHARED_COUNTS["containers"] += 1
        return {v: run.status(name.format(Path(v).stem)) for v in versions}

    async def run():
        results: dict[str, dict[str, str]] = {}
        left: dict[str, list[str]] = {}
        for task_id in sorted(bench.tasks):
            # Differential probes (*.probe.json) get their expected values from the task's reference
            # program at audit time; tests/test_probes.py runs one through a real audit.
            versions = sorted({v for chain in chains(task_id) for v in chain["versions"]
                               if not v.endswith(PROBE_SUFFIX)})
            results[task_id] = {}
            for v in versions:
                statuses = validated.get((task_id, v), set())
                if len(statuses) == 1:
                    results[task_id][v] = next(iter(statuses))
                    SHARED_COUNTS["from_the_audit"] += 1
                else:
                    left.setdefault(task_id, []).append(v)
                    SHARED_COUNTS["run_here"] += 1
        if left:
            async with Sandbox(session="demo-scripts") as sb:
                ran = await asyncio.gather(*(run_task(sb, t, vs) for t, vs in sorted(left.items())))
            for task_id, statuses in zip(sorted(left), ran):
                results[task_id].update(statuses)
        return results

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


def test_a_test_proposed_for_every_trial_runs_once_per_world_and_each_candidate_keeps_its_validation(
        demo_per_trial_audit):
    # A test runs once on R[G] (and once per re-run of the flaky control) and once on each
    # trial's world, validation or replay; another candidate with it (the demo's per-trial
    # scripts propose a probe twice, renamed by the book) takes that run (engine/oracle.taken_run),
    # its validation its own.
    from run_kinds import one_run_per_test

    found = one_run_per_test(demo_per_trial_audit["home"], demo_per_trial_audit["session_id"], "per-trial demo audit")
    assert found.copied["validation on R[G]"] > 0
    assert sum(found.copied.values()) == demo_per_trial_audit["summary"]["usage"]["same_test_runs"]
