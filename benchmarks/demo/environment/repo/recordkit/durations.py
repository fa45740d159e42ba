"""Human-readable durations: ``"90s"``, ``"15m"``, ``"2h"``, ``"1.5h"``."""
from __future__ import annotations

import re

# Seconds per unit.
UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*")


def parse_duration(text: str) -> float:
    """Parse a duration such as ``"90s"`` or ``"1.5h"`` into seconds.

    Raises ``ValueError`` for anything that is not a number followed by a known unit.
    """
    match = _DURATION.fullmatch(text)
    if match is None or match.group(2) not in UNITS:
        raise ValueError(f"invalid duration: {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def format_duration(seconds: float) -> str:
    """Format seconds as a compact duration: ``5400`` -> ``"1h30m"``, ``0`` -> ``"0s"``."""
    if seconds < 0:
        raise ValueError("durations cannot be negative")
    remaining = int(round(seconds))
    parts = []
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
