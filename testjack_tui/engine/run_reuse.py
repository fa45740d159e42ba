"""A new session that reads T0's runs from a finished session of the same benchmark instead of
running them again (`audit BENCH --agent operator --candidate FILE --from-session SESSION`).

An operator's test added after a scripted audit needs the same T0 runs that audit already made
(null and reference twice, every trial's reproduction): a run is keyed by the world's image tag,
its test ids, its files and its repeat number (engine/runner.run_key), so a stored run with the
same key is the same run. Only runs without files (T0 as the benchmark ships it) are lent: a
run carrying a candidate's files is always this session's own, so the operator's test is run,
never read. A lent run is copied into the new session's own store when first asked for (with
its canary verdict), so the new session is complete on its own and counts it as any other run.
The lending session is only read, and
may still be running."""
from __future__ import annotations

from pathlib import Path

from testjack_tui.errors import InputError

from .records_runs import StoredRun
from .store import SessionStore, db_path, session_ref

META_KEY = "runs_from"  # the lending session's id, in the new session's meta


def lender_for(ref: str, benchmark: str, trials: list[str] | None) -> str:
    """The id of the session `ref` names, checked as a lender for an audit of `benchmark`
    (resolved path) on `trials` (None: any): it exists, audited that benchmark, and ran T0 on
    each of those trials. It may still be running: a stored run never changes once written.
    Bad input: one InputError naming `--from-session`."""
    session_id = session_ref(ref)
    try:
        path = db_path(session_id)
    except InputError:
        path = None
    if path is None or not path.exists():
        raise InputError("audit", "--from-session", f"no session {ref!r} (see `testjack-tui sessions`)")
    store = SessionStore(path)
    try:
        config = store.get_meta("config")
        lent = str(config.get("benchmark") or "") if isinstance(config, dict) else ""
        if Path(lent) != Path(benchmark):
            raise InputError("audit", "--from-session",
                             f"session {session_id} audited {lent}, not {benchmark}")
        checked = store.trial_checks()
        for trial_id in trials or ():
            if trial_id not in checked:
                raise InputError("audit", "--from-session",
                                 f"trial {trial_id!r} is not in session {session_id} (no T0 run of it there)")
    finally:
        store.close()
    return session_id


def lender_store(store: SessionStore) -> SessionStore | None:
    """The lending session's store for a session created with one (None otherwise, or when it
    is gone: then every run is made here, as in any session)."""
    lender = store.get_meta(META_KEY)
    if not isinstance(lender, str) or not lender:
        return None
    try:
        path = db_path(lender)
    except InputError:
        return None
    return SessionStore(path) if path.exists() else None


def borrow(lender: SessionStore | None, store: SessionStore, key: str) -> StoredRun | None:
    """The lender's run under `key`, copied into `store` with its canary checks; None when it
    has none. The caller lends only runs without files (see the module's docstring)."""
    if lender is None:
        return None
    run = lender.get_run(key)
    if run is None:
        return None
    for check in lender.canary_checks(key=key):  # first, as the runner stores them
        store.put_canary_check(check)
    store.put_run(run)
    return run
