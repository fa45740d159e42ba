"""The Audit screen under load: 8 worlds streaming 2,000 lines a second in total while the
operator presses keys. Events enter the Audit screen exactly where the engine delivers them
(the session's subscriber inbox), from another thread, as the sandbox's listeners do.

Behaviour only: every key takes effect and output stays bounded and current. How fast the keys
take effect is measured, against the idle app, by `python -m tests.perf` (tests/perf/ui_lag.py);
no absolute times are asserted here."""
from __future__ import annotations

import asyncio

from tests.perf.ui_lag import TAB_KEYS, WORLDS, streaming_audit_app, switch_tab
from tui_wait import wait_for
from testjack_tui.tui.live_views import WORLD_LINES

KEYS = 12


async def test_keys_take_effect_and_output_stays_bounded_while_8_worlds_stream():
    async with streaming_audit_app(load=True) as (app, pilot, screen, sent, stop_stream):
        switched = 0
        try:
            for i in range(KEYS):
                key, expected = TAB_KEYS[i % len(TAB_KEYS)]
                await switch_tab(app, screen, key, expected, timeout=30)  # a hang guard, not a speed requirement
                switched += 1
                await asyncio.sleep(0.05)
        finally:
            stop_stream()
        await wait_for(pilot, lambda: len(screen.inbox) == 0, what="the streamed output taken in")
        assert switched == KEYS
        assert sent[0] > 0  # the stream really ran while the keys were pressed
        # Output is kept, bounded per world, and what is shown is the newest.
        shown = screen.state.worlds["t1/model/w0"]
        assert len(shown.lines) == min(WORLD_LINES, shown.total)
        assert shown.total >= sent[0] // WORLDS - 20


async def test_the_footer_follows_the_keys_and_rebuilds_only_when_they_change():
    from testjack_tui.tui.widgets.footer import QuietFooter

    def footer_words(screen) -> list[str]:
        return screen.query_one(QuietFooter).descriptions

    async with streaming_audit_app(load=False) as (app, pilot, screen, sent, stop_stream):
        footer = screen.query_one(QuietFooter)
        rebuilt = []
        original = footer.refresh

        def counted(*args, **kwargs):
            rebuilt.append(1)
            return original(*args, **kwargs)

        footer.refresh = counted

        async def on_show(pane: str) -> None:
            """Until the tab's pane is laid out on screen and the footer has checked its keys since."""
            await wait_for(pilot, lambda: screen.query_one(pane).region.height > 0 and not footer._queued,
                           what=f"{pane} on show")
            await pilot.pause()

        await switch_tab(app, screen, "f3", "candidates-tab", timeout=30)
        await on_show("#candidate-table")
        assert "Follow" not in footer_words(screen) and "Next" in footer_words(screen)
        rebuilt.clear()
        # Candidates → Worlds: the same keys apply, so the footer is not even repainted.
        await switch_tab(app, screen, "f4", "worlds-tab", timeout=30)
        await on_show("#world-table")
        assert rebuilt == [] and "Next" in footer_words(screen)
        # The Agent tab has keys of its own: they appear, and go again on the way back.
        await switch_tab(app, screen, "f5", "agent-tab", timeout=30)
        await wait_for(pilot, lambda: "Follow" in footer_words(screen), what="the Agent tab's keys in the footer")
        assert len(rebuilt) == 1
        await switch_tab(app, screen, "f3", "candidates-tab", timeout=30)
        await wait_for(pilot, lambda: "Follow" not in footer_words(screen), what="the Agent tab's keys gone")


async def test_a_trial_changing_state_updates_its_row_only_and_draws_like_a_rebuild():
    from textual.app import App

    from testjack_tui.engine import events as ev
    from testjack_tui.tui import live_state as ls
    from testjack_tui.tui import live_views as lv
    from testjack_tui.tui.widgets.trials import TrialsTable

    views = [lv.TrialView("t", f"t__m__{i}", model="m") for i in range(5)]
    state = ls.LiveSession("s", views)

    class One(App):
        def compose(self):
            yield TrialsTable(id="live")
            yield TrialsTable(id="fresh")

    app = One()
    async with app.run_test(size=(100, 20)) as pilot:
        live = app.query_one("#live", TrialsTable)
        live.show(state)
        live.move_cursor(row=3)
        added = []
        original = live.add_row
        live.add_row = lambda *a, **k: added.append(k.get("key")) or original(*a, **k)
        touched = []
        original_update = live.update_cell
        live.update_cell = lambda row, column, value, **k: touched.append((row, column)) or \
            original_update(row, column, value, **k)
        state.apply(ev.TrialState("s", task_id="t", trial_id="t__m__2", state="active"))
        live.show(state)
        await pilot.pause()
        assert added == [] and touched == [("t/t__m__2", "state")]
        assert live.cursor_row == 3  # the operator's place is kept
        # A longer note widens its column: the table is rebuilt, exactly as a fresh one draws it.
        state.apply(ev.TrialState("s", task_id="t", trial_id="t__m__4", state="refuted",
                                  by="t:t__m__1:1.v1 and a long explanation"))
        live.show(state)
        fresh = app.query_one("#fresh", TrialsTable)
        fresh.show(state)
        await pilot.pause()
        assert [live.get_row_at(i) for i in range(5)] == [fresh.get_row_at(i) for i in range(5)]
        assert [c.content_width for c in live.columns.values()] == \
               [c.content_width for c in fresh.columns.values()]


async def test_hidden_world_output_waits_and_the_worlds_tab_catches_up():
    from textual.widgets import Log

    from testjack_tui.engine.events import WorldState

    async with streaming_audit_app(load=False) as (app, pilot, screen, sent, stop_stream):
        await switch_tab(app, screen, "f3", "candidates-tab", timeout=30)
        log = screen.query_one("#world-log", Log)
        before = log.line_count
        for i in range(3):
            # w7: the running world the Worlds tab was following when it was left
            screen.inbox.put(WorldState(screen.session.id, world="t1/model/w7", container="c7",
                                        state="output", text=f"hidden line {i}\n"))
        worlds = screen.state.worlds
        await wait_for(pilot, lambda: len(screen.inbox) == 0 and "t1/model/w7" in worlds
                       and "hidden line 2" in worlds["t1/model/w7"].lines, what="the hidden output taken in")
        shown = worlds["t1/model/w7"]
        await pilot.pause()
        assert log.line_count == before  # nothing drawn into a log nobody sees
        await switch_tab(app, screen, "f4", "worlds-tab", timeout=30)
        await wait_for(pilot, lambda: log.lines[-1] == "hidden line 2", what="the Worlds tab caught up")
        assert log.line_count == min(len(shown.lines), WORLD_LINES)


async def test_tables_keep_their_drawn_rows_across_tab_switches_and_follow_a_theme_change():
    """Switching tabs moves focus and hides/shows tables; their drawn rows are kept (a rebuild
    cost a few ms per key), yet a theme change still repaints them in the new colours."""
    async with streaming_audit_app(load=False) as (app, pilot, screen, sent, stop_stream):
        table = screen.query_one("#world-table")
        await wait_for(pilot, lambda: table.row_count == WORLDS, what="the worlds listed")
        for key, expected in TAB_KEYS * 2:
            await switch_tab(app, screen, key, expected, timeout=30)
            await pilot.pause(0.05)
        await switch_tab(app, screen, "f4", "worlds-tab", timeout=30)
        await wait_for(pilot, lambda: len(table._line_cache) > 0, what="the worlds table drawn")
        await pilot.pause()
        drawn = len(table._line_cache)
        first = table.render_line(1)
        await switch_tab(app, screen, "f3", "candidates-tab", timeout=30)
        await pilot.pause(0.05)
        await switch_tab(app, screen, "f4", "worlds-tab", timeout=30)
        await wait_for(pilot, lambda: table.region.height > 0, what="the worlds table on show again")
        await pilot.pause()
        assert len(table._line_cache) >= drawn  # nothing thrown away by the round trip
        assert table.render_line(1) == first
        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        # New colours, not the cached dark rows.
        await wait_for(pilot, lambda: table.render_line(1) != first, what="the table in the new theme's colours")
