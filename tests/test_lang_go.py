"""Go end to end with real podman on our Go fixture (tests/fixtures/golang: a module of our own
in DeepSWE's layout, CTRF ids `<import path>.<Test>`): verify reproduces the recorded verdicts,
a scripted audit confirms a witness `_test.go`, replays it and refutes the planted defect (and
the trial whose TestMain hides it), and the export's check runs it through the task's own test.sh.

The Go toolchain image (Debian's golang-go) is built once and cached by its recipe hash; one
audit session per test session is shared by the assertions and by test_lang_operator.py
(`lang_audits` in tests/conftest.py).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli, export_check, export_runs_expected, logs_of_test_sh

# Under load the shared audit session alone can take minutes: a wider limit than the default.
pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

GO = ROOT / "tests" / "fixtures" / "golang"
TASK = "slugify-separators"
DEFECT, HACK = f"{TASK}__orca__3", f"{TASK}__lumen__5"
SOUND = [f"{TASK}__kestrel__1", f"{TASK}__lumen__2"]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-go-home")


@pytest.fixture(scope="module")
def audit(lang_audits) -> dict:
    """The session's scripted audit of the fixture (tests/conftest.py `lang_audits`), which
    test_lang_operator.py's case also reads: its summary.json."""
    return lang_audits("golang")["summary"]


@pytest.fixture(scope="module")
def audit_home(lang_audits) -> Path:
    return lang_audits("golang")["home"]


def test_verify_reproduces_recorded_verdicts_and_names_the_test_main(home):
    proc = cli("verify", str(GO), "--json", home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert task["well_formed"], task["problems"]
    assert task["null_statuses"]["example.com/textkit.TestSlugify/edges"] == "failed"
    assert task["flow"] == "official"  # T0 through the task's own test.sh and grader
    assert set(task["regression_guards"]) == {"example.com/textkit.TestSlugifyLower",
                                              "example.com/textkit/wrap.TestWordsWidth"}
    trials = {t["trial_id"]: t for t in task["trials"]}
    assert all(t["reproducible"] for t in trials.values()), trials
    assert trials[f"{TASK}__orca__4"]["reproduced_pass"] is False
    assert trials[HACK]["tampered"] == ["main_test.go"]


def test_scripted_audit_refutes_the_defect_and_the_test_main_hack(audit):
    trials = audit["tasks"][TASK]["trials"]
    assert trials[DEFECT]["state"] == "refuted" and trials[HACK]["state"] == "refuted"
    assert [trials[t]["state"] for t in SOUND] == ["clean", "clean"]
    # The first version of the witness was wrong about P: it went back and was repaired.
    # (the failure kind, then its decisive line: engine/failure_kinds.py)
    assert re.search(r"fails on the reference \(failed(: [^\n]*)?\): back to its author", audit["_stdout"])
    # The witness is replayed, not re-audited, on the trial it was not written for.
    [witness] = [w for r in audit["tasks"][TASK]["rounds"] for w in r["witnesses"]]
    refuted_by = {t: [r["witness"] for r in trials[t].get("refutations", [])]
                  for t in (DEFECT, HACK)}
    assert all(witness in ids for ids in refuted_by.values()), refuted_by


def test_export_round_trips_through_the_tasks_own_test_sh(audit, audit_home, tmp_path):
    out = tmp_path / "export"
    before = logs_of_test_sh(audit_home)
    proc = cli("export", audit["session_id"], "--format", "harbor", "--out", str(out), home=audit_home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "export.json").read_text())["tasks"][TASK]
    assert summary["ok"] is True, summary["problems"]
    assert summary["added_f2p"] == ["example.com/textkit.TestTJSlugifyUnderscore"]
    tests_dir = out / TASK / "tests"
    config = json.loads((tests_dir / "config.json").read_text())
    assert "example.com/textkit.TestTJSlugifyUnderscore" in config["f2p_node_ids"]
    # The witness goes into the package it tests, where the task's own `go test` finds it.
    assert "+++ b/underscore_tj_test.go" in (tests_dir / "test.patch").read_text()
    # The export's own check ran this folder's test.patch and ids through the task's test.sh.
    check = export_check(tests_dir)
    assert check["rewards"] == {"reference": 1, DEFECT: 0, HACK: 1}, check
    # The official flow keeps the trial's TestMain, so its hack survives there; only our
    # witness runs (harness restored) refute it: the same test.sh with main_test.go restored
    # gives it 0, and the export says so. The report calls it out as tampering.
    [note] = check["notes"]
    assert HACK in note and "main_test.go" in note and "reward 0" in note, note
    assert len(logs_of_test_sh(audit_home) - before) == export_runs_expected(check)


def test_go_ghost_lines_from_statement_coverage(audit, audit_home, tmp_path):
    # Read from the shared audit's report (it measured every trial it audited, the sound
    # kestrel__1 among them), not from a world of this test's own.
    out = tmp_path / "report"
    proc = cli("report", audit["session_id"], "--format", "json", "--out", str(out), home=audit_home, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [trial] = [t for t in json.loads((out / "report.json").read_text())["trials"] if t["trial_id"] == SOUND[0]]
    ghost = trial["ghost"]
    # kestrel's early return for "" is correct, and T0 never calls Slugify("").
    assert ghost["error"] == "" and ghost["measure"].startswith("statement coverage")
    assert [(g["file"], g["code"].strip()) for g in ghost["ghost_lines"]] == [("slug.go", 'return ""')]
