"""Test runs one session takes from another of the same benchmark instead of running them again
(`audit BENCH --reuse-runs SESSION`, the config's `reuse_runs`).

A run is keyed by the world's snapshot tag, its test ids, every file's text, the isolation and the
re-run number (engine/runner.run_key): a stored run with the same key is this very run, made in
a fresh container as ours would be. So a per-trial audit after a lightweight one runs only what
the lightweight loop did not, and an operator's test added after a scripted audit runs only
itself (T0's runs on every world are the scripted audit's). A run of one test alone is also
answered by the lender's run of the same test (test_key) on the same world snapshot, isolation and
re-run number, alone or batched with others (`borrow_same_test`): what engine/oracle.taken_run
does within a session, so a per-trial audit's validation of a test the lightweight loop replayed on
that trial runs nothing. A lent run is copied into the
borrowing session's own store, with its canary verdict and this session's task, trial and
candidates, and counts against its budget as a run made here: the session is complete on its own
(report, export, resume) and its limits pause it where they would without reuse. The lending
session is only read, and may still be running: a stored run never changes once written.
A trial's ghost lines (T0 under coverage in its model world, the one part of its evidence a
container measures) are taken the same way (`lent_ghost`): the lender's measurement on the same
world snapshot with the same T0, so a per-trial audit does not measure again every trial the
lightweight loop audited.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath

from testjack_tui.errors import InputError
from testjack_tui.sandbox.runners import moved_grader_ids

from .records_cands import CandidateRecord
from .records import JsonObject
from .records_runs import StoredRun, TestOutcomes, of_file
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


def lent_ghost(lender: SessionStore, trial_id: str, world: str, image: str, t0_run: str) -> JsonObject | None:
    """The ghost-line measurement (the `ghost` part of a trial's evidence: T0 under coverage in
    its model world) the lender made of `trial_id` on the same world snapshot (`world`@`image`)
    with the same T0 ids (it holds T0's run there under `t0_run`, our key of it), or None. The
    snapshot holds the trial's patch, T0 and the environment; the measurement reads nothing else,
    so it is the one this session would make (the coverage run is trial code, like a test run).
    A report that measured nothing (its `error`) is not taken: measuring again may tell why."""
    if lender.get_run(t0_run) is None or not any(w.name == world and w.image == image for w in lender.worlds()):
        return None
    ghost = (lender.get_evidence(trial_id) or {}).get("ghost")
    if not isinstance(ghost, dict) or ghost.get("error") or ghost.get("trial_id") != trial_id:
        return None
    return dict(ghost)


TestKey = tuple[str, str, tuple[str, ...]]


def test_key(path: str, source: str, run_ids: Sequence[str]) -> TestKey:
    """What makes two candidates one test: the same source and ids in the same folder, whatever
    name a session gave the file (a run gives every candidate file a fresh name anyway,
    sandbox/hidden_names.py). `run_ids`: the ids the test runs as (its file when none)."""
    ids = tuple(t[len(path):] if t.startswith(path) else "\0" + t for t in run_ids)
    return str(PurePosixPath(path).parent), source, ids


class LenderTests:
    """The lender's runs of candidates' tests, by task (read once per task: a stored run never
    changes, and one the lender makes later is only a run not taken)."""

    def __init__(self, lender: SessionStore):
        self.lender = lender
        self._by_task: dict[str, list[tuple[StoredRun, list[CandidateRecord]]]] = {}

    def _runs(self, task_id: str) -> list[tuple[StoredRun, list[CandidateRecord]]]:
        if task_id not in self._by_task:
            candidates = {c.id: c for c in self.lender.candidates(task_id)}
            self._by_task[task_id] = [
                (run, [candidates[c] for c in run.candidate_ids])
                for run in self.lender.runs(task_id)
                if run.same_as is None and run.candidate_ids and all(c in candidates for c in run.candidate_ids)]
        return self._by_task[task_id]

    def same_test(self, task_id: str, world: str, isolate: bool, want: TestKey,
                  key_of: Callable[[list[str], dict[str, str]], str]) -> tuple[StoredRun, str] | None:
        """The lender's run that ran the test `want` on `world` (a world's name) with this
        isolation, and that test's file in it; None when it has none. `key_of(ids,
        files)`: our key of a run of those inputs on our world snapshot and re-run number, so a
        run of another snapshot or re-run number never matches."""
        for run, candidates in self._runs(task_id):
            if run.world != world or run.isolate != isolate:
                continue
            for c in candidates:
                ids = [t for t in run.test_ids if t == c.path or t.startswith(c.path + "::")]
                if ids and test_key(c.path, c.source, ids) == want and \
                        key_of(list(run.test_ids), {x.path: x.source for x in candidates}) == run.key:
                    return run, c.path
        return None


def borrow_same_test(tests: LenderTests, store: SessionStore, key: str, world: str, framework: str, isolate: bool,
                     path: str, source: str, run_ids: list[str], task_id: str, trial_id: str | None,
                     candidate_ids: Iterable[str], key_of: Callable[[list[str], dict[str, str]], str],
                     reserve: Callable[[], None]) -> StoredRun | None:
    """A run of one test file (`path`, `source`, `run_ids`) stored under `key` from the lender's
    run of the same test on the same world, isolation and re-run number, its outcomes named as
    this run names them (after `reserve` counted it, like a lent run); None when there is none."""
    found = tests.same_test(task_id, world, isolate, test_key(path, source, run_ids), key_of)
    if found is None:
        return None
    row, theirs = found
    reserve()
    for check in tests.lender.canary_checks(key=row.key):
        store.put_canary_check(dataclasses.replace(check, key=key, task_id=task_id, trial_id=trial_id))
    run = dataclasses.replace(row, key=key, task_id=task_id, trial_id=trial_id, candidate_ids=tuple(candidate_ids),
                              test_ids=tuple(run_ids), outcomes=outcomes_moved(row.outcomes, framework, theirs, path),
                              same_as=None)
    store.put_run(run)
    return run


def outcomes_moved(outcomes: TestOutcomes, framework: str | None, old: str, new: str,
                   old_ids: Sequence[str] = (), new_ids: Sequence[str] = ()) -> TestOutcomes:
    """The outcomes of the test in file `old` (its listed ids `old_ids`) as a run of the same test
    in file `new` (ids `new_ids`, in the same order) names them: our runner's `path::test` ids and
    the grader's own (cargo's `<package>::<target>: <test>`, where the target is the file's stem:
    the export reads those), messages naming the file too. One rule for a run taken under another
    file name, within a session (engine/oracle.taken_run) or from a lender (`borrow_same_test`)."""
    def ours(node: str) -> str:
        if node in old_ids:
            return new_ids[list(old_ids).index(node)]
        return new + node[len(old):] if node.startswith(old) else node

    picked = {node: ours(node) for node in of_file(outcomes, old, old_ids)}
    picked.update({node: moved for node, moved in moved_grader_ids(framework, old, new, outcomes).items()
                   if node not in picked})
    return {mine: dict(outcomes[node], message=str(outcomes[node].get("message") or "").replace(old, new))
            for node, mine in picked.items()}


def _other_benchmark(store: SessionStore, benchmark: str) -> str | None:
    """The benchmark the session of `store` audited when it is not `benchmark`, else None."""
    config = store.get_meta("config")
    theirs = str(config.get("benchmark") or "") if isinstance(config, dict) else ""
    return None if Path(theirs) == Path(benchmark) else theirs
