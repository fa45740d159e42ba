"""Ids from a benchmark never become raw path parts.

Task and trial ids come from files a benchmark's authors (or a trial) wrote. Loaders refuse ids
that try to be paths (`id_problem`: `.`/`..`/empty parts, a leading `/`, backslashes, NUL and
other controls), and every writer maps an id to one safe file name with `path_part` and joins it
with `inside`, which re-checks that the result stays under the output folder.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

from .errors import InputError

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_UNSAFE = re.compile(r"[^\w.-]+")


def id_problem(value: object) -> str | None:
    """Why `value` cannot be a task or trial id, or None. ("org/name" is fine: it never becomes
    two path parts, see path_part.)"""
    if not isinstance(value, str) or not value:
        return f"must be a non-empty string, got {value!r}"
    if _CONTROL.search(value):
        return f"holds control characters: {value!r}"
    if value.startswith("/") or "\\" in value:
        return f"looks like a path: {value!r}"
    if any(part in ("", ".", "..") for part in value.split("/")):
        return f"has '.', '..' or empty path parts: {value!r}"
    if len(value) > 512:
        return f"is {len(value)} characters long (at most 512)"
    return None


def path_part(value: str) -> str:
    """One file name for an id: word characters, '.', '-'; never '.', '..' or hidden; ids that
    had to change get a short hash so two ids never share a name."""
    clean = _UNSAFE.sub("_", value).strip(".")[:120] or "_"
    if clean != value:
        clean += "-" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return clean


def inside(root: Path | str, *parts: str) -> Path:
    """root / part / ... with every part passed through path_part, checked to stay under root
    (also through symlinks already on disk)."""
    root = Path(root)
    target = root.joinpath(*(path_part(p) for p in parts))
    check_inside(root, target)
    return target


def check_inside(root: Path | str, target: Path | str) -> Path:
    """`target` itself, or InputError when it resolves outside `root`."""
    base = Path(root).resolve()
    resolved = Path(target).resolve()
    if resolved != base and base not in resolved.parents:
        raise InputError(target, None, f"would be written outside the output folder {root}")
    return Path(target)


def contained(root: Path | str, path: Path | str, field: str | None = None,
              where: Path | str | None = None) -> Path:
    """`path` (resolved when a link is on its way), or InputError when it leaves `root`, the benchmark
    folder: every file a loader reads goes through here first, so a task, job, patch or config
    that is a symlink (or a manifest entry such as "/proc") out of the benchmark is refused in
    one line instead of being read. `where`/`field` name the file and key that pointed at it
    (a manifest entry); by default the line names `path` itself."""
    base = _real_root(os.fspath(root))
    text = os.fspath(path)
    # Fast path (loading reads several files per trial): a path written under the real root
    # whose every part below it is a plain folder or file cannot leave it.
    if text.startswith(base + os.sep):
        below = base
        for part in text[len(base) + 1:].split(os.sep):
            if part in ("", ".", "..") or os.path.islink(below := below + os.sep + part):
                break
        else:
            return Path(text)
    real = os.path.realpath(text)
    if real != base and not real.startswith(base + os.sep):
        what = f"{path}: " if where is not None else ""
        raise InputError(where if where is not None else path, field,
                         f"{what}a path leaving the benchmark folder {base} (it resolves to {real}): refused")
    return Path(real)


@functools.lru_cache(maxsize=32)
def _real_root(root: str) -> str:
    # A benchmark's root is resolved once per process: loading checks thousands of files in it.
    return os.path.realpath(root)


_SYSTEM = (Path("/proc"), Path("/sys"), Path("/dev"))


def output_folder(path: Path | str, option: str = "--out") -> Path:
    """A folder a command may write into, or InputError in one line: not a symlink (whose
    target a run could not vouch for), not an existing file, not under /proc, /sys or /dev."""
    given = Path(path).expanduser()
    if given.is_symlink():
        raise InputError(given, option, "is a symlink: give the real folder")
    real = given.resolve()
    if any(real == s or s in real.parents for s in _SYSTEM):
        raise InputError(given, option, f"resolves under {real.parts[0]}{real.parts[1]}: not a place for output")
    if real.exists() and not real.is_dir():
        raise InputError(given, option, "exists and is not a folder")
    return given
