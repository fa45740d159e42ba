"""Which tasks' audits could not run, from the session's database alone.

A task whose audit did not run must not pass for one that found nothing: `audit` exits non-zero
and names each such task with its reason. The task's state says it: `failed` (an engine error)
or `audit_failed`, which the engine records when no candidate could run on the reference world
(`failure_kinds.void_audit`, applied by `TaskLoop.void_reason`: one rule, read here, not redone).
"""
from __future__ import annotations

from .records_standing import TaskLoopState
from .store import SessionStore

FAILED_STATES = (TaskLoopState.FAILED, TaskLoopState.AUDIT_FAILED)


def audit_failures(store: SessionStore) -> dict[str, str]:
    """task id -> why its audit failed (one line), for every task whose audit could not run."""
    return {task_id: row.reason or row.state
            for task_id, row in store.task_states().items() if row.state in FAILED_STATES}
