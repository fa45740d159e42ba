"""The main flow on the bundled demo with real containers and the scripted agents: open the
demo, select a task, reuse the runs of the shared lightweight demo audit (tests/conftest.py), start
a stepped session, approve one verdict and overrule another, watch refutations arrive, finish,
open the report."""
from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Checkbox
from tui_reuse import choose_lender, lend
from tui_wait import polls, wait_for

from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.report import ReportScreen
from testjack_tui.tui.screens.selection import SelectionScreen

TASK = "merge-list-strategies"


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
async def test_demo_flow_open_select_step_approve_overrule_finish_report(demo_lightweight_audit, testjack_home):
    lender = lend(demo_lightweight_audit, testjack_home)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(160, 45)) as pilot:
        table = app.screen.query_one("#benchmark-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        table.focus()
        await pilot.press("enter")  # the bundled demo is the first row
        await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen))
        selection = app.screen
        await pilot.press("n")  # no task ...
        tasks = selection.query_one("#task-table", DataTable)
        tasks.move_cursor(row=selection.task_ids.index(TASK))
        await pilot.pause()
        await pilot.press("space")  # ... but this one
        await wait_for(pilot, lambda: selection.selected_tasks == {TASK}, what=f"only {TASK} selected")
        await pilot.press("f3")
        selection.query_one("#rounds", Input).value = "2"
        selection.query_one("#step", Checkbox).value = True
        selection.query_one("#auto_approve", Checkbox).value = False
        await choose_lender(pilot, selection, lender)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, AuditScreen))
        audit = app.screen
        state = audit.state
        decisions: list[tuple[str, str, str]] = []
        refutation_counts: list[int] = []
        for _ in polls("the demo session's end", timeout=900):
            if state.state in ("finished", "failed", "stopped"):
                break
            if state.pending:
                request_id, request = next(iter(state.pending.items()))
                key = "o" if len(decisions) == 1 else "a"
                await pilot.press(key)
                decisions.append((request.candidate_id, request.label, key))
                await wait_for(pilot, lambda: request_id not in state.pending)
            elif state.state == "paused":
                await pilot.press("n")
                await pilot.pause(0.2)
            else:
                await pilot.pause(0.2)
            refutation_counts.append(len(state.refutations))
        assert state.state == "finished", state.reason
        assert len(decisions) >= 2, decisions
        assert state.candidates[decisions[0][0]].decision == "approved"
        assert state.candidates[decisions[1][0]].decision == "overruled"
        # The worlds were real containers and their output reached the screen.
        assert state.worlds and any(w.total for w in state.worlds.values())
        summary = audit.session.summary()
        refuted = {t for t, v in summary.tasks[TASK].trials.items() if v.state == "refuted"}
        assert refuted == {k[1] for k, t in state.trials.items() if t.state == "refuted"}
        assert refuted and refutation_counts[0] == 0  # refutations arrived while we watched
        # T0's runs and the lightweight loop's were taken, and the status line says from where.
        assert state.lent_runs > 0
        assert f"{state.lent_runs} runs taken from session {lender}" in audit._status_text().plain
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen.summary)
        trials = app.screen.query_one("#report-trials", DataTable)
        shown = {key.value for key in trials.rows if str(trials.get_cell(key, "verdict")) == "refuted"}
        assert shown == refuted
