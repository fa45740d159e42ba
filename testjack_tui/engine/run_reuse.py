"""Test runs one session takes from another of the same benchmark instead of running them again
(`audit BENCH --reuse-runs SESSION`, the config's `reuse_runs`).

A run is keyed by the world's snapshot tag, its test ids, every file's text, the isolation and the
re-run number (engine/runner.run_key): a stored run with the same key is this very run, made in
a fresh container as ours would be. So a per-trial audit after a lightweight one runs only what
the lightweight loop did not, and an operator's test added after a scripted audit runs only
itself (T0's runs on every world are the scripted audit's). A lent run is copied into the
borrowing session's own store, with its canary verdict and this session's task, trial and
candidates, and counts against its budget as a run made here: the session is complete on its own
(report, export, resume) and its limits pause it where they would without reuse. The lending
session is only read, and may still be running: a stored run never changes once written.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from testjack_tui.errors import InputError

from .records_runs import StoredRun
from .store import SessionStore, db_path, session_ref


def lender_for(ref: str, benchmark: str, trials: Iterable[str] | None) -> str:
    """The id of the session `ref` names (an id or an `--out` folder), checked as a lender for an
    audit of `benchmark` on `trials` (None: any): it exists, audited that benchmark, and ran T0
    on each of those trials. Bad input: one InputError naming `--reuse-runs`."""
    session_id = session_ref(ref)
    try:
        path = db_path(session_id)
    except InputError:
        path = None
    if path is None or not path.exists():
        raise InputError("audit", "--reuse-runs", f"no session {ref!r} (see `testjack-tui sessions`)")
    store = SessionStore(path)
    try:
        if (theirs := _other_benchmark(store, benchmark)) is not None:
            raise InputError("audit", "--reuse-runs", f"session {session_id} audited {theirs}, not {benchmark}")
        checked = store.trial_checks()
        for trial_id in trials or ():
            if trial_id not in checked:
                raise InputError("audit", "--reuse-runs",
                                 f"trial {trial_id!r} is not in session {session_id} (no T0 run of it there)")
    finally:
        store.close()
    return session_id


def lender_store(lender: str | None, session_id: str, benchmark: str) -> SessionStore | None:
    """The store of the session whose runs `session_id` reuses (its config's reuse_runs), if any.
    A lender that is gone, is this session, or audited another benchmark fails the session with
    one line naming config.reuse_runs."""
    if not lender:
        return None
    if lender == session_id or not db_path(lender).exists():
        raise InputError(db_path(session_id), "config.reuse_runs",
                         f"no other session {lender!r} to reuse runs from (see `testjack-tui sessions`)")
    store = SessionStore(db_path(lender))
    # Only the same benchmark folder: a run's key names its world by content, but a lender
    # audited under another benchmark's settings (its flow, its limits) answered another question.
    if (theirs := _other_benchmark(store, benchmark)) is not None:
        store.close()
        raise InputError(db_path(session_id), "config.reuse_runs",
                         f"session {lender!r} audited {theirs!r}, not {benchmark!r}: "
                         "runs are reused only within one benchmark")
    return store


def borrow(lender: SessionStore, store: SessionStore, key: str, task_id: str, trial_id: str | None,
           candidate_ids: Iterable[str], reserve: Callable[[], None]) -> StoredRun | None:
    """The lender's run under `key`, copied into `store` as this session's own (its canary
    checks first, as the runner stores them), after `reserve` counted it against the budget;
    None when the lender has no such run."""
    row = lender.get_run(key)
    if row is None:
        return None
    reserve()
    for check in lender.canary_checks(key=key):
        store.put_canary_check(dataclasses.replace(check, task_id=task_id, trial_id=trial_id))
    # A run the lender copied from its own same test's run (oracle.taken_run) is a lent run here,
    # counted as one like the others: not marked as a copy of a run this session does not hold.
    run = dataclasses.replace(row, task_id=task_id, trial_id=trial_id, candidate_ids=tuple(candidate_ids),
                              same_as=None)
    store.put_run(run)
    return run


def _other_benchmark(store: SessionStore, benchmark: str) -> str | None:
    """The benchmark the session of `store` audited when it is not `benchmark`, else None."""
    config = store.get_meta("config")
    theirs = str(config.get("benchmark") or "") if isinstance(config, dict) else ""
    return None if Path(theirs) == Path(benchmark) else theirs
