"""Cheap checks that a patch is a usable text diff, done with a regex so loading thousands of
trials stays fast. Which files a diff touches is `testjack_tui.diffs.touched_files` (the one
parser); it is re-exported here for the loaders.
"""
from __future__ import annotations

import re

from testjack_tui.diffs import touched_files

__all__ = ["patch_problem", "text_patch_problem", "touched_files"]

_HUNK_OR_HEADER = re.compile(r"^(?:diff --git |--- |\+\+\+ |@@ )", re.MULTILINE)


def patch_problem(data: bytes) -> str | None:
    """Why these bytes are not a usable text patch, or None when they are."""
    if not data.strip():
        return "empty patch"
    if b"\0" in data:
        return "binary patch (contains NUL bytes)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary patch (not UTF-8 text)"
    if not _HUNK_OR_HEADER.search(text):
        return "not a unified diff (no diff/---/+++/@@ lines)"
    return None


def text_patch_problem(text: str | None) -> str | None:
    """Same check for a patch that arrived as a JSON string."""
    if text is None:
        return "empty patch (null)"
    if not isinstance(text, str):
        return f"patch must be a string, got {type(text).__name__}"
    if not text.strip():
        return "empty patch"
    if "\0" in text:
        return "binary patch (contains NUL characters)"
    if not _HUNK_OR_HEADER.search(text):
        return "not a unified diff (no diff/---/+++/@@ lines)"
    return None
