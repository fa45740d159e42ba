"""Waiting in Pilot tests for what the operator would see, not for a fixed time.

The suite saturates both cores, so a screen may take far longer than usual to lay out and paint:
a fixed `pilot.pause(0.3)` before reading the screen flakes (CI once read only the header row).
Tests poll for the state or text they expect instead; the timeout is only a hang guard, and on
expiry the message says what was awaited (and, for text, what the screen showed last).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

HANG_GUARD = 60.0  # seconds: only a test that hangs gets this far, however loaded the machine
POLL = 0.05


async def wait_for(pilot: Any, predicate: Callable[[], object], timeout: float = HANG_GUARD,
                   what: str = "the condition") -> None:
    """Until `predicate()` is true (the app keeps running meanwhile)."""
    for _ in polls(what, timeout):
        if predicate():
            return
        await pilot.pause(POLL)


def polls(what: str, timeout: float = HANG_GUARD) -> Iterator[int]:
    """The rounds of a test's own polling loop (it breaks out when done), for at most `timeout`
    seconds: a count of rounds would be a time limit that shrinks as the machine gets busier."""
    deadline = time.monotonic() + timeout
    round_ = 0
    while time.monotonic() < deadline:
        yield round_
        round_ += 1
    raise AssertionError(f"{what}: not reached within the {timeout:.0f} s hang guard")


def screen_lines(app: Any) -> list[str]:
    """What the terminal shows now, one string per row (the top screen and whatever shows through it)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: Any) -> str:
    return "\n".join(screen_lines(app))


async def wait_text(app: Any, pilot: Any, *texts: str, timeout: float = HANG_GUARD) -> str:
    """Until every one of `texts` is on screen; returns the screen's text then."""
    shown = ""

    def all_shown() -> bool:
        nonlocal shown
        shown = screen_text(app)
        return all(text in shown for text in texts)

    try:
        await wait_for(pilot, all_shown, timeout, what=f"on screen: {list(texts)!r}")
    except AssertionError as missed:
        raise AssertionError(f"{missed}; the screen showed:\n{shown}") from None
    return shown


async def finished_and_told(pilot: Any, screen: Any) -> None:
    """Until the session is over and its end notified (to be cleared: a toast would hide the screen)."""
    await wait_for(pilot, lambda: screen.state.state == "finished", what="the session's end")
    await wait_for(pilot, lambda: any(n.title == "Audit" for n in pilot.app._notifications),
                   what="the notification of the session's end")
