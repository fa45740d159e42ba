"""Budget gauges: USD, tokens, wall time, test runs and rounds; red near the limit."""
from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual.widgets import Static

from testjack_tui.engine.budget import usd_text
from testjack_tui.tui.live_state import LiveSession, gauge_fraction, gauge_level

LEVEL_STYLE = {"ok": "green", "warning": "yellow", "danger": "bold red", "unlimited": "dim"}


def _fmt_time(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def _fmt_tokens(n: float) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else f"{int(n)}"


def gauge(label: str, used: float, limit: float | None, fmt: Callable[[float], str], width: int = 8,
          shown: str | None = None) -> Text:
    """shown: how to write `used` when fmt cannot say it (an unpriced spend)."""
    shown = fmt(used) if shown is None else shown
    fraction = gauge_fraction(used, limit)
    level = gauge_level(fraction)
    style = LEVEL_STYLE[level]
    text = Text(f"{label} ", style="bold")
    if fraction is None or limit is None:  # unlimited (a limit of 0 too)
        text.append(shown, style=style)
        text.append("/∞", style="dim")
        return text
    if width <= 0:  # no room for a bar: the numbers alone, coloured by the level
        text.append(f"{shown}/{fmt(limit)}", style=style)
        return text
    filled = min(width, round(fraction * width))
    text.append("▕")
    text.append("█" * filled, style=style)
    text.append("░" * (width - filled), style="dim")
    text.append("▏")
    text.append(f"{shown}/{fmt(limit)}", style=style)
    return text


class BudgetGauges(Static):
    """One line of gauges. `levels` is exposed for tests (which gauge is red)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("budget: waiting for the engine…", **kwargs)
        self.levels: dict[str, str] = {}

    def show(self, state: LiveSession, rounds_limit: int | None = None, rounds_done: int | None = None) -> None:
        """rounds_done: finished rounds as the store counts them (default: as the events say)."""
        b = state.budget
        parts: list[Text] = []
        if b is not None:
            specs = [("USD", "usd", b.usd, b.usd_limit, lambda v: f"{v:.2f}"),
                     ("tokens", "tokens", b.tokens, b.tokens_limit, _fmt_tokens),
                     ("time", "seconds", b.seconds, b.seconds_limit, _fmt_time),
                     ("runs", "test_runs", b.test_runs, b.test_runs_limit, lambda v: str(int(v)))]
            unpriced = getattr(b, "unpriced", ())
            for label, name, used, limit, fmt in specs:
                self.levels[name] = gauge_level(gauge_fraction(used, limit))
                shown = usd_text(used, unpriced, 2).lstrip("$") if name == "usd" else None
                parts.append(gauge(label, used, limit, fmt, shown=shown))
                if name == "seconds" and b.waiting_seconds >= 1:
                    # The time counts the waits for the operator too (README: Budgets): say how much.
                    parts[-1].append(f" (you {_fmt_time(b.waiting_seconds)})", style="dim")
            if b.estimated:
                parts.append(Text("(usage partly estimated)", style="italic yellow"))
        done = state.rounds_done if rounds_done is None else rounds_done
        self.levels["rounds"] = gauge_level(gauge_fraction(done, rounds_limit))
        parts.append(gauge("rounds", done, rounds_limit, lambda v: str(int(v)), width=6))
        line = Text("  ").join(parts)
        room = self.content_region.width
        if room and line.cell_len > room:
            # At 80 columns a clock past 9:59 and the "(you …)" note pushed the rounds bar off
            # the line: one space between gauges, then the rounds as numbers only.
            line = Text(" ").join(parts)
            if line.cell_len > room:
                parts[-1] = gauge("rounds", done, rounds_limit, lambda v: str(int(v)), width=0)
                line = Text(" ").join(parts)
        self.update(line, layout=False)  # one line, full width: no layout pass
