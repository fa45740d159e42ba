"""TypeScript (vitest) end to end with real podman on our fixture (tests/fixtures/typescript: a
package of our own in DeepSWE's layout, vitest ids `<file>: <describe> > <title>`): verify
reproduces the recorded verdicts, a scripted audit confirms a witness `.tj.test.ts`, replays it
and refutes the planted defect (and the trial whose vitest setup file hides it), and the export
runs through the task's own test.sh.

The Node toolchain image (Debian's nodejs + npm) is built once and cached; the fixture's image
installs vitest from npm at build time. One audit session per test session
is shared, with test_lang_operator.py too (`lang_audits` in tests/conftest.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli, export_check, export_runs_expected, logs_of_test_sh

# Under load the shared audit session alone can take minutes: a wider limit than the default.
pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

TS = ROOT / "tests" / "fixtures" / "typescript"
TASK = "query-parse"
DEFECT, HACK, SOUND = f"{TASK}__lumen__2", f"{TASK}__lumen__4", f"{TASK}__kestrel__1"
WITNESS_ID = "test/plus.tj.test.ts: decodes + as a space in keys and values"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-ts-home")


@pytest.fixture(scope="module")
def audit(lang_audits) -> dict:
    """The session's scripted audit of the fixture (tests/conftest.py `lang_audits`), which
    test_lang_operator.py's case also reads: its summary.json."""
    return lang_audits("typescript")["summary"]


@pytest.fixture(scope="module")
def audit_home(lang_audits) -> Path:
    return lang_audits("typescript")["home"]


def test_verify_reproduces_recorded_verdicts_and_names_the_config_change(home):
    proc = cli("verify", str(TS), "--json", home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert task["well_formed"], task["problems"]
    assert task["flow"] == "official"  # T0 through the task's own test.sh and grader
    assert task["null_statuses"]["test/query.test.ts: parseQuery > decoding > strips a leading question mark"] == "failed"
    trials = {t["trial_id"]: t for t in task["trials"]}
    assert all(t["reproducible"] for t in trials.values()), trials
    assert trials[f"{TASK}__orca__3"]["reproduced_pass"] is False
    assert trials[HACK]["tampered"] == ["vitest.config.ts"]


def test_scripted_audit_refutes_the_defect_and_the_setup_file_hack(audit):
    trials = audit["tasks"][TASK]["trials"]
    assert trials[DEFECT]["state"] == "refuted" and trials[HACK]["state"] == "refuted"
    assert trials[SOUND]["state"] == "clean"


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
    # G and on every trial the witness refuted (a trial keeping reward 1 there only through its
    # own vitest setup file is noted, with 0 once that file is restored: `ok` holds it).
    check = export_check(tests_dir)
    assert check["rewards"]["reference"] == 1 and check["rewards"][DEFECT] == 0, check["rewards"]
    # G without the witnesses is the audit's own run of T0 there, not run again.
    assert len(logs_of_test_sh(audit_home) - before) == export_runs_expected(check)
