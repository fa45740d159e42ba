"""F1: what this screen is for and every key that works on it, read from the live bindings."""
from __future__ import annotations

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


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close", id="help.close")]

    def __init__(self, over: Screen):
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
        keys = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        keys.add_column(style="bold cyan", no_wrap=True)
        keys.add_column()
        seen = set()
        # The screen's and the app's own keys first; the focused widget's navigation keys after.
        ordered = sorted(self.over.active_bindings.values(),
                         key=lambda a: 0 if a.node is self.over or a.node is self.app else 1)
        for active in ordered:
            b = active.binding
            if not b.description or (b.action, b.description) in seen:
                continue
            seen.add((b.action, b.description))
            keys.add_row(self.app.get_key_display(b), b.description + (f" — {b.tooltip}" if b.tooltip else ""))
        outer.add_row(keys)
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

    def action_close(self) -> None:
        self.dismiss(None)
