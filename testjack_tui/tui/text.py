"""Untrusted text (trial diffs, test output, agent text) on screen.

Text written by the agent under audit must not drive the terminal: control characters and
escape sequences are shown escaped (testjack_tui.safe_text), Rich markup is never interpreted
(everything becomes `rich.text.Text`).
"""
from __future__ import annotations

from rich.text import Text

from testjack_tui.safe_text import safe_text


def clean(text: str) -> str:
    """The text with every control character and escape sequence made visible and inert (the
    one sanitiser for untrusted text, testjack_tui.safe_text; \t and \n kept)."""
    return safe_text(text)


def untrusted(text: str, style: str = "") -> Text:
    """Untrusted text as a Text: cleaned, never read as markup."""
    return Text(clean(text), style=style)
