"""The Reqs tab (issue 31): t switches task, the header counts the T0 answers the rows show (never
"0 not covered" over a "not recorded" row), the coverage columns stay in view at 80×24, and the
prompt view renders every task's P as markdown with the reviewer's quote marked. The real engine
on its simulated sandbox (engine_fakes), driven with Pilot."""
from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import DataTable, Label

from engine_fakes import cand, make_task, make_trial
from test_engine_loop import build
from tui_wait import finished_and_told, wait_for
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.screens.inspect import HighlightedMarkdown, PromptScreen
from testjack_tui.tui.widgets.requirements import RequirementsPanel

LONG = ("Every duration string with a unit suffix is parsed into seconds, whitespace around the number "
        "is ignored and the unit letter is case-insensitive")


def two_tasks():
    trials = [make_trial("p1", "p1a", "m", ["alias"]), make_trial("p2", "p2a", "m", ["alias"])]
    chains = {"p1a": [[cand("p1", "p1a", 1, "alias")]], "p2a": [[cand("p2", "p2a", 1, "alias")]]}
    return {"task": [make_task("p1"), make_task("p2")], "trials": trials, "chains": chains}


def finished(**kwargs):
    session, _, _ = build({"auto_approve": True, "rounds": 10}, **two_tasks(), **kwargs)
    # p1's task analysis traced three requirements: one partly covered, one not, one unknown.
    session.store.put_audit("p1", "analysis", {"traceability": [
        {"requirement": "handles alias", "explicit": True, "quote": "alias", "coverage": "partial",
         "t0_tests": ["tests/test_t0.py::test_f2p"]},
        {"requirement": LONG, "explicit": False, "coverage": "none"},
        {"requirement": "handles quoting", "explicit": True, "quote": "quoting"}]})
    bench = session.deps.benchmark
    return session, AuditScreen(session, bench, trial_views(bench, None, None))


def title(screen) -> str:
    return str(screen.query_one("#requirements-title", Label).content)


def column(table: DataTable, key: str) -> list[str]:
    return [str(table.get_cell(row, key)) for row in table.rows]


async def test_t_switches_task_and_the_header_counts_what_the_rows_show():
    session, screen = finished()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f9")
        panel = screen.query_one(RequirementsPanel)
        await wait_for(pilot, lambda: panel.task_id in ("p1", "p2") and panel.rows)
        if panel.task_id == "p2":
            await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p1")
        table = screen.query_one("#requirements-table", DataTable)
        # The audits' "handles alias" and the analysis's are one row; partial stays partial.
        assert [r.clause for r in panel.rows] == ["handles alias", LONG, "handles quoting"]
        assert column(table, "t0") == ["partial", "no", "not recorded"]
        assert "T0 covers: 1 partial, 1 no, 1 not recorded · 1 with a witness" in title(screen)
        await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p2")
        assert [r.clause for r in panel.rows] == ["handles alias"] and "Requirements of p2" in title(screen)
        assert column(table, "t0") == ["not recorded"]
        assert "T0 covers: 1 not recorded" in title(screen)
        # The engine's next repaint does not take the operator back to the current task.
        screen._show_requirements()
        assert panel.task_id == "p2"
        await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p1")


async def test_at_80x24_the_coverage_columns_stay_in_view():
    session, screen = finished()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f9")
        panel = screen.query_one(RequirementsPanel)
        await wait_for(pilot, lambda: bool(panel.rows))
        table = screen.query_one("#requirements-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == len(panel.rows) and table.size.width > 0
                       and table.virtual_size.width > 0, what="the requirements table laid out and measured")
        await pilot.pause()
        right = sum(c.get_render_width(table) for c in table.columns.values())
        assert right <= table.size.width  # every column, Held the last, inside the pane
        assert any(str(c).endswith("…") for c in column(table, "req")) or all(
            len(r.clause) < 20 for r in panel.rows)


def render(body, width: int = 60) -> tuple[str, Console]:
    console = Console(width=width, record=True, color_system="truecolor", file=io.StringIO())
    console.print(body)
    return console.export_text(clear=False), console


def test_the_prompt_is_markdown_with_or_without_a_quote_and_the_quote_is_marked():
    task = make_task("p1")
    task = type(task)(**{**task.__dict__, "instruction": "# Durations\n\nThe parser **must handle alias** "
                         "and `quoting` of every input.\n\n- one\n"})
    for quote in ("", "must handle alias and quoting"):
        screen = PromptScreen(task, highlight=quote)
        assert isinstance(screen.body, HighlightedMarkdown)
        text, console = render(screen.body)
        assert "**" not in text and "# Durations" not in text and "• one" in text  # rendered, not raw
    body = PromptScreen(task, highlight="must handle alias and quoting").body
    _, console = render(body)
    styled = console.export_text(styles=True)
    marked = [seg for seg in styled.split("\x1b[") if seg.startswith("1;7;33")]
    assert "".join(m.split("m", 1)[1] for m in marked).split() == ["must", "handle", "alias", "and", "quoting"]


async def test_enter_on_a_requirement_opens_p_with_its_words_marked():
    from testjack_tui.tui.screens.inspect import PromptScreen

    session, screen = finished()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f9")
        panel = screen.query_one(RequirementsPanel)
        await wait_for(pilot, lambda: bool(panel.rows))
        if panel.task_id != "p1":
            await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p1" and len(panel.rows) == 3)
        await pilot.press("enter")  # the first row: "handles alias", quoting "alias"
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert isinstance(app.screen.body, HighlightedMarkdown) and "alias" in app.screen.body.pattern
        assert "Prompt (P) of p1" in app.screen.title_text


def test_reqs_tab_snapshot_80x24(snap_compare, monkeypatch):
    from test_tui_snapshots import SNAP_SESSION, _FrozenClock
    from testjack_tui.engine import budget

    monkeypatch.setattr(budget, "time", _FrozenClock)
    session, screen = finished(session_id=SNAP_SESSION)

    async def open_reqs(pilot) -> None:
        await pilot.app.push_screen(screen)
        await finished_and_told(pilot, screen)
        await pilot.press("f9")
        panel = screen.query_one(RequirementsPanel)
        await wait_for(pilot, lambda: bool(panel.rows), what="the requirements listed")
        if panel.task_id != "p1":
            await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p1", what="p1's requirements")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=open_reqs)
