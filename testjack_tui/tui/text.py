"""Untrusted text (trial diffs, test output, agent text) on screen.

Text written by the agent under audit must not drive the terminal: control characters and
escape sequences go, Rich markup is never interpreted (everything becomes `rich.text.Text`).
"""
from __future__ import annotations

import re

from rich.text import Text

# ESC sequences (CSI, OSC, single-character) and every other C0/C1 control except \t and \n.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """The text without escape sequences or control characters (\\t and \\n kept, \\r dropped)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text or ""))


def untrusted(text: str, style: str = "") -> Text:
    """Untrusted text as a Text: cleaned, never read as markup."""
    return Text(clean(text), style=style)
