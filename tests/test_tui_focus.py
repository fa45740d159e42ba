"""What the operator sees of where they are (issue 31, items 3 and 4): the pane holding the
focus is marked, F1 lists exactly the keys of the screen, worlds and log lines name their task
in a session of several tasks, and the Benchmarks screen rereads its sessions when it comes back.
The real engine on its simulated sandbox (engine_fakes), driven with Pilot."""
from __future__ import annotations

from rich.console import Console
from textual.screen import Screen
from textual.widgets import DataTable, RichLog

from engine_fakes import cand, make_task, make_trial
from test_engine_loop import build
from tui_wait import wait_for
from testjack_tui.engine.events import WorldState
from testjack_tui.tui import live_state as ls
from testjack_tui.tui import live_views as lv
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_live import FOCUSED_PANE
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.screens.benchmarks import BenchmarksScreen
from testjack_tui.tui.screens.help import HelpScreen, help_keys
from testjack_tui.tui.screens.inspect import DiffScreen


def stepped_screen(**kwargs):
    session, _, _ = build({"step": True, "rounds": 10}, **kwargs)
    bench = session.deps.benchmark
    return session, AuditScreen(session, bench, trial_views(bench, None, None))


def marked(screen: AuditScreen) -> list[str]:
    return [w.id or "" for w in screen.query(f".{FOCUSED_PANE}")]


async def test_the_pane_with_the_focus_is_marked_and_down_and_d_act_on_what_is_shown():
    session, screen = stepped_screen()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        await pilot.press("f2")  # wide: the trials pane on the left
        await wait_for(pilot, lambda: marked(screen) == ["trials-title", "trials-table"], what="the trials marked")
        left = screen.query_one("#trials-table")
        title = screen.query_one("#trials-title")
        # Drawn, not only a class.
        await wait_for(pilot, lambda: left.styles.outline_left[0] == "thick" and title.styles.background.a > 0,
                       what="the trials pane's outline and title drawn")
        table = screen.query_one("#trials-table", DataTable)
        row = table.cursor_row
        await pilot.press("down")
        assert table.cursor_row == row + 1  # Down moves the cursor of the marked pane
        await pilot.press("f3")
        await wait_for(pilot, lambda: marked(screen) == ["candidate-table"], what="the candidates marked")
        assert not left.has_class(FOCUSED_PANE)
        await wait_for(pilot, lambda: left.styles.outline_left[0] == "" and title.styles.background.a == 0,
                       what="the trials pane plain again")
        await pilot.press("tab")  # to the candidate's detail
        await wait_for(pilot, lambda: marked(screen) == ["candidate-detail"], what="the detail marked")
        assert screen.focused.id == "candidate-detail"
        # d from the detail (no candidate, no round yet): the trial under the trials cursor.
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert app.screen.title_text == f"Diff (s) of {key.partition('/')[2]}"
        await pilot.press("escape")
        await pilot.press("f4")
        await wait_for(pilot, lambda: marked(screen) == ["world-table"], what="the worlds marked")
        session.stop()


async def test_f1_lists_every_key_of_the_audit_screen_and_only_the_working_ones_as_working():
    session, screen = stepped_screen()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        now, later = help_keys(screen)
        listed_now = {b.action for b, _ in now}
        listed_later = {b.action for b, _ in later}
        # Every key of the screen with a description is listed, once…
        own = {b.action for b in AuditScreen.BINDINGS if b.description and not screen.help_hidden(b.action)}
        assert own <= listed_now | listed_later and not listed_now & listed_later
        assert {"review", "review_anywhere", "report", "approve", "overrule"} <= listed_now | listed_later
        # …those listed as working now do something now, the others not…
        for binding, _ in now:
            if binding.action in own:
                assert screen.check_action(binding.action, ()) is True, binding.action
        for binding, _ in later:
            assert not screen.check_action(binding.action, ()), binding.action
        # …and the operator's editor keys are not offered in a session without an operator.
        assert not {"validate", "share", "operator_done", "leave_editor"} & (listed_now | listed_later)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        console = Console(width=140, record=True)
        console.print(app.screen._help_table())
        text = console.export_text()
        assert "Not available now" in text and "Review" in text and "^r" in text and "Report" in text
        assert "Trials tab" not in text  # f2 is the trials pane on a wide screen, not a tab
        await pilot.press("escape")
        session.stop()


async def test_at_80_columns_a_pane_has_the_focus_from_the_start_and_keeps_one_through_a_resize():
    session, screen = stepped_screen()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        await wait_for(pilot, lambda: marked(screen) == ["candidate-table"], what="the candidates marked")
        await pilot.resize_terminal(200, 50)
        await pilot.press("f2")
        await wait_for(pilot, lambda: marked(screen) == ["trials-title", "trials-table"], what="the trials marked")
        await pilot.resize_terminal(80, 24)  # the trials pane goes: the focus goes to the tab on show
        await wait_for(pilot, lambda: marked(screen) == ["candidate-table"])
        session.stop()


def two_tasks():
    trials = [make_trial("p1", "p1a", "m", ["alias"]), make_trial("p2", "p2a", "m", ["alias"])]
    chains = {"p1a": [[cand("p1", "p1a", 1, "alias")]], "p2a": [[cand("p2", "p2a", 1, "alias")]]}
    return {"task": [make_task("p1"), make_task("p2")], "trials": trials, "chains": chains}


async def test_worlds_and_log_lines_name_their_task_when_the_session_has_several():
    session, screen = stepped_screen(**two_tasks())
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        image = "localhost/testjack-world:" + "0123456789abcdef" * 4
        sid = session.id
        for world, container in (("p1/null", "c1"), ("p2/null", "c2"), ("p2/model/p2a", "c3")):
            screen.inbox.put(WorldState(sid, world=world, container=container, state="created", image=image))
        # A removal the sandbox could not name (its container already forgotten there).
        screen.inbox.put(WorldState(sid, world="", container="c1", state="removed"))
        screen.inbox.put(WorldState(sid, world="", container="c9", state="removed"))
        await pilot.press("f4")
        await wait_for(pilot, lambda: "p2/model/p2a" in screen.state.worlds)
        table = screen.query_one("#world-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, what="three worlds listed")
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [c.label.plain for c in table.columns.values()][0] == "Task"
        assert [r[:3] for r in rows] == [["p1", "null", "removed"], ["p2", "null", "created"],
                                         ["p2", "model p2a", "created"]]
        assert all(r[5].startswith("testjack-world:") and r[5].endswith("…") for r in rows)
        log = [message for _, message in screen.state.log]
        assert "world p1 null: created" in log and "world p2 null: created" in log
        assert "world p1 null: removed" in log and not any(m.startswith("world : ") for m in log)
        await pilot.press("f7")  # the Log tab draws them as they are
        event_log = screen.query_one("#event-log", RichLog)
        await wait_for(pilot, lambda: any("world p2 model p2a: created" in line.text for line in event_log.lines))
        session.stop()


def test_one_task_worlds_keep_their_short_names():
    state = ls.LiveSession("s", [lv.TrialView("t", "a")])
    state.apply(WorldState("s", world="t/null", container="c1", state="created"))
    assert not state.several_tasks and state.log[-1][1] == "world null: created"
    assert lv.short_world("p1/model/p1__orca__1", with_task=True) == "p1 model orca__1"
    assert lv.short_image("localhost/testjack-world:abc") == "testjack-world:abc"


async def test_the_session_list_is_read_again_when_the_benchmarks_screen_comes_back():
    session, _, _ = build({"rounds": 10})
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, BenchmarksScreen)
        table = app.screen.query_one("#session-table", DataTable)

        def state_shown() -> str:
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            return next((str(r[2]) for r in rows if str(r[0]) == session.id), "")

        await wait_for(pilot, lambda: state_shown() != "")
        assert "finished" not in state_shown()
        app.push_screen(Screen())  # where an audit would be
        await pilot.pause()
        assert await session.run() == "finished"
        app.pop_screen()
        await wait_for(pilot, lambda: "finished" in state_shown())
