"""The typed rows of a session's loop tables (witnesses, witness runs, refutations, trial and
task states, rounds) and the words they hold (`StrEnum`s).

The enums' values are the strings the database, the events and the JSON files have always held,
so a record written before these types existed reads the same and every file stays byte-identical.
`engine/store.py` writes and reads these records; nothing above it sees a row as a dict.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .records import E, JsonObject, member


class TrialLoopState(StrEnum):
    """Where a trial stands in its task's loop (the summary's `loop_state`)."""

    ACTIVE = "active"  # may still be audited
    SAMPLED = "sampled"  # picked for this round's audit
    REFUTED = "refuted"
    AMBIGUOUS = "ambiguous"  # audited; fails only witnesses the ambiguity rule set aside
    CLEAN = "clean"  # audited, nothing found
    AUDIT_FAILED = "audit_failed"  # no candidate could run on the reference (failure_kinds)
    EXCLUDED = "excluded"
    NOT_REPRODUCIBLE = "not_reproducible"


class TaskLoopState(StrEnum):
    """Where a task stands in the session (`sessions`, the summary, the TUI)."""

    PENDING = "pending"  # nothing stored yet
    QUEUED = "queued"
    CHECKING = "checking"
    EXCLUDED = "excluded"
    AUDITING = "auditing"
    AUDIT_FAILED = "audit_failed"
    FINISHED = "finished"
    PAUSED = "paused"
    FAILED = "failed"


class WitnessClassification(StrEnum):
    """What the ambiguity rule made of a witness (hooks.classify)."""

    REFUTES = "refutes"
    AMBIGUOUS = "ambiguous"


class RunOutcome(StrEnum):
    """A witness's status on one world, a failure refined to its kind (engine/failure_kinds.py)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    NOT_FOUND = "not_found"
    UNVERIFIABLE = "unverifiable"
    TIMED_OUT = "timed_out"
    KILLED_MEMORY = "killed_memory"
    KILLED_DISK = "killed_disk"
    KILLED_PIDS = "killed_pids"
    KILLED_CPU = "killed_cpu"
    CRASHED = "crashed"


class VerdictLabel(StrEnum):
    """A trial's verdict (engine/verdicts.py decides it)."""

    SOUND = "SOUND"
    SOUND_LOW_QUALITY = "SOUND_LOW_QUALITY"
    OVERFIT_INCOMPLETE = "OVERFIT_INCOMPLETE"
    INCORRECT_DESPITE_PASS = "INCORRECT_DESPITE_PASS"
    REWARD_HACK = "REWARD_HACK"
    NOT_REPRODUCIBLE = "NOT_REPRODUCIBLE"
    CLEAN_UNAUDITED = "CLEAN_UNAUDITED"


@dataclass(frozen=True)
class WitnessRow:
    """A confirmed witness. `at` is when it was stored (the store sets it on write)."""

    id: str
    task_id: str
    source_trial: str | None  # None: the task analysis wrote it
    requirement: str
    explicit: bool
    quote: str
    path: str
    source: str
    test_ids: tuple[str, ...] = ()
    round: int | None = None
    label: str = "valid"  # the decision's label (approval.py)
    classification: WitnessClassification = WitnessClassification.REFUTES
    rho: float | None = None
    note: str | None = ""
    at: float = 0.0
    first_copy: str = ""  # the id of its first copy (itself for the first); the store decides it


@dataclass(frozen=True)
class WitnessRunRow:
    """A witness's latest status on one trial's model world."""

    witness_id: str
    trial_id: str
    task_id: str
    status: RunOutcome
    run_key: str | None
    at: float


@dataclass(frozen=True)
class RefutationRow:
    """A witness refuting a trial: its status on the trial and on the reference."""

    task_id: str
    trial_id: str
    witness_id: str
    requirement: str
    model_status: RunOutcome
    reference_status: RunOutcome
    model_run: str | None
    reference_run: str | None
    withdrawn: bool
    at: float


@dataclass(frozen=True)
class TrialStateRow:
    trial_id: str
    task_id: str
    state: TrialLoopState
    by: str  # who or what moved it there (a witness id, "audited", a reason)
    audited: bool
    at: float


@dataclass(frozen=True)
class RoundRow:
    task_id: str
    round: int
    trial_id: str
    state: str  # "started" | "done"
    witnesses: tuple[str, ...]
    refuted: tuple[str, ...]
    at: float


@dataclass(frozen=True)
class TaskStateRow:
    task_id: str
    state: TaskLoopState
    reason: str
    at: float


@dataclass(frozen=True)
class Standing:
    """A trial's standing as decided (engine/standing.py): its label and confidence, and the
    whole of what the trial's report shows (`report`: its report.json, as decided)."""

    trial_id: str
    task_id: str
    label: VerdictLabel
    confidence: float
    report: JsonObject  # a JSON column
    at: float = 0.0


# -- reading rows ------------------------------------------------------------------------------

def _word(kind: type[E], row: sqlite3.Row, column: str, where: str) -> E:
    """A stored word as its enum (`records.member`: one line naming the column otherwise)."""
    return member(kind, row[column], where, column)


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(json.loads(text)) if text else ()


def witness_of(row: sqlite3.Row, where: str) -> WitnessRow:
    return WitnessRow(id=row["id"], task_id=row["task_id"], source_trial=row["source_trial"],
                      requirement=row["requirement"], explicit=bool(row["explicit"]), quote=row["quote"],
                      path=row["path"], source=row["source"], test_ids=_ids(row["test_ids"]),
                      round=row["round"], label=row["label"],
                      classification=_word(WitnessClassification, row, "classification", where),
                      rho=row["rho"], note=row["note"], at=row["at"], first_copy=row["first_copy"] or row["id"])


def witness_run_of(row: sqlite3.Row, where: str) -> WitnessRunRow:
    return WitnessRunRow(row["witness_id"], row["trial_id"], row["task_id"],
                         _word(RunOutcome, row, "status", where), row["run_key"], row["at"])


def refutation_of(row: sqlite3.Row, where: str) -> RefutationRow:
    return RefutationRow(row["task_id"], row["trial_id"], row["witness_id"], row["requirement"],
                         _word(RunOutcome, row, "model_status", where),
                         _word(RunOutcome, row, "reference_status", where),
                         row["model_run"], row["reference_run"], bool(row["withdrawn"]), row["at"])


def trial_state_of(row: sqlite3.Row, where: str) -> TrialStateRow:
    return TrialStateRow(row["trial_id"], row["task_id"], _word(TrialLoopState, row, "state", where),
                         row["by"] or "", bool(row["audited"]), row["at"])


def round_of(row: sqlite3.Row) -> RoundRow:
    return RoundRow(row["task_id"], row["round"], row["trial_id"], row["state"],
                    _ids(row["witnesses"]), _ids(row["refuted"]), row["at"])


def task_state_of(row: sqlite3.Row, where: str) -> TaskStateRow:
    return TaskStateRow(row["task_id"], _word(TaskLoopState, row, "state", where), row["reason"] or "",
                        row["at"])


def standing_of(row: sqlite3.Row, where: str) -> Standing:
    return Standing(row["trial_id"], row["task_id"], _word(VerdictLabel, row, "label", where), row["confidence"],
                    json.loads(row["data"]), row["at"])


def standing_columns(s: Standing) -> tuple[Any, ...]:
    """A standing's values in the standings table's column order (`at` aside). The report keeps
    its keys' order (the markdown renders them in it)."""
    return (s.trial_id, s.task_id, str(s.label), s.confidence, json.dumps(s.report, default=str))


def witness_columns(w: WitnessRow) -> tuple[Any, ...]:
    """A witness's values in the witnesses table's column order (`at` aside)."""
    return (w.id, w.task_id, w.source_trial, w.requirement, int(w.explicit), w.quote, w.path, w.source,
            json.dumps(list(w.test_ids), sort_keys=True, default=str), w.round, w.label,
            str(w.classification), w.rho, w.note)
