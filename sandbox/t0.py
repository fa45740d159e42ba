"""One T0 run in one world, with outcomes keyed by T0's ids as the benchmark writes them.

A task that ships its own evaluator (`task.tests.evaluator`) is judged by it
(sandbox.official). Otherwise our own runner runs the tests in the prepared world; ids a
benchmark writes as JUnit `classname.name` are mapped to pytest node ids and the outcomes
mapped back (sandbox.test_ids), so nothing downstream sees a second id scheme.

The null world sees everything: ids the benchmark's own flow left out of its reports on R (a
suite that does not even collect without the change stops a whole pytest session) are run once
more with our runner, which collects file by file, so the other tests' statuses on R are known.
"""
from __future__ import annotations

import dataclasses

from testjack_tui.model import Task, Trial

from .api import TestOutcome, TestRun, WorldRef
from .grader_reports import MISSING
from .runners import RUNNERS
from .test_ids import is_pytest_id, junit_to_pytest

NULL_FILL_NOTE = "missing from the benchmark's report on R; status from our runner"


def direct_ids(task: Task) -> dict[str, str]:
    """T0 id -> the id our runner understands (pytest node ids for pytest tasks)."""
    framework = task.tests.framework or "pytest"
    files = list(task.tests.test_files)
    if framework != "pytest":
        return {i: i for i in task.tests.ids}
    return {i: (i if is_pytest_id(i) else junit_to_pytest(i, files)) for i in task.tests.ids}


async def run_direct(sb, task: Task, world: WorldRef, ids: list[str], timeout: float | None = 600) -> TestRun:
    """Our runner on `ids` (T0 ids), outcomes re-keyed to those ids."""
    mapping = {i: direct_ids(task).get(i, i) for i in ids}
    run = await sb.run_tests(world, list(dict.fromkeys(mapping.values())), timeout=timeout)
    outcomes = {}
    for test_id, node in mapping.items():
        got = run.outcomes.get(node)
        outcomes[test_id] = (dataclasses.replace(got, id=test_id) if got is not None
                             else TestOutcome(test_id, "not_found", "no such test was collected"))
    return dataclasses.replace(run, test_ids=list(ids), outcomes=outcomes, flow="direct",
                               reported=sum(1 for o in run.outcomes.values() if o.status != "not_found"))


def has_direct_runner(task: Task) -> bool:
    return (task.tests.framework or "pytest") in RUNNERS


async def run_t0(sb, task: Task, world: WorldRef, trial: Trial | None = None,
                 timeout: float | None = 600) -> TestRun:
    """T0 in `world` (a prepared world of `task`; `trial` for a model world)."""
    ids = list(dict.fromkeys(task.tests.ids))
    if task.tests.evaluator is None or not hasattr(sb, "run_official"):
        return await run_direct(sb, task, world, ids, timeout)
    run = await sb.run_official(task, world.kind, trial)
    if world.kind != "null" or not has_direct_runner(task):
        return run
    missing = [i for i in ids if run.outcomes[i].status == "not_found"]
    if not missing:
        return run
    fill = await run_direct(sb, task, world, missing, timeout)
    if all(fill.outcomes[i].status == "not_found" for i in missing):
        return run  # our runner finds nothing either: the benchmark's own run tells why
    outcomes = dict(run.outcomes)
    for test_id in missing:
        got = fill.outcomes[test_id]
        if got.status != "not_found":
            outcomes[test_id] = dataclasses.replace(
                got, message=f"{NULL_FILL_NOTE}: {got.message}" if got.message else NULL_FILL_NOTE)
    return dataclasses.replace(run, outcomes=outcomes)


__all__ = ["run_t0", "run_direct", "direct_ids", "MISSING"]
