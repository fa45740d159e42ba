"""Unified diffs: which files a patch touches, and the file sections of it (pure functions)."""
from __future__ import annotations

import re

_GIT_HEADER = re.compile(r'^diff --git "?a/(.+?)"? "?b/(.+?)"?$')
_MINUS = re.compile(r'^--- (?:"?a/)?([^\t\n"]+)"?(?:\t.*)?$')
_PLUS = re.compile(r'^\+\+\+ (?:"?b/)?([^\t\n"]+)"?(?:\t.*)?$')


def file_sections(patch: str) -> dict[str, str]:
    """Map each touched path to the text of its section of the diff."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    pending_minus: str | None = None
    for line in patch.splitlines():
        git = _GIT_HEADER.match(line)
        if git:
            old, new = git.groups()
            current = sections.setdefault(new, [])
            if old != new:
                sections.setdefault(old, current)
            current.append(line)
            pending_minus = None
            continue
        minus = _MINUS.match(line)
        if minus and not line.startswith("--- a/dev/null"):
            pending_minus = minus.group(1)
            if current is not None:
                current.append(line)
            continue
        plus = _PLUS.match(line)
        if plus:
            path = plus.group(1)
            if path == "/dev/null" or path == "dev/null":
                path = pending_minus or path
            if path not in sections:
                current = sections.setdefault(path, [])
                if pending_minus and pending_minus not in ("/dev/null", "dev/null"):
                    sections.setdefault(pending_minus, current)
            else:
                current = sections[path]
            current.append(line)
            continue
        if current is not None:
            current.append(line)
    return {path: "\n".join(lines) for path, lines in sections.items()
            if path not in ("/dev/null", "dev/null")}


def touched_files(patch: str) -> list[str]:
    return list(file_sections(patch))


def added_files(patch: str) -> set[str]:
    """Paths a patch creates (new file mode or --- /dev/null)."""
    added = set()
    for path, text in file_sections(patch).items():
        if "\nnew file mode" in text or re.search(r"^--- /dev/null", text, re.M):
            added.add(path)
    return added
