"""Untrusted text (trial diffs, test output, agent text, benchmark and trial names) on screen.

Everything the benchmark, a trial or an agent wrote must not drive the terminal nor the screen:
control characters and escape sequences are shown escaped (testjack_tui.safe_text), and Rich or
Textual markup is never interpreted. A plain `str` handed to a DataTable cell, a Label, a
Static, a Rich table or a notification is read as markup (`gpt[x]` loses its brackets,
`[bold]evil` restyles the row, `[/]` raises MarkupError), so every such string goes through
`untrusted`, which returns a `rich.text.Text`: literal whatever it holds. Notifications are
plain text for the whole app (TestJackApp.notify).
"""
from __future__ import annotations

from rich.text import Text

from testjack_tui.safe_text import safe_text


def clean(text: object) -> str:
    """The text with every control character and escape sequence made visible and inert (the
    one sanitiser for untrusted text, testjack_tui.safe_text; \t and \n kept)."""
    return safe_text(text)


def untrusted(text: object, style: str = "", one_line: bool = False) -> Text:
    """Untrusted text as a Text: cleaned, never read as markup. one_line: newlines and tabs
    shown escaped too (table cells, ids, names, titles)."""
    if isinstance(text, Text):
        return text
    return Text(safe_text(text, one_line=one_line), style=style)


def cell(text: object, style: str = "") -> Text:
    """A table cell, title or name from untrusted text (`untrusted` on one line)."""
    return untrusted(text, style=style, one_line=True)
