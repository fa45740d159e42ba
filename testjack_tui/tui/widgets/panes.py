"""Tabs for a screen where every key press counts: one widget draws the tab titles.

Textual's TabbedContent draws its tab row with a dozen widgets (a scroll container, two bars, one
widget per title and the underline) and switches a tab by restyling the old and new title
(CSS applied twice) and moving the underline after the next paint (a second frame). On the
Audit screen at 200x50 that was ~5 ms of every tab key. Here the row is one widget that draws
two lines of text (the titles, then the underline as Textual draws it) and a switch repaints it
once, in the same frame as the pane it shows.

The containers between the screen and a pane's widgets have no border: they paint only their
background, which Textual's BLANK widgets paint without the styling pass, so they are BLANK
(~2.5 ms per switch less at 200x50).
"""
from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.renderables.bar import Bar
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import ContentSwitcher

from testjack_tui.tui.widgets.strips import line_strip


class Pane(Vertical):
    """One tab's content; `title` is its tab title."""

    BLANK = True
    DEFAULT_CSS = """
    Pane {
        height: 1fr;
    }
    """

    def __init__(self, title: str, *children: Widget, id: str):
        super().__init__(*children, id=id)
        self.title = title


class TabBar(Widget, can_focus=False):
    """The titles of the visible tabs and, under them, a bar marking the active one. The
    titles scroll sideways to keep the active one in view when they do not fit."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"tab-bar--tab", "tab-bar--active", "tab-bar--underline"}
    DEFAULT_CSS = """
    TabBar {
        width: 1fr;
        height: 2;
        & > .tab-bar--tab {
            color: $foreground 50%;
        }
        & > .tab-bar--active {
            color: $foreground;
        }
        & > .tab-bar--underline {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:ansi {
            & > .tab-bar--tab {
                text-style: dim;
            }
            & > .tab-bar--active {
                text-style: not dim bold;
            }
            & > .tab-bar--underline {
                color: $block-cursor-background;
                background: $border-blurred;
            }
        }
    }
    """

    class Clicked(Message):
        def __init__(self, tab: str):
            super().__init__()
            self.tab = tab

    def __init__(self, titles: dict[str, str], active: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.titles = dict(titles)  # tab id -> title, in order
        self.hidden: set[str] = set()
        self.active = active
        self._spans: list[tuple[int, int, str]] = []  # screen columns of each title, as drawn
        self._lines: tuple[Text, Bar] | None = None

    def _layout(self) -> tuple[list[tuple[int, int, str]], int]:
        """Each visible title's (start, end) columns (padding included) and the scroll offset
        that keeps the active title in view."""
        spans, x = [], 0
        for tab, title in self.titles.items():
            if tab in self.hidden:
                continue
            width = Text(title).cell_len + 2
            spans.append((x, x + width, tab))
            x += width
        offset = 0
        width = self.size.width
        active = next(((s, e) for s, e, t in spans if t == self.active), None)
        if x > width and active is not None:
            offset = max(0, min((active[0] + active[1]) // 2 - width // 2, x - width))
        return spans, offset

    def render_line(self, y: int) -> Strip:
        if y == 0 or self._lines is None:
            self._lines = self._draw()
        return line_strip(self, self._lines[y], y) if y < 2 else Strip.blank(self.size.width, self.rich_style)

    def render(self) -> Group:
        return Group(*self._draw())

    def _draw(self) -> tuple[Text, Bar]:
        """The titles (scrolled to keep the active one in view) and the underline."""
        spans, offset = self._layout()
        tab_style = self.get_component_rich_style("tab-bar--tab")
        active_style = self.get_component_rich_style("tab-bar--active")
        titles = Text(no_wrap=True, overflow="crop")
        highlight = (0, 0)
        for start, end, tab in spans:
            style = active_style if tab == self.active else tab_style
            titles.append(f" {self.titles[tab]} ", style=style)
            if tab == self.active:
                highlight = (start + 1 - offset, end - 1 - offset)
        titles = titles[offset:offset + self.size.width] if offset else titles
        self._spans = [(s - offset, e - offset, t) for s, e, t in spans]
        bar = self.get_component_rich_style("tab-bar--underline")
        underline = Bar(highlight_range=highlight, highlight_style=Style.from_color(bar.color),
                        background_style=Style.from_color(bar.bgcolor))
        return titles, underline

    def on_click(self, event: events.Click) -> None:
        for start, end, tab in self._spans:
            if start <= event.x < end:
                self.post_message(self.Clicked(tab))
                return


class _BlankSwitcher(ContentSwitcher):
    """No border: its background is all it paints."""

    BLANK = True


class LightTabs(Widget):
    """TabbedContent's part the Audit screen uses (active, labels, show / hide a tab), with
    one TabBar for the titles. Compose it with Pane children."""

    BLANK = True
    DEFAULT_CSS = """
    LightTabs {
        height: 1fr;
        & > ContentSwitcher {
            height: 1fr;
        }
    }
    """

    class TabActivated(Message):
        """The active tab changed (by a key or a click)."""

        def __init__(self, tabs: "LightTabs", tab: str):
            super().__init__()
            self.tabs, self.tab = tabs, tab

    def __init__(self, initial: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._panes: list[Pane] = []
        self._active = initial

    def compose_add_child(self, widget: Widget) -> None:
        if not isinstance(widget, Pane):
            raise TypeError("LightTabs holds Pane widgets")
        self._panes.append(widget)

    def compose(self) -> ComposeResult:
        yield TabBar({p.id or "": p.title for p in self._panes}, self._active)
        yield _BlankSwitcher(*self._panes, initial=self._active)

    @property
    def active(self) -> str:
        return self._active

    @active.setter
    def active(self, tab: str) -> None:
        if tab == self._active:
            return
        self._active = tab
        self.query_one(ContentSwitcher).current = tab
        bar = self.query_one(TabBar)
        bar.active = tab
        bar.refresh()
        self.post_message(self.TabActivated(self, tab))

    def set_label(self, tab: str, label: str) -> None:
        bar = self.query_one(TabBar)
        if bar.titles.get(tab) != label:
            bar.titles[tab] = label
            bar.refresh()

    def show_tab(self, tab: str) -> None:
        bar = self.query_one(TabBar)
        if tab in bar.hidden:
            bar.hidden.discard(tab)
            bar.refresh()

    def hide_tab(self, tab: str) -> None:
        bar = self.query_one(TabBar)
        if tab not in bar.hidden:
            bar.hidden.add(tab)
            bar.refresh()

    def on_tab_bar_clicked(self, message: TabBar.Clicked) -> None:
        message.stop()
        self.active = message.tab
