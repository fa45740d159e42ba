"""Rust end to end with real podman on our fixture (tests/fixtures/rust: a crate of our own with
no dependencies in DeepSWE's layout, nextest-style ids `<package>::<target>: <test>`): verify
reproduces the recorded verdicts, a scripted audit confirms a witness integration test
`tests/tj_*.rs`, replays it, refutes the planted defect, and the export runs through the task's
own test.sh. The Rust toolchain image (Debian's rustc + cargo) is built once and cached. One audit
session per test session is shared, with test_lang_operator.py too (`lang_audits` in
tests/conftest.py).
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

RS = ROOT / "tests" / "fixtures" / "rust"
TASK = "roman-numerals"
DEFECT, SOUND = f"{TASK}__lumen__2", f"{TASK}__kestrel__1"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-rust-home")


@pytest.fixture(scope="module")
def audit(lang_audits) -> dict:
    """The session's scripted audit of the fixture (tests/conftest.py `lang_audits`), which
    test_lang_operator.py's case also reads: its summary.json."""
    return lang_audits("rust")["summary"]


@pytest.fixture(scope="module")
def audit_home(lang_audits) -> Path:
    return lang_audits("rust")["home"]


def test_verify_reproduces_recorded_verdicts(home):
    proc = cli("verify", str(RS), "--json", home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert task["well_formed"], task["problems"]
    assert task["flow"] == "official"  # T0 through the task's own test.sh and grader
    assert task["null_statuses"]["numerals::convert: subtractive_forms"] == "failed"
    trials = {t["trial_id"]: t for t in task["trials"]}
    assert all(t["reproducible"] for t in trials.values()), trials
    assert trials[f"{TASK}__orca__3"]["reproduced_pass"] is False


def test_scripted_audit_refutes_the_defect_and_keeps_the_sound_trial(audit):
    trials = audit["tasks"][TASK]["trials"]
    assert trials[DEFECT]["state"] == "refuted"
    assert trials[SOUND]["state"] == "clean"


def test_export_round_trips_through_the_tasks_own_test_sh(audit, audit_home, tmp_path):
    out = tmp_path / "export"
    before = logs_of_test_sh(audit_home)
    proc = cli("export", audit["session_id"], "--format", "harbor", "--out", str(out), home=audit_home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "export.json").read_text())["tasks"][TASK]
    assert summary["ok"] is True, summary["problems"]
    # Without G, to_roman is a stub returning None: the range test already passes there
    # (pass-to-pass), the top-of-range test does not (fail-to-pass). The witness file's target
    # may carry a suffix derived from the candidate id when an earlier audit used the same name.
    [f2p], [p2p] = summary["added_f2p"], summary["added_p2p"]
    assert re.fullmatch(r"numerals::tj_range(_[a-z0-9_]+)?: top_of_the_range", f2p), f2p
    assert re.fullmatch(r"numerals::tj_range(_[a-z0-9_]+)?: above_the_range_has_no_numeral", p2p), p2p
    # The export's own check ran this folder's test.patch and ids through the task's test.sh: G
    # once more, since the final ids (one pass-to-pass) are not those its probe ran G with; G
    # without the witnesses is the audit's own run of T0 there, not run again.
    check = export_check(out / TASK / "tests")
    assert check["rewards"] == {"reference": 1, DEFECT: 0}
    assert len(logs_of_test_sh(audit_home) - before) == export_runs_expected(check, ids_differ=True)
