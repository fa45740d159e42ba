"""verify_task and `testjack-tui verify` against real podman, on a tiny task built in the test."""
from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.selftest import BASE_FILES, F2P, FIXED_CALC, P2P, T0_FILE, make_patch, tiny_task, trial_for
from testjack_tui.sandbox.verify import verify_task
from testjack_tui.cli import app
from testjack_tui.model import OfficialTests, Reference

pytestmark = pytest.mark.podman


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("verify"))


def trials_for(task):
    good = trial_for(task, "good", {"calc/__init__.py": FIXED_CALC}, official_pass=True, model="m1")
    wrong = trial_for(task, "wrong", {"calc/__init__.py": BASE_FILES["calc/__init__.py"].replace(
        "a - b\n\n\ndef sub", "a * b\n\n\ndef sub")}, official_pass=True, model="m2")
    failed = trial_for(task, "failed", {"calc/__init__.py": "def add(a, b):\n    return 0\n"},
                       official_pass=False, model="m2")
    broken = trial_for(task, "broken", {"calc/__init__.py": FIXED_CALC}, official_pass=True, model="m3")
    broken.patch = broken.patch.replace("def sub(a, b):", "def nothing_like_this():")
    return [good, wrong, failed, broken]


async def test_verify_task_reports_well_formedness_vacuous_tests_and_reproduction(task):
    progress = []
    async with Sandbox(session="t-verify") as sb:
        result = await verify_task(sb, task, trials_for(task), lambda what, done, total: progress.append((done, total)))
    assert result.well_formed and result.problems == []
    # The pre-existing pass-to-pass test passes on null: a regression guard, not a finding.
    assert result.vacuous == [] and result.regression_guards == list(P2P)
    assert result.f2p_passing_on_null == [] and result.reference_failures == []
    by_id = {t.trial_id: t for t in result.trials}
    assert by_id["good"].reproducible and by_id["good"].reproduced_pass is True
    assert not by_id["wrong"].reproducible and by_id["wrong"].reproduced_pass is False
    assert F2P[0] in by_id["wrong"].failing and "recorded pass" in by_id["wrong"].reason
    assert by_id["failed"].reproducible and by_id["failed"].reproduced_pass is False
    assert not by_id["broken"].reproducible and by_id["broken"].reproduced_pass is None
    assert "does not apply" in by_id["broken"].reason
    assert by_id["good"].recorded_pass is True  # recorded verdicts are kept as they were
    assert sorted(progress)[-1] == (6, 6)


async def test_verify_task_flags_an_ill_formed_task(tmp_path):
    # G fixes nothing and T0's fail-to-pass test already passes on null.
    bad_task = tiny_task(tmp_path, task_id="ill", reference=Reference(
        patch=make_patch({"README": None}, {"README": "docs\n"})))
    bad_task.tests = OfficialTests(
        test_patch=bad_task.tests.test_patch, fail_to_pass=F2P + P2P, pass_to_pass=(),
        test_files=bad_task.tests.test_files)
    async with Sandbox(session="t-verify-ill") as sb:
        result = await verify_task(sb, bad_task, [])
    assert not result.well_formed
    assert result.f2p_passing_on_null == list(P2P)
    assert set(result.reference_failures) == set(F2P)
    assert any("passes on the null world" in p for p in result.problems)
    assert any("G does not pass T0" in p for p in result.problems)


def write_harbor_benchmark(root, task):
    """A Harbor tasks/ + jobs/ folder for the tiny task, with two trials."""
    folder = root / "tasks" / "tiny"
    shutil.copytree(task.environment.context, folder / "environment")
    (folder / "task.toml").write_text('schema_version = "1.0"\n[task]\nname = "tiny"\n[environment]\nworkdir = "/app"\n')
    (folder / "instruction.md").write_text(task.instruction)
    (folder / "solution").mkdir()
    (folder / "solution" / "solution.patch").write_text(task.reference.patch)
    (folder / "tests").mkdir()
    (folder / "tests" / "test.patch").write_text(make_patch({"tests/test_add.py": None}, {"tests/test_add.py": T0_FILE}))
    (folder / "tests" / "config.json").write_text(json.dumps({"f2p_node_ids": list(F2P), "p2p_node_ids": list(P2P)}))
    for trial in trials_for(task)[:2] + trials_for(task)[3:]:
        out = root / "jobs" / "job1" / trial.id
        (out / "artifacts").mkdir(parents=True)
        (out / "artifacts" / "model.patch").write_text(trial.patch)
        (out / "result.json").write_text(json.dumps({
            "task_name": "tiny", "trial_name": trial.id,
            "agent_info": {"name": "agent", "version": "1", "model_info": {"name": trial.model, "provider": "x"}},
            "verifier_result": {"rewards": {"reward": 1.0 if trial.official_pass else 0.0}},
            "exception_info": None}))


def test_verify_command_prints_a_report_and_json(tmp_path, task):
    write_harbor_benchmark(tmp_path / "bench", task)
    runner = CliRunner()
    result = runner.invoke(app, ["verify", str(tmp_path / "bench")])
    assert result.exit_code == 0, result.output
    assert "tiny: well-formed; 0 vacuous T0 test(s); 1/3 recorded verdicts reproduce" in result.output
    assert "1 older pass-to-pass test(s) pass on the null world too" in result.output
    assert "not reproducible: broken" in result.output and "does not apply" in result.output
    result = runner.invoke(app, ["verify", str(tmp_path / "bench"), "--task", "tiny", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tasks"][0]["task_id"] == "tiny" and data["tasks"][0]["reproduced"] == 1
    assert {t["trial_id"]: t["reproducible"] for t in data["tasks"][0]["trials"]} == {
        "good": True, "wrong": False, "broken": False}


def test_verify_command_names_an_unknown_task(tmp_path, task):
    write_harbor_benchmark(tmp_path / "bench", task)
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "bench"), "--task", "nope"])
    assert result.exit_code == 2
    assert "--task" in result.output and "nope" in result.output
