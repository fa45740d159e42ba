"""Tabs whose containers draw nothing of their own.

A tab switch shows one pane and hides another; Textual then repaints every container between the
screen and the pane's widgets (TabbedContent, its ContentSwitcher, the TabPane) line by line
through their style caches, although their children cover them whole: ~2.5 ms of every key
press on a 200x50 Audit screen. A container with no border draws only its background, which is
what Textual's BLANK widgets draw, without the styling pass.
"""
from __future__ import annotations

from textual.widget import Widget
from textual.widgets import ContentSwitcher, TabbedContent, TabPane


def draws_blank(widget: Widget) -> bool:
    """True when `widget` draws only its background (no border, no title): BLANK is exact."""
    styles = widget.styles
    edges = (styles.border_top, styles.border_right, styles.border_bottom, styles.border_left)
    return all(kind in ("", "none", "hidden") for kind, _ in edges) and not (
        widget.border_title or widget.border_subtitle)


class BlankPane(TabPane):
    """A TabPane that paints its background as a blank widget does (it has no border)."""

    BLANK = True


class BlankTabs(TabbedContent):
    """A TabbedContent whose own area and content switcher paint as blank widgets."""

    BLANK = True

    def on_mount(self) -> None:
        for widget in (self, *self.query_children(ContentSwitcher), *self.query(TabPane)):
            if not draws_blank(widget):
                # A border set in CSS would disappear under BLANK: keep Textual's painting.
                setattr(widget, "BLANK", False)
            elif not widget.BLANK:
                setattr(widget, "BLANK", True)
