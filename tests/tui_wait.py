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
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within the {timeout:.0f} s hang guard")
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
    deadline = time.monotonic() + timeout
    while True:
        shown = screen_text(app)
        missing = [text for text in texts if text not in shown]
        if not missing:
            return shown
        if time.monotonic() > deadline:
            raise AssertionError(f"not on screen within the {timeout:.0f} s hang guard: {missing!r}; "
                                 f"the screen showed:\n{shown}")
        await pilot.pause(POLL)
