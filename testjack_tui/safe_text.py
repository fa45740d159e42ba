"""The one sanitiser for untrusted text on its way to a terminal or a report.

Trial ids, task names, patch paths, test names and test output come from the benchmark and the
trial's code: any of them can carry ESC-based sequences (CSI to move the cursor or clear the
screen, OSC to set the title, write to the clipboard or make a fake hyperlink), lone C0/C1
controls (\\r to overwrite a line, BEL, the 8-bit CSI 0x9b) or Unicode bidirectional overrides
that reorder what a reader sees. Every sink (`list`, `verify`, audit progress and summary,
report.md / report.csv, the TUI's log and world panes) passes text through `safe_text`, which
keeps newlines and tabs (unless one line is asked for) and shows every other control as a
visible escape (`\\x1b`, `\\x9b`, `\\u202e`), so nothing reaches the terminal raw and nothing is
silently dropped.
"""
from __future__ import annotations

import re
from typing import TextIO

import typer

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 except \t \n, DEL, C1, bidi controls, line/paragraph separators.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: object, one_line: bool = False) -> str:
    """`text` with every control character (C0, C1, ESC, DEL, bidi overrides) made visible.
    one_line: also newlines and tabs (for table cells, ids, names)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    return (_UNSAFE_LINE if one_line else _UNSAFE).sub(_escape, text)


def echo(message: object = "", err: bool = False, nl: bool = True) -> None:
    """typer.echo for text that may hold untrusted parts."""
    typer.echo(safe_text(message), err=err, nl=nl)


def print_safe(*values: object, sep: str = " ", end: str = "\n", file: TextIO | None = None,
               flush: bool = False) -> None:
    """print() for text that may hold untrusted parts."""
    print(safe_text(sep.join(str(v) for v in values)), end=end, file=file, flush=flush)
