"""JavaScript with mocha graded as DeepSWE's mocha tasks are (issue 29's test material): the
fixture (tests/fixtures/mocha: a package of our own in DeepSWE's layout, mocha and the real
mocha-ctrf-json-reporter from npm at image build) has a test.sh whose reporter writes the CTRF
report its grader reads, naming tests by mocha's fullTitle() (`<describe> <title>`). With real
podman, `list` names the runner that test.sh runs and `verify` reproduces the recorded verdicts
through that test.sh and CTRF report, reading the null world's statuses by the same names."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1200)]

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
