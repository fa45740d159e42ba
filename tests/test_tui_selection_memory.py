"""The Selection screen keeps its settings, picks and verify results between visits and between
runs of the app, and lists the vacuous tests by name (Pilot; verify's containers are replaced by
a canned result: the real verify is covered in test_verify.py and test_demo_official.py)."""
from __future__ import annotations

import json
import time

import pytest
from conftest import DEMO
from textual.widgets import Checkbox, DataTable, Input, Select, Static
from tui_wait import wait_for

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox.verify import TaskVerification, TrialVerification, report_lines
from testjack_tui.tui import selection_memory
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.benchmarks import BenchmarksScreen
from testjack_tui.tui.screens.inspect import ReportTextScreen
from testjack_tui.tui.screens.selection import SelectionScreen

VACUOUS = "tests.test_durations_compound.test_invalid[5x]"  # as the demo's grader writes it
TASK = "parse-duration-compound"


def canned(task, trials) -> TaskVerification:
    """What verify_task returns for the demo task whose T0 has a vacuous test."""
    return TaskVerification(
        task_id=task.id, well_formed=True, flow="official",
        vacuous=[VACUOUS] if task.id == TASK else [],
        trials=[TrialVerification(t.id, t.model, t.official_pass, t.official_pass, True) for t in trials])


@pytest.fixture
def fake_verify(monkeypatch):
    class NoContainers:
        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return False

    async def verify_task(sb, task, trials, on_progress=None):
        for t in trials:
            on_progress(f"{task.id}: trial {t.id}", 0, 0)
        return canned(task, trials)

    monkeypatch.setattr("testjack_tui.sandbox.backend.make_backend", lambda *a, **k: NoContainers())
    monkeypatch.setattr("testjack_tui.sandbox.verify.verify_task", verify_task)


async def open_demo(pilot, app) -> SelectionScreen:
    app.screen.open_path(str(DEMO))
    await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen))
    await pilot.pause()
    return app.screen


def detail_text(screen) -> str:
    return str(screen.query_one("#verify-detail", Static).render())


async def test_settings_picks_and_verify_results_survive_leaving_and_restarting(fake_verify):
    bench = load_benchmark(DEMO)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_demo(pilot, app)
        await wait_for(pilot, lambda: "Not verified yet" in detail_text(screen), what="the task's verify detail")
        # Pick: leave the first task out; verify the rest.
        first = screen.current_task
        await pilot.press("space")
        await pilot.press("v")
        await wait_for(pilot, lambda: not screen.verifying and len(screen.verification) == len(bench.tasks) - 1)
        assert first not in screen.verification
        # Settings: typed, chosen and switched.
        await pilot.press("f3")
        screen.query_one("#rounds", Input).value = "7"
        screen.query_one("#sampler", Select).value = "cluster"
        screen.query_one("#step", Checkbox).value = True
        await pilot.pause()
        await pilot.press("escape")  # leave the field, then the screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchmarksScreen))

        # Second visit in the same run: everything is as it was left.
        screen = await open_demo(pilot, app)
        assert screen.query_one("#rounds", Input).value == "7"
        assert screen.query_one("#sampler", Select).value == "cluster"
        assert screen.query_one("#step", Checkbox).value is True
        assert first not in screen.selected_tasks
        table = screen.query_one("#task-table", DataTable)
        n = len(bench.trials_of(TASK))
        assert table.get_row(TASK)[0] == "●" and table.get_row(TASK)[5] == f"ok {n}/{n}, 1 vacuous"
        assert table.get_row(first)[0] == "○" and table.get_row(first)[5] == "—"
        assert set(screen.verification) == set(bench.tasks) - {first}

    # A new run of the app (the same data folder): still there, vacuous test named.
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_demo(pilot, app)
        assert screen.query_one("#rounds", Input).value == "7"
        assert screen.read_form().sampler == "cluster" and screen.read_form().step
        assert first not in screen.selected_tasks
        table = screen.query_one("#task-table", DataTable)
        table.move_cursor(row=screen.task_ids.index(TASK))
        await wait_for(pilot, lambda: screen.current_task == TASK, what=f"{TASK} under the cursor")
        await wait_for(pilot, lambda: "1 vacuous: " + VACUOUS in detail_text(screen), what="the vacuous test named")
        assert "just now" in detail_text(screen)
        # The whole report, with the vacuous test by name and what vacuous means.
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportTextScreen))
        report = app.screen.text
        assert f"vacuous: {VACUOUS} (added, changed or listed as fail-to-pass by T0" in report
        assert report.splitlines()[0].startswith(f"{TASK}: well-formed; 1 vacuous T0 test(s);")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen), what="back on the selection")


async def test_a_verify_result_is_dropped_when_the_task_s_trials_changed(fake_verify, tmp_path):
    bench = load_benchmark(DEMO)
    trials = bench.trials_of(TASK)
    result = canned(bench.tasks[TASK], trials)
    memory = selection_memory.SelectionMemory(verification={
        TASK: selection_memory.KeptVerification(result, [t.id for t in trials][:-1], time.time())})
    selection_memory.save(DEMO, memory)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = SelectionScreen(bench, str(DEMO))
        await app.push_screen(screen)
        table = screen.query_one("#task-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0, what="the tasks listed")
        await pilot.pause()
        assert TASK not in screen.verification
        assert screen.query_one("#task-table", DataTable).get_row(TASK)[5] == "—"


def test_a_damaged_or_foreign_memory_file_means_the_defaults(tmp_path):
    path = selection_memory.memory_file(DEMO)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    assert selection_memory.load(DEMO) == selection_memory.SelectionMemory()
    # Values of the wrong type, an unknown agent role and a broken verify entry are dropped one
    # by one; the rest is kept.
    path.write_text(json.dumps({
        "benchmark": str(DEMO.resolve()),
        "form": {"rounds": 5, "seed": "11", "step": "yes", "agents": {"audit": "openai", "nobody": "x"}},
        "tasks": [TASK], "trials": "all",
        "verification": {TASK: {"result": {"task_id": TASK}}},
    }), encoding="utf-8")
    memory = selection_memory.load(DEMO)
    assert memory.form.seed == "11" and memory.form.rounds == "3" and memory.form.step is False
    assert memory.form.agents["audit"] == "openai" and "nobody" not in memory.form.agents
    assert memory.tasks == [TASK] and memory.trials is None and memory.verification == {}


def test_a_verify_result_round_trips_through_the_memory_file():
    result = TaskVerification(task_id="t", well_formed=False, problems=["reference fails T0"],
                              vacuous=["a::b"], trials=[
                                  TrialVerification("t__m__1", "m", True, None, False, reason="patch does not apply")])
    selection_memory.save(DEMO, selection_memory.SelectionMemory(
        verification={"t": selection_memory.KeptVerification(result, ["t__m__1"], 5.0)}))
    kept = selection_memory.load(DEMO).verification["t"]
    assert kept.result == result and kept.trial_ids == ["t__m__1"] and kept.at == 5.0
    assert report_lines(kept.result) == report_lines(result)
