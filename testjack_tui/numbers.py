"""Numeric fields of the files we read are range-checked in one place.

A number a benchmark's files (a reward, a timeout, a memory or CPU limit, a threshold) or the
config file (an LLM profile's timeout, retries, tokens) give is a finite number within its
field's range or one InputError line naming the file and the field: `inf`, `nan`, `10**400`
(too big for a float) and negative limits never reach the engine.
"""
from __future__ import annotations

import math
from pathlib import Path

from testjack_tui.errors import InputError

DAY = 86400.0
# (low, high, low is allowed) per kind of field
RANGES = {
    "reward": (0.0, 1.0, True),
    "threshold": (0.0, 1.0, True),
    "timeout": (0.0, DAY, False),       # seconds; a day is already far beyond any grader's
    "memory_mb": (0.0, 1024.0 * 1024, False),
    "cpus": (0.0, 1024.0, False),
    # the config file's [profiles.*] settings
    "llm_timeout": (0.0, DAY, False),
    "retries": (0.0, 100.0, True),
    "tokens": (0.0, 10_000_000.0, True),
    "temperature": (0.0, 2.0, True),
    "backoff": (0.0, 3600.0, True),
    "concurrency": (0.0, 1024.0, True),
    "price": (0.0, 1_000_000.0, True),  # USD per million tokens
}


def number(value: object, path: Path | str, field: str, kind: str) -> float:
    """`value` as a float within the range of `kind`, or InputError naming path and field."""
    low, high, low_ok = RANGES[kind]
    shown = _short(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, field, f"missing or not a number: {shown} (must be {_range(kind)})")
    try:
        as_float = float(value)
    except OverflowError:
        raise InputError(path, field, f"out of range: {shown} (must be {_range(kind)})") from None
    if not math.isfinite(as_float):
        raise InputError(path, field, f"not a finite number: {shown} (must be {_range(kind)})")
    if as_float > high or as_float < low or (as_float == low and not low_ok):
        raise InputError(path, field, f"out of range: {shown} (must be {_range(kind)})")
    return as_float


def _range(kind: str) -> str:
    low, high, low_ok = RANGES[kind]
    return f"{'at least' if low_ok else 'more than'} {low:g} and at most {high:g}"


def _short(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        return f"an integer of {len(str(abs(value))) if abs(value) < 10**4000 else 'thousands of'} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
