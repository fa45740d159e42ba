"""T0 through the benchmark's own verifier flow, on the DeepSWE-layout fixture benchmark
(tests/fixtures/deepswe: our own tallykit repo, JUnit classname.name ids, a separate verifier
environment, a T0 that does not collect on R). Real podman."""
from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from testjack_tui.sandbox.test_ids import junit_to_pytest
from testjack_tui.cli import app
from testjack_tui.commands.verify_cmd import render
from testjack_tui.services.verification import verification_from_dict

pytestmark = pytest.mark.podman

FIXTURE = Path(__file__).parent / "fixtures" / "deepswe"


@pytest.fixture(scope="module")
def verified(deepswe_verified):
    """The session's one local verify of the fixture (tests/conftest.py; test_ray_backend reads it too)."""
    bench, results = deepswe_verified
    return bench, {task_id.split("/")[-1]: r for task_id, r in results.items()}


def test_every_fixture_task_is_well_formed_and_every_recorded_verdict_reproduces(verified):
    bench, results = verified
    for name, res in results.items():
        assert res.well_formed, (name, res.problems)
        assert res.flow == "official"
        assert res.reproduced == len(res.trials) == len(bench.trials_of(res.task_id))
    trials = {t.trial_id: t for r in results.values() for t in r.trials}
    assert trials["fees-compound__good"].reward == 1.0
    assert trials["fees-compound__hardcoded"].reward == 0.0 and not trials["fees-compound__hardcoded"].reproduced_pass


def test_ids_stay_in_the_benchmark_scheme(verified):
    bench, results = verified
    res = results["fees-compound"]
    config = json.loads((FIXTURE / "tasks" / "fees-compound" / "tests" / "config.json").read_text())
    assert list(res.reference_statuses) == config["f2p_node_ids"] + config["p2p_node_ids"]
    assert set(res.reference_statuses.values()) == {"passed"}
    assert res.null_statuses["tests.test_fees.test_parse[1h30m-90]"] == "failed"
    assert res.null_statuses["tests.test_fees.TestCompound.test_hours_minutes"] == "failed"


def test_vacuous_findings_are_new_tests_passing_on_r_and_old_ones_are_guards(verified):
    _, results = verified
    res = results["fees-compound"]
    assert res.vacuous == ["tests.test_fees.test_rejects_empty",
                           "tests.test_fees.TestCompound.test_rejects_unit_without_number"]
    assert "tests.test_fees.TestFormat.test_hours" in res.regression_guards
    assert "tests.test_convert.test_table_to_text" in res.regression_guards


def test_the_null_world_sees_tests_a_collection_error_hid_from_the_benchmarks_report(verified):
    _, results = verified
    res = results["rates-cheapest"]
    assert res.null_statuses["tests.test_rates.test_cheapest"] == "error"
    assert res.null_statuses["tests.test_convert.test_table_to_text"] == "passed"
    assert res.regression_guards == ["tests.test_fees.TestFormat.test_hours", "tests.test_fees.test_parse[2h-120]",
                                     "tests.test_convert.test_table_to_text"]


def test_verify_prints_one_line_per_world_when_ids_match_nothing(tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(FIXTURE, bench, ignore=shutil.ignore_patterns("jobs"))
    (bench / "jobs").mkdir()
    config_path = bench / "tasks" / "convert-roundtrip" / "tests" / "config.json"
    config = json.loads(config_path.read_text())
    # Ids written as pytest node ids, which this task's JUnit grader never produces.
    config["f2p_node_ids"] = [junit_to_pytest(i, ["tests/test_convert.py"]) for i in config["f2p_node_ids"]]
    config_path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["verify", str(bench), "--task", "convert-roundtrip"])
    assert result.exit_code == 1, result.output  # not well-formed: verify fails (issue 36.3)
    # The pass-to-pass ids still match: the two unmatched ones are named, as missing from report.
    assert "G does not pass T0: 2 test(s) not passing on the reference world" in result.output
    assert "missing from report" in result.output
    # No id matches anything, in either scheme.
    config["f2p_node_ids"] = [i + "_renamed" for i in config["f2p_node_ids"]]
    config["p2p_node_ids"] = [i + "_renamed" for i in config["p2p_node_ids"]]
    config_path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["verify", str(bench), "--task", "convert-roundtrip", "--json"])
    data = json.loads(result.stdout)["tasks"][0]
    assert not data["well_formed"]
    assert set(data["diagnoses"]) == {"null", "reference"}
    assert data["diagnoses"]["null"].startswith("null world: no T0 test produced a result: none of T0's 5 ids "
                                               "matches any of the")
    assert len(data["problems"]) == 2
    # The text `verify` prints for these same results, rendered from the JSON run above (the
    # TUI shows kept results the same way) rather than from a second verify of the same worlds.
    text = render([verification_from_dict(data)])
    assert sum("no T0 test produced a result" in line for line in text.splitlines()) == 2
    assert "G does not pass T0 test" not in text


def test_witness_and_agent_runs_take_t0_ids_in_the_benchmark_scheme(verified):
    """An agent (or a witness run) naming T0 tests the way config.json does gets their real
    outcomes, keyed by the ids it gave, in a fresh container and in a live one."""
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.agents.tools import format_test_run

    bench, _ = verified
    task = next(t for t in bench.tasks.values() if t.id.endswith("fees-compound"))
    ids = ["tests.test_fees.TestCompound.test_hours_minutes", "tests.test_fees.test_parse[1h30m-90]",
           "tests.test_fees.TestFormat", "tests.test_fees.test_no_such_test"]

    async def runs():
        async with Sandbox(session="junit-ids", concurrency=1) as sb:
            ref = await sb.prepare(task, "reference")  # snapshots the verify above already built
            null = await sb.prepare(task, "null")
            fresh = await sb.run_tests(ref, ids, timeout=300)
            async with sb.open(null) as live:
                agent = await live.run_tests(ids[:2], timeout=300)
            return fresh, agent

    fresh, agent = asyncio.run(runs())
    assert {i: fresh.outcomes[i].status for i in ids} == {
        ids[0]: "passed", ids[1]: "passed", ids[2]: "passed", ids[3]: "not_found"}
    # The class is answered through its cases too, named in the scheme it was asked in.
    assert fresh.outcomes["tests.test_fees.TestFormat.test_negative"].status == "passed"
    assert not any("::" in i for i in fresh.outcomes)
    assert {i: o.status for i, o in agent.outcomes.items()} == {ids[0]: "failed", ids[1]: "failed"}
    shown = format_test_run(agent, "null")
    assert "tests.test_fees.TestCompound.test_hours_minutes" in shown and "::" not in shown


def test_a_spinning_trial_is_stopped_by_its_cpu_time_limit_in_the_benchmarks_own_flow(verified):
    """The task's own test.sh runs trial code too: each of its processes gets the run's CPU-time
    limit, so a trial that spins at import frees its slot long before the verifier's timeout
    (300 s here), and the benchmark's grader still gives it reward 0."""
    import dataclasses

    from testjack_tui.model import Trial
    from testjack_tui.sandbox import Limits, Sandbox
    from testjack_tui.sandbox.selftest import make_patch

    bench, _ = verified
    task = next(t for t in bench.tasks.values() if t.id.endswith("fees-compound"))
    source = (FIXTURE / "environment" / "repo" / "tallykit" / "fees.py").read_text()
    hog = Trial(id="fees-compound__spin", task_id=task.id, agent="agent", model="model-a",
                patch=make_patch({"tallykit/fees.py": source},
                                 {"tallykit/fees.py": "while True:\n    pass\n" + source}), official_pass=True)
    limits = dataclasses.replace(Limits(), cpu_share=0.001, min_cpu_seconds=2)

    async def run():
        async with Sandbox(session="official-cpu", limits=limits) as sb:
            return await sb.run_official(task, "model", hog)

    run = asyncio.run(run())
    assert task.tests.evaluator.timeout_sec == 300.0
    # stopped by its CPU-time limit (SIGXCPU), not by the evaluator's 300 s timeout
    assert not run.exec.timed_out, run.exec.output[-1500:]
    assert run.reward == 0.0
    assert not any(run.status(i) == "passed" for i in task.tests.fail_to_pass)


NO_PYTHON_TEST_SH = """#!/bin/bash
# A verifier flow without python: apply the patch, grade with grep, write JUnit and the reward.
mkdir -p /logs/verifier
cd /app
[ -s /logs/artifacts/model.patch ] && git apply /logs/artifacts/model.patch
if grep -q "return a + b" calc/__init__.py; then case='<testcase classname="shell" name="adds"/>'; reward=1
else case='<testcase classname="shell" name="adds"><failure/></testcase>'; reward=0; fi
printf '<testsuite>%s</testsuite>\\n' "$case" > /logs/verifier/junit.xml
echo "$reward" > /logs/verifier/reward.txt
"""


def test_an_image_without_python_runs_the_flow_as_an_exec_and_learns_it_once(tmp_path, monkeypatch):
    """The flow's wrapper needs python3 to be a container's main process: in an image without
    it the first run finds out (one container that never reached its gate), then runs as an
    exec the plain way; the session's later runs take the exec at once."""
    from testjack_tui.model import Evaluator, OfficialTests
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.selftest import FIXED_CALC, tiny_task, trial_for

    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(NO_PYTHON_TEST_SH)
    evaluator = Evaluator(kind="harbor", tests_dir=tests, reports=("/logs/verifier/junit.xml",), timeout_sec=120)
    task = tiny_task(tmp_path, "no-python", tests=OfficialTests(fail_to_pass=("shell.adds",), evaluator=evaluator))
    containerfile = task.environment.containerfile
    containerfile.write_text(containerfile.read_text() + "RUN rm -f /usr/bin/python3 /usr/bin/python3.*\n")
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    events = []

    async def runs():
        async with Sandbox(session="official-no-python", listener=events.append) as sb:
            fixed = await sb.run_official(task, "model", trial)
            after = len({e.container for e in events if e.kind == "created"})
            null = await sb.run_official(task, "null")
            return fixed, after, null

    fixed, first_containers, null = asyncio.run(runs())
    assert fixed.reward == 1.0 and fixed.status("shell.adds") == "passed", fixed.exec.output[-1500:]
    assert null.reward == 0.0 and null.status("shell.adds") == "failed", null.exec.output[-1500:]
    assert first_containers == 2  # the wrapper that never reached its gate, then the exec's
    assert len({e.container for e in events if e.kind == "created"}) == 3
