"""The Audit and Report screens on the real engine with its simulated sandbox (engine_fakes):
stepping, approving and overruling verdicts, refutations updating, budget pause and raise,
quitting a running session, and the report. The same flow on the demo benchmark with real
containers and the scripted agents is in test_tui_demo_e2e.py."""
from __future__ import annotations

from textual.widgets import DataTable, Input

from test_engine_loop import build
from tui_wait import polls, screen_lines, wait_for
from testjack_tui.engine.config import BudgetLimits
from testjack_tui.engine.session import AuditSession
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.screens.dialogs import ConfirmScreen, LimitsScreen
from testjack_tui.tui.screens.report import ReportScreen


def audit_screen(config: dict):
    session, _, _ = build(config)
    bench = session.deps.benchmark
    return session, AuditScreen(session, bench, trial_views(bench, None, None))


async def test_stepped_session_with_approve_and_overrule_then_report():
    session, screen = audit_screen({"step": True, "auto_approve": False, "rounds": 10})
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        state = screen.state
        await wait_for(pilot, lambda: state.state == "paused")
        assert state.waiting_for.startswith("round 1")
        decisions: list[tuple[str, str]] = []
        refutations_seen: list[int] = []
        for _ in polls("the session's end"):
            if state.state in ("finished", "failed", "stopped"):
                break
            if state.pending:
                request_id, request = next(iter(state.pending.items()))
                # The first verdict is approved, the second overruled, the rest approved.
                key = "o" if len(decisions) == 1 else "a"
                await pilot.press(key)
                decisions.append((request.candidate_id, key))
                await wait_for(pilot, lambda: request_id not in state.pending)
            elif state.state == "paused":
                await pilot.press("n")
                await pilot.pause(0.05)
            else:
                await pilot.pause(0.05)
            refutations_seen.append(len(state.refutations))
        assert state.state == "finished", state.reason
        approved, overruled = decisions[0][0], decisions[1][0]
        assert state.candidates[approved].decision == "approved"
        assert state.candidates[overruled].decision == "overruled"
        # Refutations arrived during the session and the screen followed them.
        assert refutations_seen[-1] > 0 and refutations_seen[0] == 0
        summary = session.summary()
        refuted = {tid for tid, t in summary.tasks["t1"].trials.items() if t.state == "refuted"}
        shown = {k[1] for k, t in state.trials.items() if t.state == "refuted"}
        assert refuted == shown and refuted
        table = screen.query_one("#trials-table", DataTable)
        states = {key.value.split("/", 1)[1]: str(table.get_cell(key, "state")) for key in table.rows}
        assert {t for t, s in states.items() if s == "refuted"} == refuted
        # Approvals the engine recorded are the operator's.
        recorded = {a.candidate_id: a for a in session.store.approvals()}
        assert recorded[overruled].by == "operator"
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen.summary)
        report = app.screen
        trials = report.query_one("#report-trials", DataTable)
        verdicts = {key.value: str(trials.get_cell(key, "verdict")) for key in trials.rows}
        assert {t for t, v in verdicts.items() if v == "refuted"} == refuted
        # Export is a dialog: format, destination, the CLI's check; the result stays in a panel.
        from textual.widgets import Checkbox, Static

        from testjack_tui.tui.screens.export import ExportScreen

        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen))
        dialog = app.screen
        dialog.query_one("#export-check", Checkbox).value = False  # no containers here
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: dialog.result is not None)
        export_dir = session.directory / "export"
        assert (export_dir / "export.json").is_file() and (export_dir / "report" / "report.md").is_file()
        shown = str(dialog.query_one("#export-result-text", Static).content)
        assert "t1: " in shown and "not checked" in shown and "wrote" in shown


async def test_budget_pause_then_raising_the_limit_resumes():
    session, screen = audit_screen({"budget": BudgetLimits(test_runs=4), "rounds": 10})
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        state = screen.state
        await wait_for(pilot, lambda: state.state == "paused" and state.reason.startswith("budget"))
        gauges = screen.query_one("#budget")
        assert gauges.levels["test_runs"] == "danger"
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LimitsScreen), what="the limits dialog")
        app.screen.query_one("#limit-test_runs", Input).value = ""
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: state.state == "finished", what="the session's end")
        assert session.summary().state == "finished"


async def test_quitting_a_running_session_asks_and_leaves_it_resumable():
    session, screen = audit_screen({"step": True, "rounds": 10})
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the quit dialog")
        await pilot.press("n")  # stay
        await wait_for(pilot, lambda: app.screen is screen, what="back on the audit")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the quit dialog")
        await pilot.press("y")
        await pilot.pause()
    info = {s["id"]: s for s in AuditSession.list()}[session.id]
    assert info["state"] in ("stopped", "paused", "interrupted")
    # It can run again and finish.
    again = AuditSession.open(session.id, session.deps)
    again.run_to_end()
    assert await again.run() == "finished"


async def test_tab_titles_switch_tabs_by_click_and_keep_the_active_one_in_view():
    from testjack_tui.tui.widgets.panes import TabBar

    session, screen = audit_screen({"step": True, "rounds": 10})
    app = TestJackApp(strict_errors=True)

    def title_row() -> str:
        bar = screen.query_one(TabBar)
        return screen_lines(app)[bar.region.y][bar.region.x:]

    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        tabs = screen.query_one("#audit-tabs")
        bar = screen.query_one(TabBar)
        # Wide: the trials stay on the left, so there is no Trials tab; titles carry their F-key.
        await wait_for(pilot, lambda: "Worlds F4" in title_row(), what="the tab titles")
        assert "Trials" not in title_row()
        x = title_row().index("Worlds F4")
        await pilot.click(TabBar, offset=(x + 2, 0))
        await wait_for(pilot, lambda: tabs.active == "worlds-tab")
        assert screen.query_one("#world-table").region.height > 0  # the pane on show
        await pilot.press("f9")
        await wait_for(pilot, lambda: tabs.active == "requirements-tab")
        # Narrow: the titles no longer fit the pane; the active one stays in view, underlined.
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: screen.size.width == 120 and "Reqs F9" in title_row(),
                       what="the active tab's title at 120 columns")
        row = title_row()
        underline = screen_lines(app)[bar.region.y + 1]
        start = bar.region.x + row.index("Reqs F9")
        # The bar's highlight starts after a ╸ and ends before a ╺ (as Textual draws it).
        assert underline[start - 1] == "╸" and underline[start + len("Reqs F9")] == "╺"
        await pilot.resize_terminal(80, 24)
        # At 80 columns the trials are a tab.
        await wait_for(pilot, lambda: screen.size.width == 80 and "Trials" in title_row(), what="a Trials tab")
        await pilot.press("f2")
        await wait_for(pilot, lambda: tabs.active == "trials-tab")
