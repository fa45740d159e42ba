"""A small unified-diff parser: which lines a patch adds (with their new line numbers).

The detectors and the ghost-branch intersection need per-line facts (file, new line number,
text), which the load-time regex checks in benchmarks/patches.py do not keep.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_GIT_HEADER = re.compile(r'^diff --git "?a/(.+?)"? "?b/(.+?)"?$')
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Line:
    number: int  # line number in the new file (added) or old file (removed)
    text: str


@dataclass
class FileDiff:
    path: str  # the new path ("b/" side); the old path for deletions
    old_path: str | None = None
    status: str = "modified"  # "added" | "deleted" | "modified" | "renamed"
    added: list[Line] = field(default_factory=list)
    removed: list[Line] = field(default_factory=list)
    binary: bool = False
    # Every hunk line in order, for viewers: (tag "+" | "-" | " " | "@", number, text); the
    # number is the new file's for "+" and context, the old file's for "-"; "@" starts a hunk.
    rows: list[tuple[str, int, str]] = field(default_factory=list, repr=False, compare=False)
    header_done: bool = field(default=False, repr=False, compare=False)  # "+++" line seen

    @property
    def added_numbers(self) -> set[int]:
        return {line.number for line in self.added}


def _strip_prefix(name: str) -> str | None:
    name = name.strip().split("\t", 1)[0].strip('"')
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def parse_diff(patch: str) -> list[FileDiff]:
    """Parse a (git or plain) unified diff. Unknown lines are skipped, never fatal."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    old_no = new_no = 0
    old_left = new_left = 0  # lines still expected in the current hunk
    for raw in patch.splitlines():
        in_hunk = current is not None and (old_left > 0 or new_left > 0)
        if in_hunk and raw[:1] in ("+", "-", " ", ""):
            tag, text = raw[:1], raw[1:]
            current.rows.append((tag or " ", old_no if tag == "-" else new_no, text))
            if tag == "+":
                current.added.append(Line(new_no, text))
                new_no += 1
                new_left -= 1
            elif tag == "-":
                current.removed.append(Line(old_no, text))
                old_no += 1
                old_left -= 1
            else:  # context (an empty line is a context line whose space was stripped)
                old_no += 1
                new_no += 1
                old_left -= 1
                new_left -= 1
            continue
        if raw.startswith("\\"):  # "\ No newline at end of file"
            continue
        match = _GIT_HEADER.match(raw)
        if match:
            current = FileDiff(path=match.group(2), old_path=match.group(1))
            files.append(current)
            old_left = new_left = 0
            continue
        if raw.startswith("--- "):
            old = _strip_prefix(raw[4:])
            if current is None or current.added or current.removed or current.header_done:
                current = FileDiff(path=old or "", old_path=old)
                files.append(current)
            current.old_path = old
            if old is None:
                current.status = "added"
            continue
        if raw.startswith("+++ ") and current is not None:
            new = _strip_prefix(raw[4:])
            if new is None:
                current.status = "deleted"
                current.path = current.old_path or current.path
            else:
                current.path = new
            current.header_done = True
            continue
        if current is None:
            continue
        if raw.startswith("new file mode"):
            current.status = "added"
        elif raw.startswith("deleted file mode"):
            current.status = "deleted"
        elif raw.startswith("rename from") or raw.startswith("rename to"):
            current.status = "renamed"
        elif raw.startswith("Binary files") or raw.startswith("GIT binary patch"):
            current.binary = True
        hunk = _HUNK.match(raw)
        if hunk:
            current.rows.append(("@", int(hunk.group(3)), raw))
            old_no = int(hunk.group(1))
            old_left = int(hunk.group(2)) if hunk.group(2) is not None else 1
            new_no = int(hunk.group(3))
            new_left = int(hunk.group(4)) if hunk.group(4) is not None else 1
    for f in files:
        if f.status == "modified" and f.old_path and f.old_path != f.path:
            f.status = "renamed"
    return [f for f in files if f.path]

