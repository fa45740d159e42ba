"""Operator mode in the TUI on the bundled demo with real containers: the operator is the audit
agent, the task analyst and the reviewer. They skip the task analysis, write a witness in the
editor, check and share it, judge it valid, and see the trial refuted by it. T0's runs are the shared
lightweight demo audit's (tests/conftest.py), reused on the Settings tab: the operator's test runs."""
from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Select, Static, TextArea
from tui_reuse import choose_lender, lend
from tui_wait import wait_for

from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_live import operator_agent
from testjack_tui.tui.screens.selection import SelectionScreen

TASK = "recordset-metadata"
TRIAL = "recordset-metadata__kestrel__1"  # where() drops the metadata (labels.json: records-where-meta)
BODY = '''from recordkit.records import RecordSet


def test_where_keeps_the_metadata():
    rows = RecordSet([{"k": "a"}, {"k": "b"}], meta={"licence": "CC-BY", "n": 2})
'''
LAST_LINE = 'assert rows.where(lambda r: r["k"] == "b").meta == {"licence": "CC-BY", "n": 2}'


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
async def test_operator_writes_shares_and_judges_a_witness_that_refutes_the_trial(demo_lightweight_audit,
                                                                                  testjack_home):
    lender = lend(demo_lightweight_audit, testjack_home)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(100, 32)) as pilot:
        table = app.screen.query_one("#benchmark-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0, what="the benchmark list")
        table.focus()
        await pilot.press("enter")  # the bundled demo
        await wait_for(pilot, lambda: isinstance(app.screen, SelectionScreen), what="the Selection screen")
        selection = app.screen
        await pilot.press("n")  # no task ...
        tasks = selection.query_one("#task-table", DataTable)
        tasks.move_cursor(row=selection.task_ids.index(TASK))
        await pilot.pause()
        trials = selection.query_one("#trial-table", DataTable)
        trials.focus()
        await pilot.press("n")  # ... none of its trials ...
        ids = [t.id for t in selection.benchmark.trials_of(TASK)]
        trials.move_cursor(row=ids.index(TRIAL))
        await pilot.pause()
        await pilot.press("space")  # ... but this one
        assert selection._chosen_trials() == [TRIAL]
        await pilot.press("f3")
        selection.query_one("#rounds", Input).value = "1"
        for role in ("audit", "reviewer", "task_analysis"):
            selection.query_one(f"#agent-{role}", Select).value = "operator"
        await choose_lender(pilot, selection, lender)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, AuditScreen), what="the Audit screen")
        audit = app.screen
        agent = operator_agent(audit.roles)
        state = audit.state
        status = audit.query_one("#editor-status", Static)

        # The solution-blind task analysis asks first: the operator has nothing for it.
        await wait_for(pilot, lambda: agent.waiting_for == (TASK, None), timeout=300,
                       what="the task analysis waiting for the operator")
        await wait_for(pilot, lambda: "task analysis" in str(status.render()), what="the editor naming the task analysis")
        await pilot.press("ctrl+d")

        # The audit of the chosen trial waits for the operator's test; the editor is in front.
        await wait_for(pilot, lambda: agent.waiting_for == (TASK, TRIAL), timeout=300,
                       what="the audit waiting for the operator")
        source = audit.query_one("#editor-source", TextArea)
        await wait_for(pilot, lambda: audit.query_one("#audit-tabs").active == "editor-tab" and source.has_focus,
                       what="the editor in front, with the focus")
        await wait_for(pilot, lambda: TRIAL in str(audit.query_one("#audit-status", Static).render()),
                       what="the status line naming the trial")
        source.load_text(BODY)
        source.move_cursor(source.document.end)
        await pilot.press("space", "space", "space", "space", *LAST_LINE)  # typed by the operator
        requirement = audit.query_one("#editor-requirement", Input)
        requirement.focus()
        await pilot.press(*'where keeps meta: "the new record sets returned by select and where"')
        path = audit.query_one("#editor-path", Input)
        path.value = "tests/test_tj_where_meta.py"
        await pilot.press("ctrl+k")
        await wait_for(pilot, lambda: "looks runnable" in str(status.render()), what="the check's word")
        await pilot.press("ctrl+e")
        await wait_for(pilot, lambda: "shared" in str(status.render()), what="the test shared")
        await pilot.press("ctrl+d")  # no more tests for this trial

        # The engine ran it on both worlds; the operator is the reviewer: a = valid.
        await wait_for(pilot, lambda: state.pending, timeout=300, what="the verdict request")
        request_id, request = next(iter(state.pending.items()))
        candidate = state.candidates[request.candidate_id]
        assert "licence" in candidate.source and candidate.path == "tests/test_tj_where_meta.py"
        assert candidate.outcome == "discriminates"
        await pilot.press("f3")  # to the Candidates tab (letters would go to the editor's fields)
        await wait_for(pilot, lambda: audit.query_one("#audit-tabs").active == "candidates-tab", what="the Candidates tab")
        await pilot.press("a")
        await wait_for(pilot, lambda: state.state in ("finished", "failed"), timeout=300,
                       what="the end of the session")
        assert state.state == "finished", state.reason
        # The requirement quotes the prompt, so the witness is explicit and refutes on its own
        # (an implicit one failing on every trial of the only model selected would be ambiguous).
        assert [(w.witness_id, w.explicit) for w in state.witnesses.values()] == [(request.candidate_id, True)]
        assert [r.trial_id for r in state.refutations.values()] == [TRIAL]
        assert state.trials[(TASK, TRIAL)].state == "refuted"
        summary = audit.session.summary()
        assert summary.tasks[TASK].trials[TRIAL].state == "refuted"
        assert state.lent_runs > 0  # T0's runs were the lightweight audit's; the witness ran here (above)
        approvals = audit.session.store.approvals()
        assert [(a.by, a.label, a.counts) for a in approvals] == [("operator", "valid", True)]
