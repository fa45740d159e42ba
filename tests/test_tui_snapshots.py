"""SVG snapshots of key screens (pytest-textual-snapshot 1.1.0, textual 8.2.8 — both pinned).

Update after a deliberate UI change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the SVGs under tests/__snapshots__/ before committing them.
"""
from __future__ import annotations

import time

from conftest import DEMO
from textual.widgets import DataTable

from tui_wait import finished_and_told, wait_for

from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.selection import SelectionScreen


async def _listed(pilot) -> None:
    table = pilot.app.screen.query_one("#benchmark-table", DataTable)
    await wait_for(pilot, lambda: table.row_count > 0, what="the benchmarks listed")
    await pilot.pause()


def test_benchmarks_screen_80x24(snap_compare, monkeypatch):
    monkeypatch.chdir(DEMO.parents[1])  # paths are shown relative to the working folder
    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=_listed)


def test_help_screen_80x24(snap_compare, monkeypatch):
    monkeypatch.chdir(DEMO.parents[1])
    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=_listed,
                        press=["f1"])


def test_selection_screen_120x36(snap_compare, monkeypatch):
    monkeypatch.chdir(DEMO.parents[1])

    async def open_demo(pilot) -> None:
        from testjack_tui.benchmarks import load_benchmark

        await pilot.app.push_screen(SelectionScreen(load_benchmark(DEMO), str(DEMO)))
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(120, 36), run_before=open_demo)


def test_selection_settings_tab_80x24(snap_compare, monkeypatch):
    monkeypatch.chdir(DEMO.parents[1])

    async def open_settings(pilot) -> None:
        from testjack_tui.benchmarks import load_benchmark

        await pilot.app.push_screen(SelectionScreen(load_benchmark(DEMO), str(DEMO)))
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=open_settings)


# -- a finished session on the engine's simulated sandbox (tests/engine_fakes.py) ----------------
SNAP_SESSION = "20260101-120000-5a9e01"  # fixed: the id is on screen


class _FrozenClock:
    """Budget wall time reads this clock: the session's 'time' gauge stays at 0:00."""

    @staticmethod
    def monotonic() -> float:
        return 1000.0

    time = staticmethod(time.time)


def _finished_session(monkeypatch):
    from test_engine_loop import build
    from testjack_tui.engine import budget

    monkeypatch.setattr(budget, "time", _FrozenClock)
    session, _, _ = build({"seed": 1, "rounds": 10}, session_id=SNAP_SESSION)
    return session, session.deps.benchmark


def test_audit_screen_finished_session_80x24(snap_compare, monkeypatch):
    from testjack_tui.tui.screens.audit import AuditScreen
    from testjack_tui.tui.screens.audit_start import trial_views

    session, bench = _finished_session(monkeypatch)

    async def run_session(pilot) -> None:
        screen = AuditScreen(session, bench, trial_views(bench, None, None))
        await pilot.app.push_screen(screen)
        await finished_and_told(pilot, screen)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=run_session)


def _report(monkeypatch, tab: str | None):
    from testjack_tui.tui.screens.report import ReportScreen

    session, bench = _finished_session(monkeypatch)

    async def open_report(pilot) -> None:
        import asyncio

        assert await asyncio.to_thread(lambda: asyncio.run(session.run())) == "finished"
        screen = ReportScreen(session, bench)
        await pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.summary), what="the report")
        if tab:
            await pilot.press(tab)
        await pilot.pause()

    return open_report


def test_report_screen_overview_100x30(snap_compare, monkeypatch):
    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(100, 30),
                        run_before=_report(monkeypatch, None))


def test_report_screen_trials_tab_80x24(snap_compare, monkeypatch):
    # At 80 columns the verdict is the second column and stays in view.
    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24),
                        run_before=_report(monkeypatch, "f3"))
