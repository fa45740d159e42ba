"""Which tasks' audits could not run, from the session's database alone.

A task whose audit did not run must not pass for one that found nothing: `audit` exits non-zero
and names each such task with its reason. Read here:
- the task's state: `failed` (an engine error) or `audit_failed` (the engine's own verdict that
  candidates could not run, when it records one: this is the hook for it);
- otherwise, what is already stored: candidates were run on the reference world, every one of
  those runs ended without the runner reporting the test (an error, a timeout, the test not
  found: never the candidate's own assertion), and none became a witness.
"""
from __future__ import annotations

from .failure_kinds import AUDIT_FAILED
from .store import SessionStore

FAILED_STATES = ("failed", AUDIT_FAILED)
RUNNER_FAILURES = ("error", "not_found", "timed_out")  # the runner, not the candidate, failed


def audit_failures(store: SessionStore) -> dict[str, str]:
    """task id -> why its audit failed (one line), for every task whose audit could not run."""
    out: dict[str, str] = {}
    for task_id, row in store.task_states().items():
        if row.get("state") in FAILED_STATES:
            out[task_id] = row.get("reason") or row["state"]
    with_witness = {w["task_id"] for w in store.witnesses()}
    by_task: dict[str, list[str]] = {}
    for v in store.validations():
        by_task.setdefault(v["task_id"], []).append(v.get("reference") or "")
    for task_id, statuses in by_task.items():
        if task_id in out or task_id in with_witness:
            continue
        if statuses and all(s in RUNNER_FAILURES for s in statuses):
            kinds = ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))
            out[task_id] = (f"no candidate run on the reference world got a result from the runner "
                            f"({kinds}): nothing was audited")
    return out
