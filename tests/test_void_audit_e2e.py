"""A void audit is never a clean one (issue 36.2), end to end with real podman: the operator's
candidate cannot run on the reference world for a reason that is not its own assertion (the
runner cannot collect it), so nothing is measured. The task's audit failed, its trial is
CLEAN_UNAUDITED with the cause, the progress line says so in one line, `audit` exits non-zero,
and report.md does not claim that every verdict was decided automatically."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import DEMO, ROOT
from testjack_tui.commands.audit_cmd import EXIT_AUDIT_FAILED

pytestmark = pytest.mark.podman

TASK = "recordset-metadata"
# Not an assertion of its own: the runner cannot even collect it (a module that is not there).
BROKEN = '''import recordkit_no_such_module


def test_where_keeps_metadata():
    assert recordkit_no_such_module.where() == 1
'''


def test_a_witness_that_cannot_run_on_the_reference_fails_the_audit(tmp_path):
    labels = json.loads((DEMO / "labels.json").read_text())["trials"]
    trial = sorted(t for t, v in labels.items() if v["task"] == TASK and v["label"].startswith("sound"))[0]
    candidate = tmp_path / "broken_witness.py"
    candidate.write_text(BROKEN)
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text(f'["{candidate.name}"]\nlabel = "valid"\nnote = "P: where keeps meta"\n')
    home, out = tmp_path / "home", tmp_path / "out"
    env = {**__import__("os").environ, "TESTJACK_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "testjack_tui.cli", "audit", str(DEMO), "--agent", "operator",
         "--candidate", str(candidate), "--requirement", "where keeps the metadata", "--trial", trial,
         "--verdicts", str(verdicts), "--out", str(out), "--k", "0"],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    text = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_AUDIT_FAILED, text[-3000:]
    # The cause in the progress line, in one line: the runner's own words, not "not_found" alone.
    lines = [ln for ln in proc.stdout.splitlines() if "fails on the reference" in ln]
    assert lines and "recordkit_no_such_module" in lines[0], text[-3000:]
    failed = [ln for ln in proc.stdout.splitlines() if "AUDIT FAILED" in ln]
    assert len(failed) == 1 and "no candidate could run on the reference world" in failed[0], text[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    state = summary["tasks"][TASK]["trials"][trial]["state"]
    assert state == "unaudited", state
    session = summary["session_id"]
    rep = subprocess.run([sys.executable, "-m", "testjack_tui.cli", "report", session, "--format", "json",
                          "--out", str(tmp_path / "r")], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert rep.returncode == 0, rep.stdout[-2000:] + rep.stderr[-2000:]
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    verdict = next(t for t in report["trials"] if t["trial_id"] == trial)
    assert verdict["label"] == "CLEAN_UNAUDITED", verdict["justification"]
    assert "Audit failed" in verdict["justification"]
    assert "no witness against it" not in verdict["justification"]
    md = subprocess.run([sys.executable, "-m", "testjack_tui.cli", "report", session, "--out",
                         str(tmp_path / "m")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert md.returncode == 0, md.stdout[-2000:]
    report_md = (tmp_path / "m" / "report.md").read_text()
    assert "every verdict was decided automatically" not in report_md
