"""A thread-safe inbox for engine events.

The engine (and the sandbox under it) may call the subscriber from any thread and at any rate.
We only append here; the app drains the inbox on a timer and folds the batch into the screen's
state, so 2,000 output lines a second cost one redraw per tick, not one per line.
"""
from __future__ import annotations

import threading
from testjack_tui.engine.events import Event

MAX_PENDING = 50_000  # beyond this, world output is dropped (counted) rather than stall the UI


class EventInbox:
    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._lock = threading.Lock()
        self._items: list[Event] = []
        self._max = max_pending
        self.dropped = 0

    def put(self, event: Event) -> None:
        with self._lock:
            if len(self._items) >= self._max and getattr(event, "kind", "") == "world_state" \
                    and getattr(event, "state", "") == "output":
                self.dropped += 1
                return
            self._items.append(event)

    __call__ = put  # usable directly as the session's subscriber callback

    def drain(self) -> list[Event]:
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
