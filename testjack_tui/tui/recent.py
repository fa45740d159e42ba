"""Recently opened benchmarks, kept in a small JSON file under the data dir.

We store what the Benchmarks screen lists (name, format, counts) so it can show them without
loading each benchmark again at start-up.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from testjack_tui import paths

MAX_RECENT = 12


@dataclass
class RecentBenchmark:
    path: str
    name: str = ""
    format: str = ""
    tasks: int = 0
    trials: int = 0
    passing: int = 0
    opened_at: float = 0.0


def recent_file() -> Path:
    return paths.data_dir() / "recent-benchmarks.json"


def load_recent() -> list[RecentBenchmark]:
    """The list, newest first. A damaged file is treated as empty (it is only a convenience)."""
    try:
        raw = json.loads(recent_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(raw, list):
        return []
    known = RecentBenchmark.__dataclass_fields__
    out = []
    for row in raw:
        if isinstance(row, dict) and isinstance(row.get("path"), str):
            out.append(RecentBenchmark(**{k: v for k, v in row.items() if k in known}))
    return out


def remember(entry: RecentBenchmark) -> list[RecentBenchmark]:
    """Put `entry` first (replacing an older entry for the same path) and save."""
    entry.path = str(Path(entry.path).expanduser().resolve())
    entry.opened_at = entry.opened_at or time.time()
    rows = [entry] + [r for r in load_recent() if r.path != entry.path]
    rows = rows[:MAX_RECENT]
    target = recent_file()
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")
    os.replace(tmp, target)
    return rows


def forget(path: str) -> list[RecentBenchmark]:
    rows = [r for r in load_recent() if r.path != path]
    recent_file().write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")
    return rows


def display_path(path: str | Path) -> str:
    """Short form for the screen: relative to the working folder when inside it, else ~/…"""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        pass
    try:
        return "~/" + str(p.resolve().relative_to(Path.home().resolve()))
    except ValueError:
        return str(p)
