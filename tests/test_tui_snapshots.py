"""SVG snapshots of key screens (pytest-textual-snapshot 1.1.0, textual 8.2.8 — both pinned).

Update after a deliberate UI change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the SVGs under tests/__snapshots__/ before committing them.
"""
from __future__ import annotations

import time

from conftest import DEMO
from textual.widgets import DataTable

from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.selection import SelectionScreen


async def _listed(pilot) -> None:
    table = pilot.app.screen.query_one("#benchmark-table", DataTable)
    deadline = time.monotonic() + 10
    while table.row_count == 0 and time.monotonic() < deadline:
        await pilot.pause(0.05)
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
        from benchmarks import load_benchmark

        await pilot.app.push_screen(SelectionScreen(load_benchmark(DEMO), str(DEMO)))
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(120, 36), run_before=open_demo)


def test_selection_settings_tab_80x24(snap_compare, monkeypatch):
    monkeypatch.chdir(DEMO.parents[1])

    async def open_settings(pilot) -> None:
        from benchmarks import load_benchmark

        await pilot.app.push_screen(SelectionScreen(load_benchmark(DEMO), str(DEMO)))
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=open_settings)
