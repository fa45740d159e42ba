"""On the DeepSWE-layout fixture: an audit refutes the planted defect (a trial that rejects
space-separated components, which P allows and T0 never tries), and the export round-trips
through the task's own unmodified test.sh + grader (reward 1 on G, 0 on the refuted trial),
with the witness ids in the grader's classname.name scheme. Real podman; the reviewer is the
LLM path against the local fake OpenAI server."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from conftest import ROOT
from fake_openai_server import FakeOpenAIServer, Reply
from testjack_tui.sandbox import Sandbox

pytestmark = pytest.mark.podman

FIXTURE = Path(__file__).parent / "fixtures" / "deepswe"
TASK = "fixtures/fees-compound"
REQUIREMENT = "components of a compound duration may be separated by spaces"
WITNESS = '''from tallykit.fees import parse


def test_components_separated_by_spaces():
    assert parse("1h 30m") == 90
'''
REVIEW = {"label": "valid", "requirement": REQUIREMENT, "explicit": True,
          "quote": "and also separated by spaces, such as `1h 30m`",
          "reason": "P allows space-separated components", "overall": "KEEP_ALL",
          "cases": [{"test_id": "tests/test_tj_spaces.py::test_components_separated_by_spaces", "label": "VALID",
                     "scope": "in_scope", "overfitting": "none", "reason": "P gives `1h 30m` as an example"}]}
WITNESS_ID = "tests.test_fees.test_components_separated_by_spaces"


def run_cli(args, env, timeout=900):
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    home = tmp_path_factory.mktemp("tj-home")
    work = tmp_path_factory.mktemp("audit")
    witness = work / "spaces.py"
    witness.write_text(WITNESS)
    out = work / "out"
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", REVIEW)]))
        env = dict(os.environ, TESTJACK_HOME=str(home), OPENAI_BASE_URL=server.base_url,
                   OPENAI_API_KEY="test", TESTJACK_MODEL="fake-model")
        proc = run_cli(["audit", str(FIXTURE), "--agent", "operator", "--candidate", str(witness),
                        "--candidate-path", "tests/test_tj_spaces.py", "--requirement", REQUIREMENT,
                        "--trial", "fees-compound__nospace", "--reviewer", "openai", "--auto-approve",
                        "--headless", "--out", str(out)], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    return home, work, summary, env


def test_the_audit_refutes_the_planted_defect_and_not_the_sound_trial(audited):
    _, _, summary, _ = audited
    trials = summary["tasks"][TASK]["trials"]
    assert trials["fees-compound__nospace"]["state"] == "refuted"
    assert trials["fees-compound__good"]["state"] != "refuted"


def test_the_export_round_trips_through_the_tasks_own_grader(audited):
    home, work, summary, env = audited
    out = work / "export"
    proc = run_cli(["export", summary["session_id"], "--format", "harbor", "--out", str(out)], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "checked ok" in proc.stdout
    [config_file] = out.glob("*/tests/config.json")  # the folder is named after the task id, made safe
    tests_dir = config_file.parent
    config = json.loads((tests_dir / "config.json").read_text())
    assert WITNESS_ID in config["f2p_node_ids"]  # the grader's scheme, fail-to-pass on R
    check = json.loads((tests_dir / "testjack_check.json").read_text())
    assert check["rewards"] == {"reference": 1.0, "fees-compound__nospace": 0.0}
    # The exported folder is a drop-in task: verify it as a user would, its test.sh untouched.
    original = FIXTURE / "tasks" / "fees-compound"
    assert (tests_dir / "test.sh").read_bytes() == (original / "tests" / "test.sh").read_bytes()
    bench = load_benchmark(FIXTURE)
    task = bench.tasks[TASK]
    from testjack_tui.engine.export_official import exported_task

    exported = exported_task(task, tests_dir, (tests_dir / "test.patch").read_text(),
                             config["f2p_node_ids"], config["p2p_node_ids"])
    nospace = next(t for t in bench.trials if t.id == "fees-compound__nospace")

    async def judge():
        async with Sandbox(session="t-export-roundtrip") as sb:
            return await asyncio.gather(sb.run_official(exported, "reference"),
                                        sb.run_official(exported, "model", nospace))
    ref_run, trial_run = asyncio.run(judge())
    assert ref_run.reward == 1.0 and ref_run.status(WITNESS_ID) == "passed"
    assert trial_run.reward == 0.0 and trial_run.status(WITNESS_ID) == "failed"
