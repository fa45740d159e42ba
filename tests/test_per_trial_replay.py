"""Per-trial mode measures every witness on every passing trial of its task (rho), but a witness
whose class no run can change (the ambiguity rule's explicit class) waits: each trial runs every
witness that waited for it in one run when its round starts, and the task's end runs the rest, one
run per trial (engine/loop_witnesses.replay_now). Same measurements, same outcome, 2 (n - 1) replay
runs instead of n (n - 1) for n trials whose audits all find a witness."""
from __future__ import annotations

import dataclasses

from engine_fakes import cand, make_task, make_trial
from test_engine_loop import build, states

from testjack_tui.compose import app_hooks
from testjack_tui.engine.ambiguity import classify_witnesses
from testjack_tui.engine.summary import outcome_view

T = "t1"
N = 5


def scenario():
    # Trial pi misses requirement ri (and p1 also r2): its own audit's test of ri is a witness
    # of an explicit requirement (`quoted`), so it refutes pi whatever the other trials do.
    task = make_task(T)
    trials = [make_trial(T, f"p{i}", f"model-{i % 3}", [f"r{i}"] + (["r2"] if i == 1 else []))
              for i in range(1, N + 1)]
    chains = {f"p{i}": [[cand(T, f"p{i}", 1, f"r{i}")]] for i in range(1, N + 1)}
    return task, trials, chains


def quoted(task, witnesses, *args, **kwargs):
    """The ambiguity rule, each witness quoting P (the fake reviewer's one-word quote proves
    nothing: ambiguity.quote_in_prompt)."""
    return classify_witnesses(task, [dataclasses.replace(w, quote="It must handle alias and quoting")
                                     for w in witnesses], *args, **kwargs)


def unsettled(*args, **kwargs):
    """The same, without telling the loop that a class is settled: every witness is replayed on
    every other trial as soon as it is confirmed."""
    return {wid: dataclasses.replace(c, settled=False) for wid, c in quoted(*args, **kwargs).items()}


def replay_runs(sandbox, session) -> int:
    """Isolated runs on model worlds that are neither a validation nor its flaky-control re-run."""
    isolated = [c for c in sandbox.runs(f"{T}/model/") if c[4]]
    validations = session.store.validations(T)
    return len(isolated) - len([v for v in validations if v.model_run]) - len(
        [v for v in validations if v.outcome == "discriminates"])


async def test_explicit_witnesses_wait_and_each_trial_runs_them_in_one_run_with_the_same_outcome():
    task, trials, chains = scenario()
    results = {}
    for name, hooks in (("waits", app_hooks(classifier=quoted)), ("at once", app_hooks(classifier=unsettled))):
        session, sandbox, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains, hooks=hooks)
        assert await session.run() == "finished"
        summary = session.summary()
        matrix = {(r.witness_id, r.trial_id): r.status for r in session.store.witness_runs(T)}
        results[name] = (outcome_view(summary), matrix, replay_runs(sandbox, session),
                         {w.id: (w.classification, w.rho) for w in summary.tasks[T].witnesses})
        assert states(summary) == {f"p{i}": "refuted" for i in range(1, N + 1)}
    waits, at_once = results["waits"], results["at once"]
    assert waits[0] == at_once[0]  # states, witnesses, rounds
    assert waits[1] == at_once[1] and len(waits[1]) == N * N  # every witness measured on every trial
    assert waits[1][(f"{T}:p2:1.v1", "p1")] == "failed"  # p1 misses r2 too: measured, refutes only p2
    assert waits[3] == at_once[3]  # classes and rho
    assert at_once[2] == N * (N - 1)  # one run per other trial and round
    assert waits[2] == 2 * (N - 1)  # one run per trial as its round starts (not the first), one at the end (not the last)


async def test_an_implicit_witness_is_still_replayed_at_once():
    # Without a quote of P the class depends on rho: the loop replays it on every trial before
    # the round ends, as in the lightweight loop.
    task, trials, chains = scenario()

    session, sandbox, _ = build({"mode": "per-trial"}, task=task, trials=trials, chains=chains,
                                hooks=app_hooks())  # the fake reviewer's quote is too short: implicit
    assert await session.run() == "finished"
    assert replay_runs(sandbox, session) == N * (N - 1)
    assert len(session.store.witness_runs(T)) == N * N
    assert {w.classification for w in session.summary().tasks[T].witnesses} == {"refutes"}  # rho 1/3 each
