"""Human-readable durations: ``"90s"``, ``"15m"``, ``"2h"``, ``"1.5h"``."""
from __future__ import annotations

import re

# Seconds per unit.
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}

_COMPONENT = re.compile(r"(\d+)\s*([a-z]+)")


def parse_duration(text: str) -> float:
    """Parse a duration such as ``"90s"``, ``"1.5h"`` or ``"1h 30m"`` into seconds.

    A duration is one or more ``<number><unit>`` components, with or without whitespace
    between them. Raises ``ValueError`` for anything else.
    """
    rest = text.strip()
    if not rest:
        raise ValueError(f"invalid duration: {text!r}")
    total = 0.0
    while rest:
        match = _COMPONENT.match(rest)
        if match is None or match.group(2) not in UNITS:
            raise ValueError(f"invalid duration: {text!r}")
        total += float(match.group(1)) * UNITS[match.group(2)]
        rest = rest[match.end():].lstrip()
    return total


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
