"""Checks before auditing a task: is it well-formed, and does each passing trial reproduce?

Well-formed and vacuous are decided by the one rule `verify` uses too
(testjack_tui.sandbox.wellformed.assess); T0 runs as testjack_tui.sandbox.t0 runs it (the benchmark's own evaluator when the
task ships one). A task that is not well-formed is reported and excluded, never silently audited. A trial whose patch does not apply, or that does
not pass T0 when we re-run it, is NOT_REPRODUCIBLE and excluded; the recorded verdict is kept
as data beside our own re-run, never overwritten.

Flaky T0 tests: null and reference run T0 twice; a test whose outcome differs between two runs
of the same world (there, or on a trial's world re-run after a failure) is marked flaky and
left out of well-formedness and reproduction. The flaky tests are named in the task check.
"""
from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from testjack_tui.sandbox.api import WorldKind, WorldRef
from testjack_tui.sandbox.errors import PatchError
from testjack_tui.sandbox.wellformed import assess, diagnose
from testjack_tui.model import Task, Trial

from .aio import gather_all
from .events import TaskChecked, TrialState
from .records_runs import TaskCheckRow, TrialCheckRow
from .roles import BudgetExceeded
from .records_standing import TrialLoopState

from .env import EngineEnv

if TYPE_CHECKING:
    from .runner import RunResult


@dataclass
class TaskCheck:
    task_id: str
    well_formed: bool
    problems: list[str] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # T0 tests whose outcome differs between runs
    worlds: dict[str, WorldRef] = field(default_factory=dict)  # "null" / "reference"
    trial_worlds: dict[str, WorldRef] = field(default_factory=dict)  # trial id -> its model world
    reproducible: list[Trial] = field(default_factory=list)
    not_reproducible: dict[str, str] = field(default_factory=dict)  # trial id -> reason


async def _prepare(env: EngineEnv, task: Task, kind: WorldKind, trial: Trial | None
                   ) -> tuple[WorldRef, None] | tuple[None, str]:
    """(WorldRef, None) or (None, reason) when a patch does not apply; other errors propagate."""
    name = f"{task.id}/{kind}" + (f"/{trial.id}" if trial else "")
    try:
        world = await env.sandbox.prepare(task, kind, trial=trial)
    except PatchError as exc:
        env.store.put_world(name, task.id, kind, trial.id if trial else None, "", (), str(exc))
        return None, str(exc)
    env.store.put_world(world.name, task.id, kind, trial.id if trial else None, world.image,
                        world.tampered)
    return world, None


def _status(run: RunResult, test_id: str) -> str:
    outcome = run.outcomes.get(test_id)
    return outcome.get("status", "not_found") if outcome else "not_found"


async def check_task(env: EngineEnv, task: Task, trials: list[Trial]) -> TaskCheck:
    """Prepare the worlds and run T0 in them; `trials` are the officially passing ones."""
    check = TaskCheck(task.id, well_formed=True)
    ids = list(task.tests.ids)
    if not task.reference.present:
        check.well_formed = False
        check.problems.append("no reference solution G: this task cannot be audited with an oracle")
    if not ids:
        check.well_formed = False
        check.problems.append("T0 lists no fail-to-pass or pass-to-pass tests")
    if check.well_formed:
        for kind in ("null", "reference"):
            world, error = await _prepare(env, task, kind, None)
            if world is None:
                check.well_formed = False
                check.problems.append(f"the {kind} world cannot be built: {error}")
            else:
                check.worlds[kind] = world
    guards: list[str] = []
    if check.well_formed:
        null_run, ref_run, null_again, ref_again = await gather_all((
            env.runner.run_t0(task, check.worlds["null"]),
            env.runner.run_t0(task, check.worlds["reference"]),
            env.runner.run_t0(task, check.worlds["null"], repeat=1),
            env.runner.run_t0(task, check.worlds["reference"], repeat=1)))
        check.flaky = [t for t in ids if _status(null_run, t) != _status(null_again, t)
                       or _status(ref_run, t) != _status(ref_again, t)]
        verdict = assess(without(task, check.flaky), null_run, ref_run)
        check.problems.extend(verdict.problems)
        check.vacuous = verdict.vacuous
        guards = verdict.regression_guards
        check.well_formed = not check.problems
    env.store.put_task_check(_row(check, trials, guards))
    env.emit(TaskChecked(env.session_id, task_id=task.id, well_formed=check.well_formed,
                         problems=tuple(check.problems), vacuous=tuple(check.vacuous)))
    if not check.well_formed:
        for trial in trials:
            _record_trial(env, trial, reproduced=False, reason="task is not well-formed", excluded=True)
        return check
    stable = [t for t in ids if t not in check.flaky]
    results = await asyncio.gather(*(_reproduce(env, task, trial, stable) for trial in trials),
                                   return_exceptions=True)
    budget_error = None
    for trial, result in zip(trials, results):
        if isinstance(result, BudgetExceeded):
            budget_error = budget_error or result
            continue
        if isinstance(result, BaseException):
            raise result
        world, reason, newly_flaky = result
        check.flaky += [t for t in newly_flaky if t not in check.flaky]
        if world is None:
            check.not_reproducible[trial.id] = reason or "not reproducible"
        else:
            check.trial_worlds[trial.id] = world
            check.reproducible.append(trial)
    if budget_error is not None:
        raise budget_error
    if check.flaky:  # some only showed on a trial's world: keep the stored check complete
        env.store.put_task_check(_row(check, trials, guards))
    return check


def _row(check: TaskCheck, trials: list[Trial], guards: list[str]) -> TaskCheckRow:
    return TaskCheckRow(check.task_id, check.well_formed, tuple(check.problems), tuple(check.vacuous),
                        passing_trials=tuple(t.id for t in trials), regression_guards=tuple(guards),
                        flaky=tuple(check.flaky))


def without(task: Task, flaky: list[str]) -> Task:
    """The task as the well-formedness rule sees it: flaky T0 tests left out."""
    if not flaky:
        return task
    tests = dataclasses.replace(task.tests, fail_to_pass=tuple(t for t in task.tests.fail_to_pass if t not in flaky),
                                pass_to_pass=tuple(t for t in task.tests.pass_to_pass if t not in flaky))
    return dataclasses.replace(task, tests=tests)


async def _reproduce(env: EngineEnv, task: Task, trial: Trial, ids: list[str]
                     ) -> tuple[WorldRef | None, str | None, list[str]]:
    """(world, None, flaky ids) or (None, reason, flaky ids); `ids`: T0 without known flaky tests."""
    world, error = await _prepare(env, task, "model", trial)
    if world is None:
        reason = f"patch does not apply: {error}"
        _record_trial(env, trial, reproduced=False, reason=reason)
        return None, reason, []
    run = await env.runner.run_t0(task, world, trial)
    if getattr(run, "proven_tampering", False):
        reason = "proven tampering (canary_tampering): " + "; ".join(run.tampering)
        _record_trial(env, trial, reproduced=False, reason=reason, tampered=getattr(world, "tampered", ()))
        return None, reason, []
    bad = [t for t in ids if _status(run, t) != "passed"]
    newly_flaky: list[str] = []
    if bad:  # a failure is believed only if a re-run of the same world shows it again
        again = await env.runner.run_t0(task, world, trial, repeat=1)
        newly_flaky = [t for t in ids if _status(run, t) != _status(again, t)]
        bad = [t for t in bad if t not in newly_flaky]
    failing = [f"{test_id} ({_status(run, test_id)})" for test_id in bad]
    if failing:
        reason = diagnose("model", run, ids) or (
            "recorded pass, reproduced fail: " + ", ".join(failing[:5]) + (" ..." if len(failing) > 5 else ""))
        _record_trial(env, trial, reproduced=False, reason=reason, tampered=getattr(world, "tampered", ()))
        return None, reason, newly_flaky
    _record_trial(env, trial, reproduced=True, reason="", tampered=getattr(world, "tampered", ()))
    return world, None, newly_flaky


def _record_trial(env: EngineEnv, trial: Trial, reproduced: bool, reason: str, excluded: bool = False,
                  tampered: tuple[str, ...] = ()) -> None:
    # The recorded verdict (official_pass) and our re-run (reproduced) are separate fields.
    env.store.put_trial_check(TrialCheckRow(
        trial.id, trial.task_id, reproduced, reason, model=trial.model, agent=trial.agent,
        official_pass=trial.official_pass, reward=trial.reward, excluded=excluded, tampered=tuple(tampered)))
    if not reproduced:
        state = TrialLoopState.EXCLUDED if excluded else TrialLoopState.NOT_REPRODUCIBLE
        env.store.set_trial_state(trial.id, trial.task_id, state, reason)
        env.emit(TrialState(env.session_id, task_id=trial.task_id, trial_id=trial.id, state=state, by=reason))
