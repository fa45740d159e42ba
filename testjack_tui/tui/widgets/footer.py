"""The footer: the keys that apply now, drawn as one line of text.

Textual's Footer is a container with a widget per key, rebuilt (unmount, mount, restyle, lay out
the screen again) on every bindings update — and bindings update on every focus change, tab
switch and `refresh_bindings`. On the Audit screen that rebuild and the layout after it were the
largest cost of a key press. This footer is a single widget: when the keys change it repaints
its one line; when they do not, it does nothing. It looks like Textual's compact footer (the
same theme colours) and a click on a key presses it.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from testjack_tui.tui.widgets.strips import line_strip

PALETTE_SEPARATOR = "▏"


class ShownKey(NamedTuple):
    key: str  # what a click simulates
    display: str  # how the key is written (^s, f1, space)
    description: str
    enabled: bool


def shown_keys(screen: Screen[Any]) -> tuple[list[ShownKey], ShownKey | None]:
    """What the footer draws for `screen`: the shown bindings, one per action, and the command
    palette's key (drawn on the right)."""
    app = screen.app
    keys: list[ShownKey] = []
    actions: set[str] = set()
    palette = None
    for key, (_, binding, enabled, _tooltip) in screen.active_bindings.items():
        if key == app.COMMAND_PALETTE_BINDING:
            if app.ENABLE_COMMAND_PALETTE:
                palette = ShownKey(binding.key, app.get_key_display(binding), binding.description, enabled)
            continue
        if not binding.show or binding.action in actions:
            continue
        actions.add(binding.action)
        keys.append(ShownKey(binding.key, app.get_key_display(binding), binding.description, enabled))
    return keys, palette


class QuietFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer--key", "footer--description"}
    DEFAULT_CSS = """
    QuietFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self, *args: Any, compact: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys: tuple[list[ShownKey], ShownKey | None] = ([], None)
        self._spans: list[tuple[int, int, ShownKey]] = []  # columns of each key, for clicks
        self._queued = False

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self._keys = shown_keys(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if screen is not self.screen or not self.is_attached:
            return
        if not self._queued:  # a burst of updates (focus + tab + refresh) makes one check
            self._queued = True
            self.call_after_refresh(self._redraw_if_changed)

    def _redraw_if_changed(self) -> None:
        self._queued = False
        if not self.is_attached:
            return
        keys = shown_keys(self.screen)
        if keys != self._keys:
            self._keys = keys
            self.refresh()

    @property
    def descriptions(self) -> list[str]:
        """The words shown, left to right (what a user reads in the footer)."""
        keys, palette = self._keys
        return [k.description for k in keys] + ([palette.description] if palette else [])

    def render_line(self, y: int) -> Strip:
        return line_strip(self, self.render(), y)

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer--key")
        description_style = self.get_component_rich_style("footer--description")
        width = self.size.width
        keys, palette = self._keys
        right = Text()
        if palette is not None:
            right = Text.assemble(PALETTE_SEPARATOR, (palette.display, key_style), " ",
                                  (palette.description, description_style))
        line = Text(no_wrap=True, overflow="crop")
        spans = []
        for shown in keys:
            start = line.cell_len
            part = Text.assemble((shown.display, key_style), " ", (shown.description, description_style), " ")
            if not shown.enabled:
                part.stylize("dim")
            line.append_text(part)
            spans.append((start, line.cell_len, shown))
        room = max(0, width - right.cell_len - 1)
        line.truncate(room, overflow="crop")
        line.pad_right(max(0, width - line.cell_len - right.cell_len))
        if palette is not None:
            spans.append((line.cell_len + 1, width, palette))
        line.append_text(right)
        self._spans = [(s, min(e, room) if k is not palette else e, k) for s, e, k in spans if s < width]
        return line

    def on_click(self, event: events.Click) -> None:
        for start, end, shown in self._spans:
            if start <= event.x < end:
                if shown.enabled:
                    self.app.simulate_key(shown.key)
                else:
                    self.app.bell()
                return
