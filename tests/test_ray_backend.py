"""The Ray backend on a real local Ray cluster (three nodes on this machine, each running this
machine's podman): an audit of a demo task equals the local backend's, also when the operator's
process is killed (-9) and the audit resumed, and when a worker node is killed while witnesses
are replayed; nothing leaks.

One local audit and one Ray audit (module fixtures) serve every assertion: the machine is small.
The Ray audit is interrupted twice: its process is killed -9 early, and the `resume` that ends it
loses a node mid-replay. The local audit takes its runs from the shared lightweight demo audit
(`--reuse-runs`, tests/conftest.py), whose own task analysis of the task made them. The audits are
the task analysis alone (`rounds=0`): its witnesses are written, checked on R and R[G], reviewed
and replayed on every model world (where the node is killed), and refute; a round of the loop adds
more of the same operations, not another path to the nodes.
"""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from conftest import DEMO

from testjack_tui.compose import session_deps
# Audits of one task and a cluster on a small shared machine: generous, not unbounded.
pytestmark = [pytest.mark.podman, pytest.mark.timeout(1500)]

TASK = "cache-async-memoize"
SLOTS = {"testjack_slot": 1}
STORE_MB = 80 * 1024 * 1024


def audit_config(backend: str, reuse_runs: str | None = None):
    from testjack_tui.engine.session import SessionConfig

    return SessionConfig(benchmark=str(DEMO), tasks=[TASK], seed=0, backend=backend, rounds=0, reuse_runs=reuse_runs,
                         agents={"audit": "scripted", "reviewer": "scripted", "task_analysis": "scripted"})


def result_of(session) -> dict:
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.summary import outcome_view

    report = build_report(session.id)
    return {"outcome": outcome_view(session.summary())[TASK],
            "verdicts": {t.trial_id: (t.label, t.confidence) for t in report.trials},
            "refutations": sorted((r.trial_id, r.witness_id) for r in session.store.refutations()),
            "runs": session.store.count_runs()}


def our_containers(session_id: str) -> list[str]:
    from testjack_tui.sandbox.podman_conf import podman

    res = podman("ps", "-a", "--filter", f"label=testjack.session=tj-{session_id}", "--format", "{{.ID}}",
                 check=False)
    return res.stdout.decode().split()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("tj-ray-home")
        mp.setenv("TESTJACK_HOME", str(path))
        yield path


def session_db(home: Path, session_id: str) -> Path:
    from testjack_tui.engine.store import db_path

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESTJACK_HOME", str(home))
        return db_path(session_id)


@pytest.fixture(scope="module")
def local(home, demo_lightweight_audit) -> dict:
    """The local audit of the task, taking its runs from the shared lightweight demo audit (its
    task analysis of the task ran the same tests on the same worlds): that session's store is
    copied into this module's home, where `--reuse-runs` looks for it, so the demo's own home
    holds no session of ours."""
    import sqlite3

    from testjack_tui.engine.session import AuditSession

    lender = demo_lightweight_audit["session_id"]
    source = sqlite3.connect(f"file:{session_db(demo_lightweight_audit['home'], lender)}?mode=ro", uri=True)
    copy = session_db(home, lender)
    copy.parent.mkdir(parents=True)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    session = AuditSession.create(audit_config("local", reuse_runs=lender), session_deps())
    assert asyncio.run(session.run()) == "finished", session.store.get_meta("state_reason")
    return result_of(session)


@pytest.fixture(scope="module")
def cluster(home):
    # Imported here, not at the top: the ray extra costs every xdist worker ~0.4 CPU-s at
    # collection, and only the worker that runs this file needs it (.ci/setup installs it).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the cluster reports nothing home
    import ray
    from ray.cluster_utils import Cluster

    # The head only coordinates (no testjack_slot), as on many real clusters: every world then
    # lives on a worker node, so the node the test kills always holds runs in flight.
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "object_store_memory": STORE_MB, "include_dashboard": False})
    workers = [c.add_node(num_cpus=1, resources=SLOTS, object_store_memory=STORE_MB) for _ in range(2)]
    ray.init(address=c.address, logging_level="WARNING")
    yield c, workers
    ray.shutdown()
    c.shutdown()


def test_doctor_checks_every_node_of_the_cluster(cluster, home):
    import subprocess
    import sys

    from conftest import ROOT

    c, _ = cluster
    proc = subprocess.run([sys.executable, "-m", "testjack_tui.cli", "doctor", "--backend", "ray",
                           "--ray-address", c.address], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TESTJACK_HOME=str(home)))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "3 node(s) alive, 2 offer testjack_slot (2 slots)" in proc.stdout
    assert proc.stdout.count(": podman: podman version") == 2, proc.stdout
    assert proc.stdout.count(": base image: present") == 2


@pytest.fixture(scope="module")
def on_ray(cluster, home, tmp_path_factory) -> dict:
    """The same audit on the Ray backend, interrupted twice. The operator's process is killed
    (SIGKILL) as the task analysis gets under way on the nodes (its first candidate has failed on
    R); `resume` (the command, run in this process) goes on on the cluster, the backend being part
    of the session, and there the node holding the first model world to replay a witness candidate
    (a run with the candidate's files) is killed while that run is on it."""
    import re

    from typer.testing import CliRunner

    from conftest import kill_when
    from testjack_tui.cli import app
    from testjack_tui.engine.session import AuditSession
    from testjack_tui.sandbox.ray_backend import RayBackend

    c, workers = cluster
    env = dict(os.environ, TESTJACK_HOME=str(home), RAY_ADDRESS=c.address)
    seen, _ = kill_when(["audit", str(DEMO), "--headless", "--auto-approve", "--seed", "0", "--task", TASK,
                         "--rounds", "0", "--backend", "ray"], env, lambda line, text: "back to its author" in line)
    sid = re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", seen).group(1)
    left_by_the_killed = our_containers(sid)

    by_label = {w.node_id[:6]: w for w in workers}
    backends, killed = [], []
    run_tests = RayBackend.run_tests

    async def run_tests_killing_its_node(backend, world, *args, **kwargs):
        if backend not in backends:
            backends.append(backend)
        home_node = backend._homes.get(world.name)
        victim = by_label.get(home_node.label.rsplit("/", 1)[-1]) if home_node else None
        files = kwargs.get("files") if "files" in kwargs else (args[1] if len(args) > 1 else None)
        if not (files and not killed and victim is not None and "/model/" in world.name):
            return await run_tests(backend, world, *args, **kwargs)
        killed.append(victim)
        run = asyncio.ensure_future(run_tests(backend, world, *args, **kwargs))
        # A test run in a container takes well over a second; the kill lands while it is on
        # the node (or before it reached it): either way it is in flight for the backend.
        await asyncio.sleep(0.3)
        await asyncio.to_thread(c.remove_node, victim, False)
        return await run

    out = tmp_path_factory.mktemp("ray-resumed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RayBackend, "run_tests", run_tests_killing_its_node)
        resumed = CliRunner().invoke(app, ["resume", sid, "--out", str(out)], env={"TESTJACK_HOME": str(home)})
    assert resumed.exit_code == 0, resumed.output[-3000:] + repr(resumed.exception)
    left_after_resume = our_containers(sid)
    # The progress lines name the node of each world's events, and each lost node.
    nodes_seen = set(re.findall(r"\] world \S+ on node (\S+)$", resumed.output, re.M))
    lost = [line for line in resumed.output.splitlines() if "] warning: node " in line and " lost " in line]
    session = AuditSession.open(sid, session_deps())
    return {"result": result_of(session), "backend": backends[0], "killed": killed, "nodes_seen": nodes_seen,
            "lost": lost, "session": session, "before_kill": seen, "resumed": resumed.output,
            "left_by_the_killed": left_by_the_killed,
            "left_after_resume": left_after_resume, "summary": json.loads((out / "summary.json").read_text())}


def test_ray_audit_killed_resumed_and_losing_a_node_mid_replay_equals_the_local_one(local, on_ray):
    from testjack_tui.engine.summary import SessionSummary, outcome_view

    assert "on node" in on_ray["before_kill"], on_ray["before_kill"][-2000:]  # killed while on the cluster
    assert "on node" in on_ray["resumed"], on_ray["resumed"][-2000:]  # it went on with the cluster
    assert on_ray["killed"], "a worker node ran a replay and was killed"
    assert on_ray["lost"] and on_ray["backend"].retries >= 1, "the run in flight there was retried"
    assert on_ray["result"]["outcome"] == local["outcome"]
    assert outcome_view(SessionSummary.from_json(on_ray["summary"]))[TASK] == local["outcome"]  # resume's --out
    assert on_ray["result"]["verdicts"] == local["verdicts"] and len(local["verdicts"]) == 7
    assert on_ray["result"]["refutations"] == local["refutations"] and local["refutations"]
    # Retried runs are stored and budgeted once: the same number of runs as on one machine.
    assert on_ray["result"]["runs"] == local["runs"]


def test_worlds_spread_over_nodes_and_events_name_them(on_ray):
    assert len(on_ray["nodes_seen"]) >= 2
    placement = on_ray["backend"].placement()
    assert any("/model/" in w for w in placement) and len(set(placement.values())) >= 2


def test_the_resume_swept_what_the_killed_process_left_and_a_returning_node_the_lost_nodes(on_ray, cluster):
    """The killed process's containers on the nodes are gone once `resume` has started there; a
    node coming back sweeps what the lost node left; then nothing of the session is left."""
    from testjack_tui.sandbox.backend import make_backend

    c, _ = cluster
    session_id = on_ray["session"].id
    assert not set(on_ray["left_by_the_killed"]) & set(on_ray["left_after_resume"])
    c.add_node(num_cpus=1, resources=SLOTS, object_store_memory=STORE_MB)
    c.wait_for_nodes()

    async def come_back() -> int:
        async with make_backend("ray", session="sweeper") as backend:
            return len(backend.nodes)
    assert asyncio.run(come_back()) == 2  # the surviving worker and the one that came back
    assert our_containers(session_id) == []


def test_verify_through_the_benchmarks_own_flow_on_ray_equals_local(cluster, deepswe_verified):
    """The task's own verifier flow (tests/ folder, separate verifier image from tests/Dockerfile)
    reaches the nodes through the object store and gives the local answers (the session's one
    local verify of the fixture, tests/conftest.py)."""
    from testjack_tui.commands.verify_cmd import verify_benchmark

    bench, verified = deepswe_verified
    task = sorted(bench.tasks.values(), key=lambda t: t.id)[0]
    assert task.tests.evaluator is not None and task.tests.evaluator.tests_dir is not None

    def view(results) -> list:
        return [(r.task_id, r.flow, r.well_formed, sorted(r.vacuous), r.reproduced,
                 sorted((t.trial_id, t.reproducible, t.reward) for t in r.trials)) for r in results]
    local = [verified[task.id]]
    on_ray = asyncio.run(verify_benchmark(bench, [task], backend="ray"))
    assert view(on_ray) == view(local) and local[0].flow == "official"


def test_a_node_without_the_tasks_image_builds_it_from_what_travels_through_ray(cluster, tmp_path):
    """No node holds the environment image of a new task, and the operator's task folder is gone
    once the task is packed: the node builds the image from the bundle in the object store."""
    import secrets
    import shutil

    from testjack_tui.sandbox.backend import make_backend
    from testjack_tui.sandbox.podman_conf import podman
    from testjack_tui.sandbox.selftest import F2P, tiny_task

    nonce = secrets.token_hex(6)
    task = tiny_task(tmp_path / "task", task_id=f"fresh-{nonce}", tag=nonce)

    def images() -> list[str]:
        res = podman("images", "-q", "--filter", f"label=testjack.selftest={nonce}", check=False)
        return res.stdout.decode().split()

    assert images() == []

    async def run():
        async with make_backend("ray", session="fresh-image") as backend:
            backend._bundle(task)  # packed on the operator's side
            shutil.rmtree(tmp_path / "task")
            ref = await backend.prepare(task, "reference")
            run = await backend.run_tests(ref, list(F2P))
            return run, backend.placement()

    run, placement = asyncio.run(run())
    assert all(run.status(i) == "passed" for i in F2P), run.exec.output[-1500:]
    assert any(w.startswith(f"fresh-{nonce}/reference") for w in placement), placement
    built = images()
    assert built, "the node built the task's environment image"
    podman("rmi", "-f", *built, check=False)
