"""Cheap checks on unified diffs, done with regexes so loading thousands of trials stays fast.

We only need two facts at load time: is this a usable text patch, and which files does it touch
(the official evaluator resets those files before applying the test patch).
"""
from __future__ import annotations

import re

# `diff --git a/x b/x`, and the `---`/`+++` headers (which may carry a tab and a timestamp).
_GIT_HEADER = re.compile(r"^diff --git (?:\"?a/)(.+?)\"? (?:\"?b/)(.+?)\"?$", re.MULTILINE)
_FILE_HEADER = re.compile(r"^(?:---|\+\+\+) (?:\"?[ab]/)?([^\t\n]+?)\"?(?:\t.*)?$", re.MULTILINE)
_HUNK_OR_HEADER = re.compile(r"^(?:diff --git |--- |\+\+\+ |@@ )", re.MULTILINE)


def touched_files(patch: str) -> tuple[str, ...]:
    """Files a unified diff creates, edits or deletes, in order of first mention."""
    seen: dict[str, None] = {}
    for old, new in _GIT_HEADER.findall(patch):
        seen.setdefault(old, None)
        seen.setdefault(new, None)
    if not seen:  # a plain (non-git) unified diff
        for name in _FILE_HEADER.findall(patch):
            if name != "/dev/null":
                seen.setdefault(name, None)
    return tuple(seen)


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
