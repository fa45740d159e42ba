"""End to end on the bundled demo with the offline scripted agents and real podman containers.

The whole headless audit here is the default lightweight loop, seed 0: the session's shared one
(conftest `demo_lightweight_audit`, run once per test session; the per-trial demo audit reuses its
runs), read by the assertions. One run on a single task, on a copy of the demo without its labels
and in a home of its own, checks that a session pausing at its test-run budget, resumed with a
raised limit and killed (SIGKILL) in the middle of a round, resumes to the same result as the
whole audit (same seed) without leaking containers. labels.json (the demo's ground truth) is read
here only, never by the engine.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEMO, ROOT

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1500)]  # a whole demo audit; slow under load

SOUND = {"sound", "sound_incidental", "ambiguous"}
NOT_AUDITED = {"officially_failing"}
# The demo task whose lightweight audit makes the fewest runs (38 of the whole audit's 223; 3 rounds):
# every claim of the resume test holds for any task, and its audit is the test's cost.
ONE_TASK = "cache-async-memoize"


def cli(*args: str, home: Path, timeout: float = 1500) -> subprocess.CompletedProcess:
    env = dict(os.environ, TESTJACK_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def session_id(output: str) -> str:
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", output)
    assert match, output[-2000:]
    return match.group(1)


def outcome(summary: dict, task: str | None = None):
    from testjack_tui.engine.summary import SessionSummary, outcome_view

    view = outcome_view(SessionSummary.from_json(summary))
    return view if task is None else view[task]


def labels() -> dict:
    return json.loads((DEMO / "labels.json").read_text())["trials"]


@pytest.fixture(scope="module")
def home(demo_lightweight_audit) -> Path:
    return demo_lightweight_audit["home"]


@pytest.fixture(scope="module")
def first(demo_lightweight_audit) -> dict:
    # `audit DEMO --headless --auto-approve --seed 0 --out DIR` (conftest), its summary.json
    summary = dict(demo_lightweight_audit["summary"])
    summary["_stdout"] = demo_lightweight_audit["stdout"]
    return summary


def our_containers(label_filter: str) -> list[str]:
    from testjack_tui.sandbox.podman_conf import podman

    result = podman("ps", "-a", "--filter", "label=testjack.app=testjack-tui", "--filter", label_filter,
                    "--format", "{{.ID}}", check=False)
    out = result.stdout.decode() if isinstance(result.stdout, bytes) else result.stdout
    return [line for line in out.split() if line.strip()]


def test_refutes_reached_defects_and_their_sharers_never_sound_ones(first):
    truth = labels()
    refuted_any = False
    for task_id, task in first["tasks"].items():
        assert task["well_formed"], task["problems"]
        for trial_id, trial in task["trials"].items():
            label = truth[trial_id]["label"]
            assert label not in NOT_AUDITED, "officially failing trials are not in the corpus"
            if label == "not_reproducible":
                assert trial["state"] == "not_reproducible", (trial_id, trial)
            if label in SOUND:
                assert trial["state"] != "refuted", (trial_id, label, trial.get("refutations"))
            if trial["state"] == "refuted":
                refuted_any = True
                assert label not in SOUND
                ref = trial["refutations"][0]
                assert ref["reference"]["status"] == "passed"
                assert ref["model"]["status"] in ("failed", "error", "timed_out")
                assert ref["requirement"]
        # A defective trial its rounds reached (audited) is refuted, and so is every trial
        # that shares its mistake (same failure-mode group in the ground truth).
        for trial_id, trial in task["trials"].items():
            label = truth[trial_id]["label"]
            if not trial["audited"] or label in SOUND or label == "not_reproducible":
                continue
            assert trial["state"] == "refuted", (trial_id, label, trial)
            group = truth[trial_id]["mode_group"]
            for other_id, other in task["trials"].items():
                if truth[other_id]["mode_group"] == group and other["state"] != "not_reproducible":
                    assert other["state"] == "refuted", (other_id, "shares", group, "with", trial_id)
    assert refuted_any
    assert first["totals"]["refuted"] > 0 and first["totals"]["clean"] + first["totals"]["unaudited"] > 0


def test_summary_lists_witnesses_with_source_and_requirement(first):
    witnesses = [w for task in first["tasks"].values() for w in task["witnesses"]]
    assert witnesses
    for w in witnesses:
        assert w["requirement"] and w["source"].strip() and w["path"]
        assert w["origin"] in ("audit", "task_analysis")
    assert "REFUTED by" in first["_stdout"]


def test_each_test_runs_once_per_world_and_every_candidate_keeps_its_validation(first, home):
    # The scripted agents propose some tests for several trials: a test runs once on a world (and
    # once per re-run of the flaky control), later candidates with it take that run
    # (engine/oracle.taken_run), and each still has its validation, with
    # its run under its names.
    from run_kinds import one_run_per_test

    found = one_run_per_test(home, first["session_id"], "lightweight demo audit")
    assert sum(found.copied.values()) == first["usage"]["same_test_runs"] > 0


def test_sessions_lists_finished_runs(first, home):
    proc = cli("sessions", "--json", home=home)
    items = json.loads(proc.stdout)
    assert items and all(s["state"] == "finished" for s in items if s.get("mode"))


def test_paused_at_budget_then_killed_mid_round_resumes_to_the_same_result_without_the_labels_file(
        first, tmp_path):
    # One one-task session for three claims (a one-task audit costs minutes on a loaded machine;
    # tasks are sampled independently, so its result is the whole audit's for that task, seed for
    # seed): on a copy of the demo with its ground-truth labels deleted (they are for scoring
    # only), it pauses at its test-run budget; resumed with a raised limit, it is killed (SIGKILL)
    # in the middle of a round, after a candidate ran on the worlds; resumed again, it ends with
    # the whole audit's result, and the killed process's containers are swept.
    from conftest import kill_when

    home = tmp_path / "home"  # its own: the shared demo home lists only finished sessions
    copy = tmp_path / "demo-without-labels"
    shutil.copytree(DEMO, copy)
    (copy / "labels.json").unlink()
    proc = cli("audit", str(copy), "--headless", "--auto-approve", "--seed", "0", "--task", ONE_TASK,
               "--budget-runs", "20", home=home)
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "paused (budget: test_runs)" in proc.stdout and "resume" in proc.stdout
    sid = session_id(proc.stdout)
    listed = {s["id"]: s for s in json.loads(cli("sessions", "--json", home=home).stdout)}
    assert listed[sid]["state"] == "paused" and listed[sid]["test_runs"] <= 20

    env = dict(os.environ, TESTJACK_HOME=str(home))
    seen, pid = kill_when(["resume", sid, "--budget-runs", "100000"], env,
                          lambda line, text: re.search(r"round \d+: auditing", text) is not None
                          and ("candidate" in line or "reviewer" in line))
    listed = {s["id"]: s for s in json.loads(cli("sessions", "--json", home=home).stdout)}
    assert listed[sid]["state"] == "interrupted", seen[-2000:]

    out = tmp_path / "out"
    resumed = cli("resume", sid, "--budget-runs", "100000", "--out", str(out), home=home)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert outcome(summary, ONE_TASK) == outcome(first, ONE_TASK)
    assert our_containers(f"label=testjack.pid={pid}") == [], "the killed process's containers are swept"
