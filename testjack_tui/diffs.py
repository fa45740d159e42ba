"""Unified diffs: the one parser every layer uses (loaders, sandbox, detectors, export).

Parsing is `unidiff`'s; this module only turns its objects into the small facts we reason
about (file, status, added and removed lines with their numbers) and keeps going where a
hand-edited patch has a broken section: that section is skipped, the rest still counts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

from unidiff.patch import PatchSet, PatchedFile
from unidiff.errors import UnidiffParseError

_FILE_START = re.compile(r"^(?=diff --git |--- )", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")


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
    text: str = field(default="", repr=False, compare=False)  # this file's section of the diff
    # Every hunk line in order, for viewers: (tag "+" | "-" | " " | "@", number, text); the
    # number is the new file's for "+" and context, the old file's for "-"; "@" starts a hunk.
    rows: list[tuple[str, int, str]] = field(default_factory=list, repr=False, compare=False)

    @property
    def added_numbers(self) -> set[int]:
        return {line.number for line in self.added}


def _strip(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().strip('"')
    if name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _header(pf: PatchedFile) -> tuple[str | None, str | None, str]:
    """(path, old path, status) of one file section, from its headers alone."""
    old, new = _strip(pf.source_file), _strip(pf.target_file)
    if pf.is_removed_file:
        return old or new, old, "deleted"
    if pf.is_added_file:
        return new or old, old, "added"
    if pf.is_rename or (old and new and old != new):
        return new, old, "renamed"
    return new or old, old, "modified"


def _convert(pf: PatchedFile) -> FileDiff | None:
    path, old, status = _header(pf)
    if not path:
        return None
    out = FileDiff(path=path, old_path=old, status=status, binary=bool(pf.is_binary_file),
                   text=str(pf))
    for hunk in pf:
        out.rows.append(("@", hunk.target_start, f"@@ -{hunk.source_start},{hunk.source_length} "
                                                 f"+{hunk.target_start},{hunk.target_length} @@{hunk.section_header and ' ' + hunk.section_header}"))
        for line in hunk:
            text = line.value.rstrip("\n").rstrip("\r") if line.value.endswith("\n") else line.value
            # unidiff numbers an added or context line in the target, a removed one in the source
            target, source = cast(int, line.target_line_no), cast(int, line.source_line_no)
            if line.is_added:
                out.added.append(Line(target, text))
                out.rows.append(("+", target, text))
            elif line.is_removed:
                out.removed.append(Line(source, text))
                out.rows.append(("-", source, text))
            elif line.is_context:
                out.rows.append((" ", target, text))
    return out


def recount(text: str) -> str:
    """Hunk headers rewritten to the line counts that follow them (like `git apply --recount`):
    hand-edited patches often carry stale counts that every patch tool tolerates."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.startswith(("@@ ", "diff --git ")) or (
                    line.startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ ")):
                break
            if line[:1] not in ("+", "-", " ", "\\", ""):
                break
            body.append(line)
            j += 1
        while body and body[-1] == "":
            body.pop()
            j -= 1
        old = sum(1 for b in body if b[:1] in ("-", " ", ""))
        new = sum(1 for b in body if b[:1] in ("+", " ", ""))
        out.append(f"@@ -{m.group(1)},{old} +{m.group(2)},{new} @@{m.group(3)}")
        out.extend(body)
        i = j
    return "\n".join(out) + "\n"


def _parse(text: str, headers_only: bool = False) -> list[PatchedFile]:
    # Recounting first: unidiff trusts the counts and silently drops lines past a stale one.
    for attempt in (recount(text), text):
        try:
            return list(PatchSet(attempt, metadata_only=headers_only))
        except UnidiffParseError:
            continue
    text = recount(text)
    # A broken section: parse file by file and keep the ones that parse.
    files: list[PatchedFile] = []
    starts = [m.start() for m in _FILE_START.finditer(text)]
    chunks, i = [], 0
    while i < len(starts):
        start = starts[i]
        j = i + 1
        # a "--- " header right after "diff --git" belongs to the same file
        while j < len(starts) and text.startswith("--- ", starts[j]) and \
                not text[start:starts[j]].count("\n@@"):
            j += 1
        end = starts[j] if j < len(starts) else len(text)
        chunks.append(text[start:end])
        i = j
    for chunk in chunks:
        try:
            files.extend(PatchSet(chunk, metadata_only=headers_only))
        except UnidiffParseError:
            continue
    return files


def _sections(patch: str | None, headers_only: bool = False) -> list[PatchedFile]:
    # headers_only: unidiff counts hunk lines without building them (loaders call this per task)
    if not patch or not patch.strip():
        return []
    return _parse(patch if patch.endswith("\n") else patch + "\n", headers_only)


def parse_diff(patch: str | None) -> list[FileDiff]:
    """Every file of a (git or plain) unified diff. Broken sections are skipped, never fatal."""
    out = [_convert(pf) for pf in _sections(patch)]
    return [f for f in out if f is not None]


def touched_files(patch: str | None) -> tuple[str, ...]:
    """Files a diff creates, edits, deletes or renames (both names), in order of first mention."""
    seen: dict[str, None] = {}
    for pf in _sections(patch, headers_only=True):
        path, old, _status = _header(pf)
        if not path:
            continue
        if old:
            seen.setdefault(old, None)
        seen.setdefault(path, None)
    return tuple(seen)


def added_files(patch: str | None) -> set[str]:
    """Paths a diff creates."""
    return {f.path for f in parse_diff(patch) if f.status == "added"}


def file_sections(patch: str | None) -> dict[str, str]:
    """Each touched path (old and new names of a rename) -> the text of its section."""
    out: dict[str, str] = {}
    for f in parse_diff(patch):
        out.setdefault(f.path, f.text)
        if f.old_path and f.old_path != f.path:
            out.setdefault(f.old_path, f.text)
    return out
