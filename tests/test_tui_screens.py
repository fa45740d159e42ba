"""Benchmarks, Selection and Help screens driven with Pilot (no containers)."""
from __future__ import annotations

import gc
import subprocess
import sys
import weakref

from conftest import DEMO, ROOT
from textual.widgets import DataTable, Input, Select, Checkbox
from tui_wait import wait_for

from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.recent import load_recent
from testjack_tui.tui.screens.benchmarks import BenchmarksScreen
from testjack_tui.tui.screens.help import HelpScreen
from testjack_tui.tui.screens.selection import SelectionScreen

FIXTURE = ROOT / "tests" / "fixtures" / "harbor"


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def open_path(pilot, app, path) -> None:
    await pilot.press("o")
    app.screen.query_one("#path-input", Input).value = str(path)
    await pilot.press("enter")


async def test_benchmarks_screen_lists_the_bundled_demo_with_counts():
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, BenchmarksScreen)
        table = app.screen.query_one("#benchmark-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "testjack-demo" and row[1] == "harbor" and row[5] == "bundled"
        from testjack_tui.benchmarks import load_benchmark
        demo = load_benchmark(DEMO)
        assert row[2:5] == [str(len(demo.tasks)), str(len(demo.trials)),
                            str(sum(t.official_pass for t in demo.trials))]


async def test_a_bad_path_becomes_a_readable_notification():
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_path(pilot, app, "/no/such/benchmark")
        await wait_for(pilot, lambda: any("no such file" in m for m in messages(app)))
        assert isinstance(app.screen, BenchmarksScreen)
        assert any(m.startswith("/no/such/benchmark") for m in messages(app))
        # A folder that is not a benchmark names itself and what is missing.
        await open_path(pilot, app, ROOT / "prompts")
        await wait_for(pilot, lambda: any("no benchmark.toml" in m for m in messages(app)))


async def test_opening_a_path_leads_to_selection_and_is_remembered():
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_path(pilot, app, FIXTURE)
        await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen))
        screen = app.screen
        tasks = screen.query_one("#task-table", DataTable)
        assert tasks.row_count == 2
        assert [r.name for r in load_recent()] == ["harbor-fixture"]
        # Back on Benchmarks the recent entry is listed.
        await pilot.press("escape")
        table = app.screen.query_one("#benchmark-table", DataTable)
        await wait_for(pilot, lambda: any(str(table.get_row_at(i)[0]) == "harbor-fixture"
                                          for i in range(table.row_count)))


async def test_selection_toggles_tasks_and_trials_and_selects_by_model():
    from testjack_tui.benchmarks import load_benchmark

    bench = load_benchmark(DEMO)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = SelectionScreen(bench, str(DEMO))
        app.push_screen(screen)
        passing = {t.id for t in bench.trials if t.official_pass}
        await wait_for(pilot, lambda: screen.is_mounted and screen.selected_tasks == set(bench.tasks)
                       and screen.selected_trials == passing, what="every task and passing trial selected")
        await pilot.press("n")  # none (tasks table focused)
        assert screen.selected_tasks == set()
        await pilot.press("a")
        assert screen.selected_tasks == set(bench.tasks)
        first = screen.current_task
        await pilot.press("space")
        assert first not in screen.selected_tasks
        # By hand: one trial of the current task.
        await pilot.press("down")
        current = screen.current_task
        screen.query_one("#trial-table", DataTable).focus()
        trials = bench.trials_of(current)
        target = next(i for i, t in enumerate(trials) if t.official_pass)
        await pilot.press(*["down"] * target)
        await pilot.press("space")
        assert trials[target].id not in screen.selected_trials
        # By model: only one model's passing trials remain.
        model = sorted({t.model for t in bench.trials if t.official_pass})[0]
        await pilot.press("m")
        await wait_for(pilot, lambda: app.screen is not screen and bool(app.screen.query("#choices")),
                       what="the by-model dialog")
        choices = app.screen.query_one("#choices")
        choices.deselect_all()
        choices.select(model)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="back on the selection")
        await pilot.pause()
        assert screen.selected_trials == {t.id for t in bench.trials if t.official_pass and t.model == model}
        assert screen.selected_tasks == {t.task_id for t in bench.trials
                                         if t.official_pass and t.model == model}


async def test_selection_settings_errors_name_the_field_and_nothing_starts():
    from testjack_tui.benchmarks import load_benchmark

    bench = load_benchmark(FIXTURE)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = SelectionScreen(bench, str(FIXTURE))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.press("n")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("Select at least one task" in m for m in messages(app)),
                       what="the notification that no task is selected")
        await pilot.press("a")
        await pilot.press("f3")
        screen.query_one("#rounds", Input).value = "zero"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(m.startswith("rounds per task:") for m in messages(app)),
                       what="the notification naming the rounds field")
        assert isinstance(app.screen, SelectionScreen)
        form = screen.read_form()
        assert form.mode == "lightweight" and form.step is False and form.agents["audit"] == "scripted"
        screen.query_one("#step", Checkbox).value = True
        screen.query_one("#mode", Select).value = "per-trial"
        form = screen.read_form()
        assert form.step is True and form.mode == "per-trial"


async def test_help_lists_the_keys_of_the_screen_below_and_palette_has_them():
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        under = app.screen
        titles = [c.title for c in app.get_system_commands(under)]
        assert {"Open", "Path", "Refresh", "Help", "Quit"} <= set(titles)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        from rich.console import Console
        console = Console(width=100, record=True)
        console.print(app.screen._help_table())
        text = console.export_text()
        assert "Refresh" in text and "Open" in text and "witness" in text
        await pilot.press("escape")
        assert app.screen is under


async def shown_help(pilot, app) -> tuple[weakref.ref, list[weakref.ref]]:
    """F1 until the Help screen has painted: (the screen, the line caches of its widgets)."""
    await pilot.press("f1")
    await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the Help screen")
    shown = app.screen
    await wait_for(pilot, lambda: any(w._styles_cache._cache for w in shown.walk_children()),
                   what="the Help screen's lines rendered")
    return weakref.ref(shown), [weakref.ref(w._styles_cache) for w in shown.walk_children() if w._styles_cache._cache]


async def test_a_closed_screen_leaves_none_of_its_rendered_lines_in_memory():
    """Textual's lru_cache on StylesCache.get_inner_outer kept every widget's line cache alive, and
    the widget with it (textual#6665): each closed dialog or screen stayed in memory
    (testjack_tui/tui/style_cache.py)."""
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, caches = await shown_help(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), what="the Help screen closed")
        # Until the app's queued messages no longer name the screen (a refresh or two). Unfrozen
        # first: the app's start-up settle_heap may have frozen the heap after F1 on a busy machine.
        await wait_for(pilot, lambda: (gc.unfreeze(), gc.collect()) and screen() is None, what="the Help screen freed")
        assert caches and [ref for ref in caches if ref() is not None] == []


async def test_quit_without_a_session_does_not_ask():
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_an_unexpected_error_becomes_a_notification_with_a_log(testjack_home):
    app = TestJackApp()  # not strict: the user's view
    async with app.run_test(size=(80, 24)) as pilot:
        app.report_error(RuntimeError("boom in a handler"), context="test")
        await wait_for(pilot, lambda: any("RuntimeError: boom in a handler" in m for m in messages(app)),
                       what="the error's notification")
    log = (testjack_home / "data" / "logs" / "tui.log").read_text()
    assert "Traceback" in log or "RuntimeError" in log


def test_cli_commands_do_not_import_textual():
    code = "import sys, testjack_tui.cli; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_first_screen_appears_in_a_fresh_interpreter():
    # The same script tests/perf/ui_lag.py times against a bare `import textual`: imports, app
    # start, first screen mounted and painted. Here only that it gets there.
    from tests.perf.ui_lag import FIRST_SCREEN

    out = subprocess.run([sys.executable, "-c", FIRST_SCREEN], capture_output=True, text=True, cwd=ROOT,
                         check=True, timeout=120)
    assert float(out.stdout.strip().splitlines()[-1]) > 0
