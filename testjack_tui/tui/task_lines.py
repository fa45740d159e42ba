"""What each task is doing, in the rows the audit screen's status line has left.

One line per task is fine on a wide screen; at 80 columns five tasks wrapped past the status
line's last row and were cut mid-word ("recordset-metadata: queued (2"). When the full form does
not fit, tasks doing the same thing share one entry ("queued: a, b, c"); then those entries say how
many tasks they hold; at last only what waits is named and the rest counted ("+4 more tasks").
A task waiting for the operator is always named: the operator must know which task to act on."""
from __future__ import annotations

from typing import Any

from rich.text import Text

from testjack_tui.tui.text import cell

SEPARATOR = "  │  "


def _join(entries: list[tuple[str, str]]) -> Text:
    text = Text()
    for i, (who, line) in enumerate(entries):
        if i:
            text.append(SEPARATOR, style="dim")
        text.append_text(cell(f"{who}: ", style="bold"))
        text.append_text(cell(line, style="yellow" if line.startswith("waits") else ""))
    return text


def _kind(line: str) -> str:
    """Lines that differ only in their detail group together ("queued (next)", "queued (2 ahead)",
    "waiting for a work slot (1 ahead)")."""
    for kind in ("queued", "waiting for a work slot"):
        if line.startswith(kind):
            return kind
    return line


def _grouped(pairs: list[tuple[str, str]]) -> list[tuple[list[str], str]]:
    groups: dict[str, list[str]] = {}
    for task, line in pairs:
        groups.setdefault(_kind(line), []).append(task)
    # What waits for the operator first: that is what the operator acts on.
    order = sorted(groups.items(), key=lambda item: not item[0].startswith("waits"))
    return [(tasks, line) for line, tasks in order]


def task_status(pairs: list[tuple[str, str]], width: int, rows: int, console: Any) -> Text:
    """`pairs` (task, what it does) drawn in at most `rows` lines of `width` cells, when they can be."""
    def fits(text: Text) -> bool:
        return len(text.wrap(console, max(1, width))) <= max(1, rows)

    full = _join(pairs)
    if fits(full):
        return full
    groups = _grouped(pairs)
    named = _join([(", ".join(tasks), line) for tasks, line in groups])
    if fits(named):
        return named
    counted = _join([(", ".join(tasks) if line.startswith("waits") or len(tasks) == 1
                      else f"{len(tasks)} tasks", line) for tasks, line in groups])
    if fits(counted):
        return counted
    # Only what waits for the operator by name; the rest as one count (the Trials tab has them).
    waiting = [(", ".join(tasks), line) for tasks, line in groups if line.startswith("waits")]
    others = sum(len(tasks) for tasks, line in groups if not line.startswith("waits"))
    text = _join(waiting)
    if others:
        text.append(SEPARATOR if waiting else "", style="dim")
        text.append(f"+{others} more task{'s' if others != 1 else ''} (F2)", style="dim")
    return text
