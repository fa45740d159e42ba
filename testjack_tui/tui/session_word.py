"""The one word the audit header shows for the session, read from the live state.

A step gate or an operator's pause of one task emits a session-wide `paused`, yet the other tasks
keep working (issue 34: a wait holds no slot). The header says `running` while any task is at
work, and names how many wait; `waiting` when every task left waits for the operator (a gate, a
decision, their tests); `paused` for a pause of the whole session (p, a budget)."""
from __future__ import annotations

from typing import Any

ENDED = ("finished", "excluded", "failed")


def waiting_tasks(s: Any, writing: str = "") -> list[str]:
    """Tasks held at a gate, waiting for a decision of the operator, or (`writing`) for the
    operator's tests."""
    pending = {r.task_id for r in s.pending.values()}
    return [t for t in s.tasks if t in s.task_paused or t in pending or t == writing]


def tasks_at_work(s: Any, writing: str = "") -> list[str]:
    """Tasks not ended and not waiting for the operator (queued ones included: they start when a
    slot frees)."""
    waiting = set(waiting_tasks(s, writing))
    ended = {t for t, standing in s.task_states.items() if standing.state in ENDED}
    return [t for t in s.tasks if t not in waiting and t not in ended]


def header_state(s: Any, writing: str = "") -> tuple[str, str]:
    """(word, note): the session's state as the header shows it, and what waits ("" when none).
    `writing`: the task whose audit waits for the operator's tests (the editor's target).

    Read from the tasks, not from the last Paused/RoundStarted event: one task's gate and another
    task's round arrive in any order (the walk saw `paused` over a running task, and `running`
    when every task waited for the operator)."""
    if s.state not in ("running", "paused"):
        return s.state, ""
    if s.state == "paused" and s.reason not in ("step", "operator"):
        return "paused", ""  # a budget holds every task
    waiting = len(waiting_tasks(s, writing))
    if not waiting:
        return s.state, ""  # a session-wide pause, or nothing waits
    if not tasks_at_work(s, writing):
        return "waiting", ""  # every task left waits for the operator: the status line says for what
    # Short: at 80 columns it shares the first row with "n decisions waiting for you (…)".
    return "running", f"{waiting} task{'s' if waiting != 1 else ''} wait{'s' if waiting == 1 else ''}"
