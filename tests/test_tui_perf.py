"""The Audit screen under load: 8 worlds streaming 2,000 lines a second in total while the
operator presses keys. Events enter the Audit screen exactly where the engine delivers them
(the session's subscriber inbox), from another thread, as the sandbox's listeners do.

Behaviour only: every key takes effect and output stays bounded and current. How fast the keys
take effect is measured, against the idle app, by `python -m tests.perf` (tests/perf/ui_lag.py);
no absolute times are asserted here."""
from __future__ import annotations

import asyncio
import threading
import time

from textual import events

from test_engine_loop import build
from tests.perf.ui_lag import WORLDS, stream_world_output
from testjack_tui.engine.events import WorldState
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.live_state import WORLD_LINES
from testjack_tui.tui.screens.audit import AuditScreen, trial_views

KEYS = 12


async def test_keys_take_effect_and_output_stays_bounded_while_8_worlds_stream():
    session, _, _ = build({"step": True})
    bench = session._deps["benchmark"]
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await pilot.pause(0.3)
        for w in range(WORLDS):
            screen.inbox.put(WorldState(session.id, world=f"t1/model/w{w}", container=f"c{w}",
                                        state="running", command="pytest -q", image="img"))
        await pilot.press("f4")  # the Worlds tab: output on screen while it streams
        stop, sent = threading.Event(), [0]
        producer = threading.Thread(target=stream_world_output, args=(screen.inbox, session.id, stop, sent))
        producer.start()
        tabs = screen.query_one("#audit-tabs")
        switched = 0
        try:
            # Each key switches tabs; wait until the screen has acted on it. (Pilot.press also
            # waits for the CPU to go idle, which it never does under load.)
            keys = [("f3", "candidates-tab"), ("f5", "agent-tab"), ("f4", "worlds-tab")]
            for i in range(KEYS):
                key, expected = keys[i % len(keys)]
                app.post_message(events.Key(key, None))
                deadline = time.monotonic() + 30  # a hang guard, not a speed requirement
                while tabs.active != expected:
                    assert time.monotonic() < deadline, f"key {key} never switched to {expected}"
                    await asyncio.sleep(0.005)
                switched += 1
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            producer.join()
        await pilot.pause(0.3)
        assert switched == KEYS
        assert sent[0] > 0  # the stream really ran while the keys were pressed
        # Output is kept, bounded per world, and what is shown is the newest.
        shown = screen.state.worlds["t1/model/w0"]
        assert len(shown.lines) == min(WORLD_LINES, shown.total)
        assert shown.total >= sent[0] // WORLDS - 20
        assert len(screen.inbox) == 0
