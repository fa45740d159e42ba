"""The decisive lines of a test failure: the assertion and the diff the runner prints.

pytest's `E` lines mix the explanation with hints meant for a person at a terminal ("Use -v to
get more diff", "Omitting 1 identical items, use -vv to show", "Full output truncated ...,
use '-vv' to show"). A model cannot pass flags to the run that produced them, and a hint that
fills a line budget pushes the differing items out; so hints go, and the facts stay.
"""
from __future__ import annotations

import re

_HINT = re.compile(r"^\(?\s*use -v+ to (?:get|show)\b.*$"
                   r"|^\.\.\.\s*full output truncated\b.*$", re.IGNORECASE)
_TRAILING_HINT = re.compile(r",\s*use '?-v+'? to show\s*$", re.IGNORECASE)


def runner_hint(line: str) -> bool:
    """A line that only tells a person how to get more output."""
    return bool(_HINT.match(line.strip()))


def without_hint(line: str) -> str:
    """`Omitting 1 identical items, use -vv to show` -> `Omitting 1 identical items`."""
    return _TRAILING_HINT.sub("", line)


def asserted_lines(message: str) -> list[str]:
    """The `E` lines of a pytest failure, once each, hints removed, in order."""
    out: list[str] = []
    for raw in (message or "").splitlines():
        stripped = raw.strip()
        if not (stripped.startswith("E ") or stripped == "E"):
            continue
        text = without_hint(stripped[1:].strip())
        if text and not runner_hint(text) and text not in out:
            out.append(text)
    return out
