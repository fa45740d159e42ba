"""A footer that rebuilds itself only when what it shows changes.

Textual's Footer recomposes (unmounts and mounts a widget per key, restyling each) on every
bindings update — and bindings update on every focus change, tab switch and `refresh_bindings`.
On the Audit screen that was the biggest cost of a key press (several recomposes per press,
tens of ms each). The keys shown depend only on the screen's active bindings, so compare those
and skip the rebuild when they are the same.
"""
from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


def shown_keys(screen: Screen, command_palette: str) -> tuple[Any, ...]:
    """What a Footer would draw for `screen`: each shown binding with its state."""
    out = []
    for key, (_, binding, enabled, tooltip) in screen.active_bindings.items():
        if binding.show or key == command_palette:
            out.append((key, binding.key_display, binding.description, binding.action, binding.group,
                        enabled, tooltip))
    return tuple(out)


class QuietFooter(Footer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._drawn: tuple[Any, ...] | None = None
        self._queued = False

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._queued:  # a burst of updates (focus + tab + refresh) makes one check
            self._queued = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._queued = False
        if not self.is_attached:
            return
        keys = shown_keys(self.screen, self.app.COMMAND_PALETTE_BINDING)
        if keys == self._drawn:
            return
        self._drawn = keys
        await self.recompose()
