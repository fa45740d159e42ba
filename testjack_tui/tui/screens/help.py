"""F1: what this screen is for and every key that works on it, read from the live bindings."""
from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

GLOSSARY = [
    ("trial", "one agent run on a task: its patch s and the verdict the benchmark recorded"),
    ("world", "a container in one state: null R, reference R[G], model R[s]"),
    ("candidate", "a test an agent or you propose"),
    ("witness", "a candidate that passes on the reference, fails on the trial, and was judged valid"),
    ("round", "one audit of one sampled trial (lightweight loop)"),
    ("active", "passing trials not yet refuted nor audited clean"),
    ("ambiguous", "refuted only by an implicit requirement most models read differently"),
]


def help_keys(screen: Screen[Any]) -> tuple[list[tuple[Binding, str]], list[tuple[Binding, str]]]:
    """The keys F1 lists for `screen`, read from the bindings themselves so the table cannot
    drift from them: (the keys that work now — the screen's, the app's, then the focused
    widget's —, the screen's keys that do not work now). A screen's `help_hidden(action)` drops
    keys that cannot work in this session at all (an operator's keys with no operator)."""
    hidden = getattr(screen, "help_hidden", lambda action: False)
    seen: set[tuple[str, str]] = set()
    now: list[tuple[Binding, str]] = []

    def described(b: Binding) -> str:
        return b.description + (f" — {b.tooltip}" if b.tooltip else "")

    active = screen.active_bindings
    ordered = sorted(active.values(), key=lambda a: 0 if a.node is screen or a.node is screen.app else 1)
    for item in ordered:
        b = item.binding
        if not b.description or (b.action, b.description) in seen or hidden(b.action):
            continue
        if item.enabled:
            seen.add((b.action, b.description))
            now.append((b, described(b)))
    later: list[tuple[Binding, str]] = []
    for bindings in screen._bindings.key_to_bindings.values():
        for b in bindings:
            if not b.description or (b.action, b.description) in seen or hidden(b.action):
                continue
            seen.add((b.action, b.description))
            later.append((b, described(b)))
    return now, later


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close", id="help.close")]

    def __init__(self, over: Screen[Any]) -> None:
        super().__init__()
        self.over = over

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body", classes="dialog"):
            yield Static(self._help_table(), id="help-text")

    def _help_table(self) -> Table:
        outer = Table.grid(padding=(0, 1))
        outer.add_column()
        title = getattr(self.over, "HELP_TITLE", type(self.over).__name__)
        outer.add_row(Text(f"{title} — keys", style="bold"))
        intro = getattr(self.over, "HELP", "")
        if intro:
            outer.add_row(Text(intro.strip()))
        now, later = help_keys(self.over)
        outer.add_row(self._keys_table(now))
        if later:
            outer.add_row(Text("Not available now (they work when the screen says so):", style="bold dim"))
            outer.add_row(self._keys_table(later, style="dim"))
        outer.add_row(Text("Every key is also in the command palette (ctrl+p). Mouse is optional.",
                           style="dim"))
        words = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        words.add_column(style="bold", no_wrap=True)
        words.add_column()
        for word, meaning in GLOSSARY:
            words.add_row(word, meaning)
        outer.add_row(Text("Words", style="bold"))
        outer.add_row(words)
        return outer

    def _keys_table(self, rows: list[tuple[Binding, str]], style: str = "") -> Table:
        keys = Table(show_header=False, box=None, padding=(0, 2, 0, 0), style=style)
        keys.add_column(style="bold cyan" if not style else style, no_wrap=True)
        keys.add_column()
        for binding, description in rows:
            keys.add_row(self.app.get_key_display(binding), description)
        return keys

    def action_close(self) -> None:
        self.dismiss(None)
