"""One JSONL file per agent session: every message, tool result, usage record and error.

The TUI shows these; `read_transcript` is what it calls. Lines are appended and flushed as
they happen, so an interrupted session still leaves a readable transcript.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from testjack_tui import paths


def transcript_file(session_id: str, role: str, task_id: str, trial_id: str | None,
                    suffix: str = "") -> Path:
    name = f"{role}-{task_id}-{trial_id or 'analysis'}{('-' + suffix) if suffix else ''}"
    name = re.sub(r"[^\w.-]", "_", name)[:180]
    folder = paths.sessions_dir() / re.sub(r"[^\w.-]", "_", session_id or "no-session") / "transcripts"
    return folder / f"{name}.jsonl"


class Transcript:
    def __init__(self, path: Path | str, role: str, task_id: str, trial_id: str | None):
        self.path = Path(path)
        self.role = role
        self.task_id = task_id
        self.trial_id = trial_id
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, type_: str, **data: Any) -> None:
        record = {"at": time.time(), "type": type_, "role": self.role, "task_id": self.task_id,
                  "trial_id": self.trial_id, **data}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str, ensure_ascii=False) + "\n")


def read_transcript(path: Path | str) -> list[dict[str, Any]]:
    """All records of a transcript; a torn last line (crash mid-write) is skipped."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
