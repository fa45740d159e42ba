"""JavaScript with mocha graded as DeepSWE's mocha tasks are (issue 29's test material): the
fixture (tests/fixtures/mocha: a package of our own in DeepSWE's layout, mocha and the real
mocha-ctrf-json-reporter from npm at image build) has a test.sh whose reporter writes the CTRF
report its grader reads, naming tests by mocha's fullTitle() (`<describe> <title>`). With real
podman, `list` names the runner that test.sh runs, `verify` reproduces the recorded verdicts
through that test.sh and CTRF report, reading the null world's statuses by the same names, and
an operator's mocha witness refutes the planted defect and exports under the reporter's names."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli, export_check

# A whole operator audit under load can take many minutes: the limit test_lang_operator has.
pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

MOCHA = ROOT / "tests" / "fixtures" / "mocha"
TASK = "clamp-bounds"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-mocha-home")


def test_list_names_the_mocha_runner(home):
    proc = cli("list", str(MOCHA), "--json", home=home, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert (task["language"], task["runner"]) == ("javascript", "mocha")


def test_verify_reads_the_ctrf_report_of_mocha_ctrf_json_reporter(home):
    proc = cli("verify", str(MOCHA), "--json", home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [task] = json.loads(proc.stdout)["tasks"]
    assert task["well_formed"], task["problems"]
    assert task["flow"] == "official"  # T0 through the task's own test.sh and grader
    assert task["null_statuses"]["clamp accepts reversed bounds"] == "failed"
    assert task["null_statuses"]["clamp keeps values inside the range"] == "passed"
    trials = {t["trial_id"]: t for t in task["trials"]}
    assert set(trials) == {f"{TASK}__kestrel__1", f"{TASK}__lumen__2"}
    assert all(t["reproducible"] and t["reproduced_pass"] for t in trials.values()), trials


def test_an_operator_witness_refutes_and_exports_in_mochas_ctrf_names(home, tmp_path):
    """The export's added id is the name mocha-ctrf-json-reporter gave the witness on G
    (fullTitle), and the exported task's own test.sh gives G 1 and the refuted trial 0 (the
    export's check; test_lang_operator's jest case grades a written CTRF export itself)."""
    defect = f"{TASK}__lumen__2"
    mine = tmp_path / "nan.js"
    shutil.copyfile(MOCHA / "agent-scripts" / TASK / "candidates" / "au_nan_v1.js", mine)
    out = tmp_path / "audit"
    proc = cli("audit", str(MOCHA), "--agent", "operator", "--candidate", str(mine), "--trial", defect,
               "--reviewer", "scripted", "--auto-approve", "--headless", "--out", str(out), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"][TASK]["trials"][defect]["state"] == "refuted", proc.stdout[-3000:]
    export = tmp_path / "export"
    logs = home / "cache" / "logs"  # one log per run of the task's own test.sh (`t0-...`)
    before = {p.name for p in logs.glob("*-t0-*")}
    proc = cli("export", summary["session_id"], "--format", "harbor", "--out", str(export), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [config_file] = export.glob("*/tests/config.json")
    config = json.loads(config_file.read_text())
    assert config["testjack"]["checked"] is True, proc.stdout
    assert config["testjack"]["added_f2p"] == ["clamp with a NaN bound throws a RangeError"]
    # The export's own check ran this folder's test.patch and ids through the task's test.sh.
    check = export_check(config_file.parent)
    assert check["rewards"] == {"reference": 1, defect: 0}
    # test.sh ran on G with the witnesses, on R, on G again with the ids mocha gave them (not our
    # runner's, which the first run used) and on the refuted trial (and on it with its harness
    # files restored, were it noted); G without the witnesses is the audit's own run of T0 there.
    runs = {p.name for p in logs.glob("*-t0-*")} - before
    assert len(runs) == 4 + len(check.get("notes") or []), sorted(runs)
