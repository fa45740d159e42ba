"""JavaScript with Node's built-in runner (`node --test`) end to end with real podman on our
fixture (tests/fixtures/nodetest: a package of our own in DeepSWE's layout, ids
`<file>: <describe> > <title>` from the task's own CTRF reporter): verify reproduces the
recorded verdicts through the task's test.sh, a scripted audit confirms a witness
`.tj.test.js`, replays it and refutes the planted defect while the sound trial stays clean,
and the export runs through the task's own test.sh.

The Node toolchain image (Debian's nodejs + npm) is built once and cached; the fixture needs
nothing from npm. One audit session per test session
is shared, with test_lang_operator.py too (`lang_audits` in tests/conftest.py).
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli, export_check, export_runs_expected, grade_with_test_sh, logs_of_test_sh

# Under load the shared audit session alone can take minutes: a wider limit than the default.
pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

NODE = ROOT / "tests" / "fixtures" / "nodetest"
TASK = "parse-duration"
DEFECT, SOUND, FAILING = f"{TASK}__lumen__2", f"{TASK}__kestrel__1", f"{TASK}__orca__3"
WITNESS_ID = "test/bare.tj.test.js: reads a bare number as seconds"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-node-home")


@pytest.fixture(scope="module")
def audit(lang_audits) -> dict:
    """The session's scripted audit of the fixture (tests/conftest.py `lang_audits`), which
    test_lang_operator.py's case also reads: its summary.json."""
    return lang_audits("nodetest")["summary"]


@pytest.fixture(scope="module")
def audit_home(lang_audits) -> Path:
    return lang_audits("nodetest")["home"]


def test_list_names_the_node_test_runner(home):
    proc = cli("list", str(NODE), "--json", home=home, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert (task["language"], task["runner"]) == ("javascript", "node --test")


def test_verify_reproduces_recorded_verdicts(home):
    proc = cli("verify", str(NODE), "--json", home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert task["well_formed"], task["problems"]
    assert task["flow"] == "official"  # T0 through the task's own test.sh and grader
    assert task["null_statuses"]["test/duration.test.js: parseDuration > units > combines hours and minutes"] == "failed"
    trials = {t["trial_id"]: t for t in task["trials"]}
    assert all(t["reproducible"] for t in trials.values()), trials
    assert trials[FAILING]["reproduced_pass"] is False
    assert trials[FAILING]["failing"] == ["test/duration.test.js: parseDuration > units > combines hours and minutes"]


def test_scripted_audit_refutes_the_defect_and_keeps_the_sound_trial_clean(audit):
    trials = audit["tasks"][TASK]["trials"]
    assert trials[DEFECT]["state"] == "refuted" and trials[SOUND]["state"] == "clean"
    [refutation] = trials[DEFECT]["refutations"]
    assert "RangeError: not a duration: 90" in refutation["model"]["tests"]["test/bare.tj.test.js"]["message"]


def test_export_round_trips_through_the_tasks_own_test_sh(audit, audit_home, tmp_path):
    out = tmp_path / "export"
    before = logs_of_test_sh(audit_home)
    proc = cli("export", audit["session_id"], "--format", "harbor", "--out", str(out), home=audit_home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "export.json").read_text())["tasks"][TASK]
    assert summary["ok"] is True, summary["problems"]
    assert summary["added_f2p"] == [WITNESS_ID]
    tests_dir = out / TASK / "tests"
    assert WITNESS_ID in json.loads((tests_dir / "config.json").read_text())["f2p_node_ids"]
    # The export's own check ran this folder's test.patch and ids through the task's test.sh on
    # G and the refuted trial; the sound trial, which it did not run, is graded here: the
    # strengthened suite does not fail it.
    check = export_check(tests_dir)
    assert check["rewards"] == {"reference": 1, DEFECT: 0}
    assert len(logs_of_test_sh(audit_home) - before) == export_runs_expected(check)
    assert asyncio.run(grade_with_test_sh(NODE, TASK, tests_dir, [SOUND])) == {SOUND: 1}


def test_report_shows_the_lines_t0_never_ran_from_v8_coverage(audit, audit_home, tmp_path):
    # kestrel's checks for "" and for a bare number are right, and T0 never reaches them.
    out = tmp_path / "report"
    proc = cli("report", audit["session_id"], "--out", str(out), home=audit_home, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [md] = [p for p in out.rglob("report.md") if SOUND in str(p)]
    ghost = md.read_text().split("## Ghost branches", 1)[1]
    assert "% of added lines run under T0 (line coverage: V8 block counts" in ghost
    assert 'src/duration.js:8: `throw new RangeError("empty duration");`' in ghost
    assert "src/duration.js:11: `return Number(input);`" in ghost
