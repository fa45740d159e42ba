"""Text bar charts: resolution rate before → after, per model."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from testjack_tui.tui.text import cell


def bar(fraction: float, width: int, style: str) -> Text:
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    text = Text("█" * full, style=style)
    if rest:
        text.append(" ▏▎▍▌▋▊▉"[rest], style=style)
    text.append(" " * (width - full - (1 if rest else 0)))
    return text


def resolution_chart(rows: list[tuple[str, float, float, str]], width: int = 30) -> Table:
    """rows: (label, rate before, rate after, note). Rates in [0, 1]."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, style="bold")
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, justify="right")
    table.add_column(no_wrap=True, style="dim")
    for label, before, after, note in rows:
        # Labels are model names from the benchmark: a str cell of a Rich table is markup.
        table.add_row(cell(label), bar(before, width, "grey50"), f"{before:6.1%}", "official")
        table.add_row("", bar(after, width, "red" if after < before else "green"), f"{after:6.1%}",
                      cell("after audit" + (f"  {note}" if note else "")))
    return table


VERDICT_STYLE = {"SOUND": "green", "SOUND_LOW_QUALITY": "yellow", "OVERFIT_INCOMPLETE": "red",
                 "INCORRECT_DESPITE_PASS": "red", "REWARD_HACK": "magenta", "NOT_REPRODUCIBLE": "grey50",
                 "CLEAN_UNAUDITED": "grey50"}


def verdict_chart(counts: dict[str, int], width: int = 24) -> Table:
    """One bar per verdict class (SOUND … REWARD_HACK), scaled to the largest, with its count."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, justify="right")
    top = max(counts.values(), default=0) or 1
    for label, n in counts.items():
        style = VERDICT_STYLE.get(label, "white")
        table.add_row(cell(label, style=style), bar(n / top, width, style), str(n))
    return table
