"""T0 runs in real containers on every world of the bundled demo (the Python tasks and the
JavaScript one), and every recorded official verdict reproduces, except the one trial planted
with a patch that no longer applies.

One Sandbox session for the module; the demo image and the world snapshots are built once and
every run starts a fresh container (testjack_tui.sandbox.verify.verify_task: prepare + run_tests).
It also verifies a twin: a copy of one trial under another id, its patch byte for byte the same,
which shares that trial's world and T0 run.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections import Counter

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.verify import verify_task

from conftest import DEMO

pytestmark = pytest.mark.podman

LABELS = json.loads((DEMO / "labels.json").read_text())["trials"]


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DEMO)


TWIN_OF = "parse-duration-compound__orca__2"


@pytest.fixture(scope="module")
def verified(bench, tmp_path_factory):
    """(results by task, the twin's verification, the Sandbox's container events, the execs the
    benchmark's own flow made)."""
    import testjack_tui.sandbox.official as official

    # The module fixture outlives the per-test TESTJACK_HOME, so give it its own.
    mp = pytest.MonkeyPatch()
    mp.setenv("TESTJACK_HOME", str(tmp_path_factory.mktemp("tj-home-demo")))
    execs = []
    real_exec = official.run_exec
    mp.setattr(official, "run_exec", lambda *a, **k: (execs.append(a[1]), real_exec(*a, **k))[1])
    original = next(t for t in bench.trials if t.id == TWIN_OF)
    twin = dataclasses.replace(original, id=f"{TWIN_OF}-twin")
    events = []

    def trials(task_id):
        return bench.trials_of(task_id) + ([twin] if task_id == original.task_id else [])

    async def run():
        async with Sandbox(session="demo-official", listener=events.append) as sb:
            results = await asyncio.gather(*(verify_task(sb, task, trials(task_id))
                                             for task_id, task in sorted(bench.tasks.items())))
        return {r.task_id: r for r in results}

    try:
        results = asyncio.run(run())
    finally:
        mp.undo()
    mine = results[original.task_id]
    twin_result = next(tv for tv in mine.trials if tv.trial_id == twin.id)
    mine.trials.remove(twin_result)
    return results, twin_result, events, execs


@pytest.fixture(scope="module")
def verification(verified):
    return verified[0]


def test_every_task_is_well_formed(verification, bench):
    assert set(verification) == set(bench.tasks)
    for task_id, result in verification.items():
        assert result.well_formed, (task_id, result.problems)
        assert result.problems == []
        assert result.reference_failures == [] and result.f2p_passing_on_null == []
        # every fail-to-pass test really fails on R
        assert all(result.null_statuses[i] != "passed" for i in bench.tasks[task_id].tests.fail_to_pass)


def test_recorded_verdicts_reproduce_except_the_planted_patch(verification, bench):
    planted = {tid for tid, entry in LABELS.items() if entry["label"] == "not_reproducible"}
    seen = set()
    for task_id, result in verification.items():
        for tv in result.trials:
            seen.add(tv.trial_id)
            if tv.trial_id in planted:
                assert tv.recorded_pass and tv.reproduced_pass is None and not tv.reproducible
                assert "does not apply" in tv.reason
            else:
                assert tv.reproducible, (tv.trial_id, tv.reason)
                assert tv.reproduced_pass == tv.recorded_pass
    assert seen == {t.id for t in bench.trials}
    assert len(planted) == 1


def test_officially_failing_trials_fail_for_real(verification):
    failing = [tv for r in verification.values() for tv in r.trials if not tv.recorded_pass]
    assert len(failing) >= 4
    assert all(tv.reproduced_pass is False and tv.failing for tv in failing)


def test_harness_edits_outside_t0_survive_the_official_reset(verification):
    # The trials that edit existing test files or add a conftest hook keep those edits in their
    # world: the evaluator only resets the files T0's patch touches.
    tampered = {tv.trial_id: tv for r in verification.values() for tv in r.trials if tv.tampered}
    harness = {tid for tid, e in LABELS.items() if e["label"] == "harness_tampering"}
    assert harness <= set(tampered)
    assert all(not tampered[tid].undone_by_t0 for tid in harness)


def test_a_t0_test_that_passes_on_null_is_reported_vacuous(verification):
    from testjack_tui.commands.verify_cmd import render

    # Ids as DeepSWE's grader writes them: one per parametrised case.
    assert {"tests.test_durations_compound.test_invalid[5x]", "tests.test_durations_compound.test_invalid[10]"} \
        <= set(verification["parse-duration-compound"].vacuous)
    assert "tests.test_durations.test_parse_rejects_garbage[h]" in verification["parse-duration-compound"].regression_guards
    # `verify` names it, with what vacuous means, not just a count.
    printed = render([verification["parse-duration-compound"]]).splitlines()
    assert "  vacuous: tests.test_durations_compound.test_invalid[5x] (added, changed or listed as " \
           "fail-to-pass by T0, yet already passes on the null world)" in printed


def test_t0_runs_through_each_tasks_own_flow_with_ids_in_the_graders_scheme(verification, bench):
    for task_id, result in verification.items():
        config = json.loads((DEMO / "tasks" / task_id / "tests" / "config.json").read_text())
        if bench.tasks[task_id].language == "python":  # DeepSWE's pytest frame: base.xml + new.xml
            assert config["grade"]["format"] == "junit" and len(config["grade"]["reports"]) == 2
        else:  # node --test through the task's own CTRF reporter: "<file>: <describe> > <title>"
            assert config["grade"]["format"] == "ctrf" and len(config["grade"]["reports"]) == 1
            assert all(re.fullmatch(r"test/[a-z.]+\.js: .+ > .+", i) for i in result.reference_statuses)
        assert result.flow == "official"
        assert list(result.reference_statuses) == config["f2p_node_ids"] + config["p2p_node_ids"]
        assert not any("::" in i for i in result.reference_statuses)
        # The task's own grader wrote a reward for every trial it judged, and it agrees with T0.
        judged = [tv for tv in result.trials if tv.reproduced_pass is not None]
        assert judged and all(tv.reward == (1.0 if tv.reproduced_pass else 0.0) for tv in judged)


def test_each_t0_run_is_one_container_without_an_exec_and_a_twin_patch_adds_none(verified, bench):
    """The benchmark's own flow runs as its container's main process: one container per world
    and T0 run, no exec. The twin's verdict is its original's, from the same world and run."""
    results, twin, events, execs = verified
    ran = Counter(world for world, _ in {(e.world, e.container) for e in events if e.kind == "running"})
    assert execs == []
    for task_id, result in results.items():
        for tv in result.trials:
            assert ran[f"{task_id}/model/{tv.trial_id}"] == (tv.reproduced_pass is not None), tv.trial_id
        assert ran[f"{task_id}/reference"] == 1
        assert ran[f"{task_id}/null"] <= 2  # the flow's run, and ours for ids its report left out
    task_id = next(t.task_id for t in bench.trials if t.id == TWIN_OF)
    original = next(tv for tv in results[task_id].trials if tv.trial_id == TWIN_OF)
    assert ran[f"{task_id}/model/{twin.trial_id}"] == 0
    assert twin.same_patch_as == TWIN_OF and original.same_patch_as == ""
    assert dataclasses.replace(twin, trial_id=TWIN_OF, same_patch_as="") == original
