"""No-reference mode: audits against an independent implementation G′ when a task has no G."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from testjack_tui.engine.approval import approver_for
from testjack_tui.engine.no_reference import IndependentReference, patch_from_files
from testjack_tui.engine.report import INDEPENDENT_BAND, mark_independent
from testjack_tui.engine.report_model import TrialReport

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "benchmarks" / "demo"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def test_patch_from_whole_files_applies_with_git(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("A = 1\nB = 2\n")
    (repo / "pkg" / "tail.py").write_text("x = 1")  # no newline at the end
    _git(repo, "init", "-q")
    files = {"pkg/mod.py": "A = 1\nB = 3\n", "pkg/new.py": "def f():\n    return 1\n",
             "pkg/tail.py": "x = 2"}
    base = {"pkg/mod.py": "A = 1\nB = 2\n", "pkg/new.py": None, "pkg/tail.py": "x = 1"}
    patch = patch_from_files(base, files)
    (tmp_path / "g.patch").write_text(patch)
    _git(repo, "apply", "--check", str(tmp_path / "g.patch"))
    _git(repo, "apply", str(tmp_path / "g.patch"))
    for path, text in files.items():
        assert (repo / path).read_text() == text
    assert patch_from_files({"a.py": "same\n"}, {"a.py": "same\n"}) == ""


def test_independent_verdicts_are_marked_and_in_a_lower_band(tmp_path):
    trial = TrialReport("t/1", "t/1__a", "m", "a", "INCORRECT_DESPITE_PASS", 0.9, "Refuted.")
    mark_independent(trial, None, tmp_path)
    assert trial.reference == "benchmark" and trial.confidence == 0.9
    mark_independent(trial, IndependentReference(True, "..."), tmp_path)
    data = trial.to_json()  # what the trial's report.json says
    assert data["reference"] == "independent"
    assert data["confidence"] == round(0.9 * INDEPENDENT_BAND, 2) <= INDEPENDENT_BAND
    assert "independent implementation G′" in data["justification"]
    from testjack_tui.safe_paths import path_part

    assert str(tmp_path / "independent-references" / f"{path_part('t/1')}.patch") in data["justification"]


def test_verdicts_resting_on_g_prime_go_to_the_operator_when_one_is_there():
    auto, queue = object(), object()
    env = SimpleNamespace(approver=auto, operator_approver=queue, independent_tasks={"t-noref"})
    assert approver_for(env, "t-noref") is queue
    assert approver_for(env, "t-with-g") is auto
    headless = SimpleNamespace(approver=auto, operator_approver=None, independent_tasks={"t-noref"})
    assert approver_for(headless, "t-noref") is auto


def _cli(*args: str, timeout: int = 1200, home: Path | None = None) -> subprocess.CompletedProcess:
    env = None if home is None else dict(os.environ, TESTJACK_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
def test_demo_task_audited_without_its_reference(demo_lightweight_audit, tmp_path, monkeypatch):
    """parse-duration-compound with G ignored: the scripted implementer's first G′ fails T0, the
    second passes; the task-analysis witnesses are validated on G′ and refute defective trials
    only; every verdict is marked and G′ is kept beside the session. Runs on worlds without G
    (null, every trial's) are the same runs as the shared lightweight demo audit's (same
    snapshot, tests and files): taken from it (`--reuse-runs`, tests/conftest.py); every run on
    G′ is this session's own."""
    out, home = tmp_path / "out", demo_lightweight_audit["home"]
    proc = _cli("audit", str(DEMO), "--headless", "--auto-approve", "--agent", "scripted", "--seed", "0",
                "--task", "parse-duration-compound", "--no-reference", "--rounds", "0",
                "--reuse-runs", demo_lightweight_audit["session_id"], "--out", str(out), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "independent implementation G′ that passes T0 (attempt 2)" in proc.stdout
    session = json.loads((out / "summary.json").read_text())["session_id"]
    rep = tmp_path / "rep"
    proc = _cli("report", session, "--format", "json", "--out", str(rep), timeout=300, home=home)
    assert proc.returncode == 0, proc.stderr[-2000:]
    trials = {t["trial_id"]: t for t in json.loads((rep / "report.json").read_text())["trials"]}
    labels = json.loads((DEMO / "labels.json").read_text())["trials"]
    refuted = {tid for tid, t in trials.items() if t["refuted"]}
    assert refuted, "the task-analysis witnesses validated on G′ refute nothing"
    for tid in refuted:
        assert labels[tid]["mode_group"], f"{tid} is labelled sound but was refuted against G′"
    for t in trials.values():
        assert t["reference"] == "independent" and t["confidence"] <= INDEPENDENT_BAND
    g_prime = Path(trials[next(iter(refuted))]["justification"].rsplit("G′: ", 1)[1].rstrip("."))
    assert g_prime.is_file() and "+UNITS = " in g_prime.read_text()
    from testjack_tui.engine.store import SessionStore, db_path

    monkeypatch.setenv("TESTJACK_HOME", str(home))
    runs = {}
    for sid in (session, demo_lightweight_audit["session_id"]):
        store = SessionStore(db_path(sid))
        runs[sid] = {r.key: r.world for r in store.runs()}
        store.close()
    mine, lent = runs[session], runs[demo_lightweight_audit["session_id"]]
    assert mine.keys() & lent.keys(), "no run of a world without G was taken from the lender"


@pytest.mark.podman
def test_task_without_a_recorded_implementer_is_excluded_with_one_reason(tmp_path):
    out = tmp_path / "out"
    proc = _cli("audit", str(DEMO), "--headless", "--auto-approve", "--agent", "scripted",
                "--task", "cache-async-memoize", "--no-reference", "--rounds", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    lines = [line for line in proc.stdout.splitlines() if "excluded:" in line]
    assert len(lines) == 1
    assert "no independent implementation G′ could be written" in lines[0]
    assert "independent.json" in lines[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"]["cache-async-memoize"]["well_formed"] is False
