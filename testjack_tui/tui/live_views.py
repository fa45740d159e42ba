"""What the live audit screen shows of one trial, world, agent-stream entry and candidate (the
records `LiveSession` in tui/live_state.py folds events into), and the short names it shows them
by. Pure Python (no Textual)."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from testjack_tui.services.approvals import CandidateFacts

WORLD_LINES = 2000  # lines of output kept per world (older lines scroll away)
AGENT_ENTRIES = 500  # agent stream entries kept
RESULT_PREVIEW = 400  # characters of a tool result shown before "expand"


@dataclass
class TrialView:
    task_id: str
    trial_id: str
    model: str = ""
    agent: str = ""
    state: str = "pending"
    by: str = ""  # witness id or reason


@dataclass
class WorldView:
    name: str
    container: str = ""
    state: str = ""
    image: str = ""
    node: str = ""  # the cluster node running it (Ray backend); "" on this machine
    command: str = ""
    exit_code: int | None = None
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=WORLD_LINES))
    total: int = 0  # lines ever appended (tells a viewer how many are new)
    partial: str = ""

    def add_output(self, text: str) -> None:
        if not text:
            return
        chunk = self.partial + text
        parts = chunk.split("\n")
        self.partial = parts.pop()
        self.lines.extend(parts)
        self.total += len(parts)

    def flush_partial(self) -> None:
        if self.partial:
            self.lines.append(self.partial)
            self.total += 1
            self.partial = ""


@dataclass
class AgentEntry:
    role: str
    task_id: str
    trial_id: str | None
    kind: str  # "text" | "tool"
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    result: str = ""
    finished: bool = False
    expanded: bool = False
    version: int = 0  # bumped on every change, so a viewer redraws only changed entries


# The oracle's outcome as the candidates table says it.
OUTCOME_STATUS = {"discriminates": "discriminates", "passes_both": "passes both",
                  "fails_reference": "fails on reference", "passes_reference": "passes reference",
                  "error": "error"}


def short_id(text: str, task_id: str) -> str:
    """Ids repeat their task's name ('task:task__orca__1:1.v2'); drop it where the task is known."""
    if not task_id or not text:
        return text or ""
    if text.startswith(task_id + ":"):
        text = text[len(task_id) + 1:]
    return text.replace(task_id + "__", "")


def world_task(name: str) -> str:
    """'task/model/task__orca__1' → 'task' ('' for a name that is not a world's)."""
    parts = name.split("/")
    return parts[0] if len(parts) >= 2 else ""


def short_world(name: str, with_task: bool = False) -> str:
    """'task/model/task__orca__1' → 'model orca__1'; 'task/reference' → 'reference'; with_task
    (a session of several tasks, where 'null' alone names no world) → 'task null'."""
    parts = name.split("/")
    if len(parts) < 2:
        return name
    task, kind, rest = parts[0], parts[1], parts[2:]
    trial = "/".join(rest)
    if trial.startswith(task + "__"):
        trial = trial[len(task) + 2:]
    return f"{task + ' ' if with_task else ''}{kind} {trial}".strip()


def short_image(image: str, width: int = 40) -> str:
    """An image reference in `width` cells: the registry dropped, then its end (the tag) cut,
    so the name it starts with stays readable."""
    name = image.removeprefix("localhost/")
    return name if len(name) <= width else name[:width - 1] + "…"


@dataclass
class CandidateView(CandidateFacts):
    attempt: int = 1
    reference: str = ""
    model: str = ""
    outcome: str = ""
    reference_of: str = ""  # the earlier candidate with the same test whose reference run answered
    model_of: str = ""  # ... whose run on the trial's world answered
    dropped: str = ""
    label: str = ""
    reason: str = ""
    explicit: bool | None = None
    request_id: str = ""
    decision: str = ""  # "" | "pending" | "approved" | "overruled" | "judged" | "auto"
    reviewer_label: str = ""  # what the reviewer said (the label that stands is `label`)
    note: str = ""
    decided_at: float | None = None
    operator: dict[str, Any] = field(default_factory=dict)  # the operator's requirement / explicit / quote
    counts: bool | None = None
    witness: bool = False
    runs: list[tuple[str, str]] = field(default_factory=list)  # (world, summary)

    @property
    def status(self) -> str:
        if self.witness:
            return "witness"
        if self.dropped:
            return "dropped"
        if self.decision == "pending":
            return "awaiting you"
        if self.counts is False:
            return "rejected"
        if self.counts and self.decision in ("approved", "overruled", "judged"):
            return self.decision  # the operator's word, until the witness is confirmed
        if self.label:
            return self.label
        return OUTCOME_STATUS.get(self.outcome, self.outcome.replace("_", " ")) or "proposed"
