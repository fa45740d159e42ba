"""The agents' stream: text as it arrives, and each tool call with its arguments and result.

Results are truncated; enter (or x) on an entry expands it. Only entries that changed since the
last flush are redrawn.
"""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import ListItem, ListView, Static

from testjack_tui.tui.text import cell, clean
from testjack_tui.tui.live_state import LiveSession
from testjack_tui.tui.live_views import AGENT_ENTRIES, RESULT_PREVIEW, AgentEntry

ROLE_STYLE = {"audit": "bold magenta", "reviewer": "bold cyan", "task_analysis": "bold blue"}
TEXT_PREVIEW = 1200


def render_entry(entry: AgentEntry) -> Text:
    who = f"{entry.role}" + (f" · {entry.trial_id}" if entry.trial_id else f" · {entry.task_id}")
    text = cell(who + "  ", style=ROLE_STYLE.get(entry.role, "bold"))
    if entry.kind == "text":
        body = clean(entry.text)
        if not entry.expanded and len(body) > TEXT_PREVIEW:
            body = "…" + body[-TEXT_PREVIEW:]
        text.append(body.rstrip())
        return text
    text.append_text(cell(f"⚙ {entry.name}", style="bold yellow"))
    args = clean(entry.arguments)
    args = args if entry.expanded or len(args) <= 200 else args[:200] + "…"
    text.append(f"({args})", style="yellow")
    if not entry.finished and not entry.result:
        text.append("  running…", style="italic dim")
        return text
    result = clean(entry.result)
    if not entry.expanded and len(result) > RESULT_PREVIEW:
        hidden = len(result) - RESULT_PREVIEW
        result = result[:RESULT_PREVIEW]
        text.append("\n" + result, style="dim")
        text.append(f"\n[{hidden} more characters — enter expands]", style="italic cyan")
    else:
        text.append("\n" + result, style="dim")
    return text


class EntryItem(ListItem):
    def __init__(self, entry: AgentEntry):
        super().__init__(Static(render_entry(entry)))
        self.entry = entry
        self.version = entry.version

    def redraw(self) -> None:
        self.version = self.entry.version
        self.query_one(Static).update(render_entry(self.entry))


class AgentStream(ListView):
    """Follows the newest entry until the operator moves up; End (or moving to the last entry)
    follows again."""

    BINDINGS = [Binding("x", "expand", "Expand result", id="agent.expand"),
                Binding("end", "follow", "Follow", id="agent.follow")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown_total = 0
        self.follow = True

    def on_key(self, event: events.Key) -> None:
        if event.key in ("up", "pageup", "home"):
            self.follow = False
        elif event.key == "down" and self.index is not None and self.index >= len(self.children) - 2:
            self.follow = True

    def on_click(self) -> None:
        self.follow = False

    def action_follow(self) -> None:
        self.follow = True
        self._to_end()

    def on_show(self) -> None:
        if self.follow:
            self.call_after_refresh(self._to_end)

    def show(self, state: LiveSession) -> None:
        new = min(state.agent_total - self._shown_total, len(state.agent_stream))
        items = list(self.query(EntryItem))
        # Entries already on screen that changed (streamed text, a tool's result arriving).
        for item in items[-50:]:
            if item.entry.version != item.version:
                item.redraw()
        if new > 0:
            fresh = list(state.agent_stream)[-new:]
            self.extend([EntryItem(e) for e in fresh])
            overflow = len(items) + len(fresh) - AGENT_ENTRIES
            if overflow > 0:
                for item in items[:overflow]:
                    item.remove()
            if self.follow:
                self.call_after_refresh(self._to_end)
        self._shown_total = state.agent_total

    def _to_end(self) -> None:
        count = len(self.children)
        if count:
            self.index = count - 1
            self.scroll_end(animate=False)

    def action_expand(self) -> None:
        item = self.highlighted_child
        if isinstance(item, EntryItem):
            item.entry.expanded = not item.entry.expanded
            item.redraw()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        self.action_expand()
