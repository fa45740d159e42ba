"""What an operator stumbled on walking the demo in tmux (issues 31 and 34), one pilot test per
fix. The real engine on its simulated sandbox (engine_fakes), driven with Pilot."""
from __future__ import annotations

from test_tui_reqs import finished
from tui_wait import wait_for
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.inspect import HighlightedMarkdown, PromptScreen
from testjack_tui.tui.widgets.requirements import RequirementsPanel

P_WORDS = "It must handle alias and quoting"  # make_task's P says this word for word


async def test_a_requirement_with_no_recorded_quote_marks_its_own_words_in_p():
    # The walk: an audit's requirement "whitespace around the duration is ignored;" (In P "?",
    # no quote) opened P with nothing marked, though P says it word for word.
    session, screen = finished()
    session.store.put_audit("p1", "analysis", {"traceability": [
        {"requirement": P_WORDS, "explicit": True, "coverage": "none"}]})
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f9")
        panel = screen.query_one(RequirementsPanel)
        await wait_for(pilot, lambda: bool(panel.rows))
        if panel.task_id != "p1":
            await pilot.press("t")
        await wait_for(pilot, lambda: panel.task_id == "p1" and any(r.clause == P_WORDS for r in panel.rows))
        row = next(i for i, r in enumerate(panel.rows) if r.clause == P_WORDS)
        assert not panel.rows[row].quote
        for _ in range(row):
            await pilot.press("down")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        body = app.screen.body
        assert isinstance(body, HighlightedMarkdown)
        assert body.pattern and all(word in body.pattern for word in P_WORDS.split())


async def test_candidates_that_arrive_behind_another_tab_get_the_pane_width_when_it_is_shown():
    # The walk: candidates proposed while the Log tab was on show had their requirement cut to
    # 9 cells ("Give ever…") in a 116-cell pane until some later redraw.
    from textual.widgets import DataTable

    session, screen = finished()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await pilot.press("f7")  # the log, before any candidate exists
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f3")
        table = screen.query_one("#candidate-table", DataTable)

        def requirements() -> list[str]:
            return [str(table.get_cell(row, "requirement")) for row in table.rows]

        # No later event comes to redraw them: showing the pane is what must fit them.
        await wait_for(pilot, lambda: set(requirements()) == {"handles alias"},
                       what="the requirements whole in the shown pane")


async def test_the_header_says_running_while_one_task_waits_at_a_gate_and_another_works():
    # The walk: duration-units-js waited at its step gate while cache-async-memoize ran its
    # rounds (runs 28 → 36), and the header said "● paused".
    from engine_fakes import FakeSandbox
    from test_engine_loop import build
    from test_tui_cockpit import status_text
    from test_tui_waits import screen_for, three_tasks

    tasks, trials, chains = three_tasks()
    tasks, trials = tasks[:2], trials[:4]
    sandbox = FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials}, delay=0.2)
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "step": True, "rounds": 1,
                           "parallel_tasks": 2}, task=tasks, trials=trials,
                          chains={k: v for k, v in chains.items() if not k.startswith("p3")}, sandbox=sandbox)
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: len(screen.state.gates) == 2)
        # Every task is held at its gate: it waits for you.
        await wait_for(pilot, lambda: "● waiting" in status_text(screen), what="the header saying waiting")
        first = screen.state.gates[0][0]
        await pilot.press("n")  # one task goes on, the other stays at its gate
        await wait_for(pilot, lambda: "● running (1 task waits)" in status_text(screen))
        assert [t for t, _ in screen.state.gates] == ["p2" if first == "p1" else "p1"]
        # Its verdict reaches the operator: now nothing is at work, and the header says so.
        await wait_for(pilot, lambda: bool(screen.state.pending))
        await wait_for(pilot, lambda: "● waiting" in status_text(screen))
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_r_takes_n_and_r_out_of_the_footer_at_once():
    # The walk: after r ("Running to the end (step mode off)") the footer still offered
    # "n Next r Run all" and no p, until some later event.
    from test_engine_loop import build
    from test_tui_waits import screen_for
    from testjack_tui.tui.widgets.footer import QuietFooter

    from test_tui_waits import three_tasks

    tasks, trials, chains = three_tasks()
    session, _, _ = build({"step": True, "auto_approve": False, "task_analysis": False, "rounds": 10},
                          task=tasks[:1], trials=trials[:2], chains={k: chains[k] for k in ("p1a", "p1b")})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.state.gates))
        await pilot.press("n")
        # A verdict waits for the operator: the engine sends nothing more until a decision.
        await wait_for(pilot, lambda: bool(screen.state.pending))
        footer = screen.query_one(QuietFooter)
        await wait_for(pilot, lambda: "Next" in footer.descriptions)
        seen = screen.state.events_seen
        await pilot.press("r")
        await wait_for(pilot, lambda: "Pause" in footer.descriptions, what="Pause in the footer")
        assert screen.state.events_seen == seen  # nothing but the key could have changed the footer
        assert "Next" not in footer.descriptions and "Run all" not in footer.descriptions
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_settings_mark_the_focused_field_and_the_step_switch_fits_80_columns(testjack_home):
    # The walk, at 80×24: Tab through Settings showed a compact Select or an empty budget field
    # with the focus one shade darker (invisible in practice), and the step switch read
    # "on: pause before each round and after each verdic…".
    from conftest import DEMO
    from textual.widgets import Checkbox, Label

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.tui.screens.selection import SelectionScreen

    bench = load_benchmark(DEMO)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = SelectionScreen(bench, str(DEMO))
        app.push_screen(screen)
        await pilot.pause()
        await pilot.press("f3")
        await wait_for(pilot, lambda: getattr(app.focused, "id", None) == "mode")

        def label_of(widget_id: str) -> Label:
            return screen.query_one(f"#{widget_id}").parent.query_one(".form-label", Label)

        await wait_for(pilot, lambda: label_of("mode").styles.background.a > 0)
        accent = label_of("mode").styles.background
        fields = ("mode", "rounds", "k_repairs", "sampler", "seed", "usd", "tokens", "seconds", "test_runs",
                  "agent-audit")
        for i, field in enumerate(fields):
            await wait_for(pilot, lambda: getattr(app.focused, "id", None) == field)
            other = fields[i - 1]  # the field the focus left is plain again
            await wait_for(pilot, lambda: label_of(field).styles.background == accent
                           and label_of(other).styles.background != accent,
                           what=f"{field}'s label marked, {other}'s plain")
            await pilot.press("tab")
        for switch in ("step", "auto_approve"):
            box = screen.query_one(f"#{switch}", Checkbox)
            for value in (True, False):
                box.value = value
                # The label is whole: its text fits the cells the checkbox has on screen.
                await wait_for(pilot, lambda: str(box.label) in box.render_line(0).text,
                               what=f"{switch}'s label drawn whole")
                drawn = box.render_line(0).text
                assert "…" not in drawn, (switch, drawn)


DEMO_NAMES = ("cache-async-memoize", "duration-units-js", "merge-list-strategies", "parse-duration-compound",
              "recordset-metadata")


async def test_five_tasks_at_80x24_fit_the_status_line_whole():
    # The walk: five demo tasks at 80×24 wrapped past the status line's last row and were cut
    # mid-word ("recordset-metadata: queued (2"); two tasks' standing was not on screen.
    from engine_fakes import FakeSandbox, cand, make_task, make_trial
    from test_engine_loop import build
    from test_tui_waits import screen_for
    from testjack_tui.tui.screens.audit_live import STATUS_LINES
    from textual.widgets import Static

    tasks = [make_task(t) for t in DEMO_NAMES]
    trials = [make_trial(t, f"{t}__a", "m1", ["alias"]) for t in DEMO_NAMES]
    chains = {f"{t}__a": [[cand(t, f"{t}__a", 1, "alias")]] for t in DEMO_NAMES}
    sandbox = FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials}, delay=0.2)
    session, _, _ = build({"auto_approve": True, "task_analysis": False, "parallel_tasks": 1, "rounds": 1},
                          task=tasks, trials=trials, chains=chains, sandbox=sandbox)
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: sum(1 for t in screen.state.task_states.values() if t.state == "queued") >= 3)
        status = screen.query_one("#audit-status", Static)
        await wait_for(pilot, lambda: status.content_region.width > 0, what="the status line laid out")
        text = screen._status_text()
        wrapped = text.wrap(app.console, status.content_region.width)
        assert len(wrapped) <= STATUS_LINES, [line.plain for line in wrapped]
        plain = text.plain
        assert "queued" in plain and (all(t in plain for t in DEMO_NAMES) or "tasks: queued" in plain), plain
        # Nothing is cut mid-entry: the last line ends with a whole entry.
        assert not plain.rstrip().endswith("("), plain
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_a_decision_s_notification_names_the_candidate_as_the_tables_do_and_its_task():
    # The walk: "Overruled cache-async-memoize:cache-async-memoize__orca__2:1.v1: does not
    # count." — the tables say "orca__2:1.v1" beside the task.
    from test_engine_loop import build
    from test_tui_waits import screen_for, three_tasks

    tasks, trials, chains = three_tasks()
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "rounds": 1},
                          task=tasks[:1], trials=trials[:2], chains={k: chains[k] for k in ("p1a", "p1b")})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.state.pending))
        request = next(iter(screen.state.pending.values()))
        app.clear_notifications()
        await pilot.press("o")
        await wait_for(pilot, lambda: any(n.title == "Decision sent" for n in app._notifications))
        sent = next(n.message for n in app._notifications if n.title == "Decision sent")
        assert request.candidate_id.startswith("p1:p1")
        assert sent == f"Overruled {request.candidate_id.split(':', 1)[1]} of p1: does not count.", sent
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_the_editor_s_key_line_is_whole_at_80_columns():
    # The walk, at 80×24: "Tab indents · ctrl+a selects all · ctrl+o leaves the source (to
    # Requirement) ·" — the F2–F9 part was cut.
    from test_tui_waits import screen_for
    from test_engine_loop import build
    from textual.widgets import Static

    from testjack_tui.tui.widgets.editor import EDITOR_KEYS

    session, _, _ = build({"auto_approve": True, "task_analysis": False, "rounds": 1})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await pilot.press("f6")
        keys = screen.query_one("#editor-keys", Static)
        await wait_for(pilot, lambda: keys.content_region.width > 0)
        drawn = keys.render_line(0).text
        assert EDITOR_KEYS in drawn and "F2–F9 tabs" in drawn, drawn
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_a_node_test_task_opens_the_editor_on_a_js_file_node_runs():
    # The walk: the demo's duration-units-js (node --test) opened the editor on
    # test/operator.tj.test.ts with describe/it as globals: node --test collects no .ts file and
    # has no globals, so the starting file could never run there.
    from textual.app import App
    from textual.widgets import Input, TextArea

    from testjack_tui.tui.widgets.editor import OperatorEditor, check_candidate

    class Host(App):
        def compose(self):
            yield OperatorEditor(id="editor")

    async with Host().run_test(size=(80, 24)) as pilot:
        editor = pilot.app.query_one(OperatorEditor)
        expected = {"node --test": (".tj.test.js", 'from "node:test"'), "vitest": (".tj.test.ts", 'from "vitest"'),
                    "jest": (".tj.test.js", "jest's globals"), "mocha": (".tj.test.js", "mocha's globals"),
                    "pytest": ("test_tj_operator.py", "def test_")}
        for framework, (ending, says) in expected.items():
            editor.set_framework(framework)  # untouched: each task's runner gets its own start
            await pilot.pause()
            path = editor.query_one("#editor-path", Input).value
            source = editor.query_one("#editor-source", TextArea).text
            assert path.endswith(ending) and says in source, (framework, path, source)
        editor.set_framework("node --test")
        await pilot.pause()
        path = editor.query_one("#editor-path", Input).value
        source = editor.query_one("#editor-source", TextArea).text.replace(
            "  });", "    assert.throws(() => parseDuration(\"\"), RangeError);\n  });")
        assert check_candidate(path, source, "node --test") == []
        # Asked for the wrong kind of file, the runner's own extension is named.
        assert check_candidate("tests/test_x.py", "def test_x():\n    pass\n", "node --test") == [
            "path: the task's runner node --test takes js files"]


async def test_the_focus_bar_does_not_cover_the_first_column_of_the_logs():
    # The walk: with the Log focused its lines read "█4:38:53 [info] …": the focus bar is drawn
    # over the first column, and the log had none to spare (the hour's first digit was gone).
    from test_engine_loop import build
    from test_tui_waits import screen_for

    session, _, _ = build({"auto_approve": True, "task_analysis": False, "rounds": 1})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        for key, pane in (("f7", "#event-log"), ("f4", "#world-log")):
            await pilot.press(key)
            widget = screen.query_one(pane)
            widget.focus()
            await wait_for(pilot, lambda: widget.has_class("-focused-pane"))
            # The focused pane's style gives the bar a column of its own.
            await wait_for(pilot, lambda: widget.content_region.x > widget.region.x,
                           what=f"{pane}'s first column clear of the focus bar")


def test_the_header_word_counts_a_task_waiting_for_the_operator_s_tests_as_waiting():
    # The walk (operator audit agent): "waiting for your test on duration-units-js__kestrel__1"
    # beside "● running (1 task waits)" that counted only cache-async-memoize's decision.
    from testjack_tui.engine import events as ev
    from testjack_tui.tui import live_state as ls
    from testjack_tui.tui.session_word import header_state

    s = ls.LiveSession("sess", [])
    s.apply_all([
        ev.SessionStarted("sess", benchmark="demo", mode="lightweight", tasks=("cache", "dur", "merge"), agent="x"),
        ev.TaskState("sess", task_id="cache", state="auditing"),
        ev.TaskState("sess", task_id="dur", state="auditing"),
        ev.TaskState("sess", task_id="merge", state="auditing"),
        ev.ApprovalRequested("sess", request_id="r1", task_id="cache", trial_id=None, candidate_id="cache:analysis:1.v1",
                             label="valid", reason="")])
    assert header_state(s) == ("running", "1 task waits")
    assert header_state(s, writing="dur") == ("running", "2 tasks wait")
    s.apply(ev.TaskState("sess", task_id="merge", state="finished"))
    assert header_state(s, writing="dur") == ("waiting", "")  # nothing left at work: all wait for you


async def test_the_benchmarks_screen_says_it_is_reading_until_the_lists_are_in(testjack_home, monkeypatch):
    # The walk: `testjack-tui open <session>` showed "No benchmarks yet" and "No sessions yet"
    # for seconds before the session opened: it read as the session being gone.
    import threading

    from textual.widgets import Static

    from testjack_tui.engine.session import AuditSession
    from testjack_tui.tui.screens.benchmarks import BenchmarksScreen

    release = threading.Event()
    listed = AuditSession.list

    def slow_list(*args, **kwargs):
        release.wait(30)  # a hang guard; the test releases it
        return listed(*args, **kwargs)

    monkeypatch.setattr(AuditSession, "list", staticmethod(slow_list))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BenchmarksScreen))
        screen = app.screen
        empty = screen.query_one("#session-empty", Static)
        await wait_for(pilot, lambda: "Reading" in str(empty.content), what="the sessions being read")
        assert "No sessions" not in str(empty.content)
        release.set()
        await wait_for(pilot, lambda: "Reading" not in str(empty.content))
        assert str(empty.content) == "No sessions yet." or not empty.display


async def test_at_80_columns_the_gauges_keep_the_rounds_on_the_line_past_ten_minutes():
    # The walk, at 80×24: "time 10:04/∞ (you 1:27)  runs 49/∞  rounds" — the rounds gauge's bar
    # and numbers were pushed off the line.
    from textual.app import App

    from testjack_tui.engine import events as ev
    from testjack_tui.tui import live_state as ls
    from testjack_tui.tui.widgets.budget import BudgetGauges

    class Host(App):
        def compose(self):
            yield BudgetGauges(id="gauges")

    state = ls.LiveSession("sess", [])
    async with Host().run_test(size=(80, 24)) as pilot:
        gauges = pilot.app.query_one(BudgetGauges)
        for seconds, waiting in ((64, 0), (604, 87), (4000, 3700)):
            state.apply(ev.BudgetChanged("sess", usd=0.0, usd_limit=None, tokens=0, tokens_limit=None,
                                         seconds=seconds, seconds_limit=None, test_runs=49, test_runs_limit=None,
                                         waiting_seconds=waiting))
            gauges.show(state, rounds_limit=15, rounds_done=1)
            await pilot.pause()
            line = gauges.content.plain
            assert len(line) <= gauges.content_region.width and line.rstrip().endswith("1/15"), line
        # With room to spare the bar is there.
        state.apply(ev.BudgetChanged("sess", usd=0.0, usd_limit=None, tokens=0, tokens_limit=None, seconds=64,
                                     seconds_limit=None, test_runs=49, test_runs_limit=None))
        gauges.show(state, rounds_limit=15, rounds_done=1)
        assert "rounds ▕" in gauges.content.plain


async def test_at_80x24_the_reqs_legend_shows_its_keys_whole():
    # The walk, at 80×24: the legend ended "(the task analysis's tracing, else the aud" — the
    # keys (t, enter, i) came last and were cut.
    from textual.widgets import Label

    session, screen = finished()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished")
        await pilot.press("f9")
        legend = screen.query_one("#requirements-legend", Label)
        await wait_for(pilot, lambda: legend.content_region.width > 0)

        def shown() -> str:
            return " ".join(legend.render_line(y).text.strip() for y in range(legend.content_region.height))

        await wait_for(pilot, lambda: all(part in shown() for part in ("t: next task", "enter or i", "else the audits')")),
                       what="the legend's keys whole")


def test_with_one_row_left_the_status_names_what_waits_and_counts_the_rest():
    # The walk, at 80×24: with three decisions and a wait for the operator's test the header took
    # three rows; the one left read "merge-list-strategies: waits for your decision │
    # cache-async-memoize: round" (cut).
    from rich.console import Console

    from testjack_tui.tui.task_lines import task_status

    pairs = [("cache-async-memoize", "round 2 → lumen__2"), ("duration-units-js", "round 3 → lumen__1"),
             ("merge-list-strategies", "waits for your decision"), ("parse-duration-compound", "queued (next)"),
             ("recordset-metadata", "queued (1 ahead)")]
    console = Console(width=78)
    shown = task_status(pairs, 78, 1, console)
    assert len(shown.wrap(console, 78)) == 1, shown.plain
    assert shown.plain == "merge-list-strategies: waits for your decision  │  +4 more tasks (F2)"
    # With the rows, every task by name.
    assert all(task in task_status(pairs, 78, 4, console).plain for task, _ in pairs)
