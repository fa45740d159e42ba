"""Reusing the runs of an earlier session from the TUI (as `audit --reuse-runs SESSION`): the
Selection screen offers the benchmark's sessions and checks the one chosen, `testjack-tui tui
BENCH --reuse-runs SESSION` chooses it there, and the Audit screen says which runs were taken and
from which session. Engine on its simulated sandbox (engine_fakes); the podman flows that reuse
the shared demo audit's runs are test_tui_demo_e2e and test_tui_operator."""
from __future__ import annotations

from conftest import DEMO
from textual.widgets import Select
from typer.testing import CliRunner

from test_engine_loop import build
from tui_wait import finished_and_told, wait_for, wait_text
from testjack_tui.benchmarks import load_benchmark
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.screens.selection import SelectionScreen


async def test_the_audit_screen_counts_the_runs_taken_from_the_earlier_session_and_names_it():
    light, _, _ = build({"seed": 3, "rounds": 2})
    assert await light.run() == "finished"
    deep, sandbox, _ = build({"mode": "per-trial", "seed": 3, "reuse_runs": light.id})
    bench = deep.deps.benchmark
    screen = AuditScreen(deep, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await finished_and_told(pilot, screen)
        # Every run of the session that no container made here and that is no copy of its own runs
        # (engine/oracle.taken_run) is the earlier session's.
        taken = len([r for r in deep.store.runs() if r.same_as is None]) - len(sandbox.runs())
        assert taken > 0 and screen.state.lent_runs == taken
        await wait_text(app, pilot, f"{taken} runs taken from session {light.id}")
        logged = [line for _, line in screen.state.log if f"(the run of session {light.id})" in line]
        assert len(logged) == taken
        assert any(f"(the run of session {light.id})" in summary
                   for c in screen.state.candidates.values() for _, summary in c.runs)


async def test_selection_offers_the_benchmarks_sessions_and_refuses_one_without_t0_on_the_trial():
    demo = str(DEMO.resolve())
    ours, _, _ = build({"benchmark": demo})  # stored, never run: no T0 run of any trial
    other, _, _ = build({"benchmark": "elsewhere"})
    bench = load_benchmark(DEMO)
    trial = next(t for t in bench.trials if t.official_pass)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = SelectionScreen(bench, demo)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.lenders, what="the sessions to reuse runs of")
        assert screen.lenders == [ours.id] and other.id not in screen.lenders
        screen.selected_tasks, screen.selected_trials = {trial.task_id}, {trial.id}
        await pilot.press("f3")
        screen.query_one("#reuse_runs", Select).value = ours.id
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("no T0 run of it there" in n.message for n in app._notifications),
                       what="the refusal naming the trial")
        assert app.screen is screen  # nothing started
        assert any(trial.id in n.message and n.title == "Reuse runs" for n in app._notifications)


async def test_tui_reuse_runs_chooses_the_session_on_the_settings_tab():
    demo = str(DEMO.resolve())
    lender, _, _ = build({"benchmark": demo})
    app = TestJackApp(benchmark=demo, reuse_runs=lender.id, strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen), what="the Selection screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.lenders == [lender.id], what="the sessions to reuse runs of")
        assert screen.query_one("#reuse_runs", Select).value == lender.id
        assert screen.read_form().config_kwargs(demo, None, None)["reuse_runs"] == lender.id


def test_tui_reuse_runs_names_what_is_wrong_before_the_ui_opens():
    from testjack_tui.cli import app

    unknown = CliRunner().invoke(app, ["tui", str(DEMO), "--reuse-runs", "20990101-000000-abcdef"])
    assert unknown.exit_code == 2 and "--reuse-runs: no session '20990101-000000-abcdef'" in unknown.output
    other, _, _ = build({"benchmark": "elsewhere"})
    wrong = CliRunner().invoke(app, ["tui", str(DEMO), "--reuse-runs", other.id])
    assert wrong.exit_code == 2 and f"session {other.id} audited elsewhere" in wrong.output
    alone = CliRunner().invoke(app, ["tui", "--reuse-runs", other.id])
    assert alone.exit_code == 2 and "name the BENCHMARK" in alone.output
