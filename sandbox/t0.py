"""One T0 run in one world, with outcomes keyed by T0's ids as the benchmark writes them.

A task that ships its own evaluator (`task.tests.evaluator`) is judged by it: a Harbor task by
its own verifier flow (testjack_tui.sandbox.official), a SWE-bench task by the harness's test command and log
parser for its repository (testjack_tui/swebench_harness.py). Otherwise our own runner runs the tests in the prepared world; ids a
benchmark writes as JUnit `classname.name` are mapped to pytest node ids and the outcomes
mapped back (testjack_tui.sandbox.test_ids), so nothing downstream sees a second id scheme.

The null world sees everything: ids the benchmark's own flow left out of its reports on R (a
suite that does not even collect without the change stops a whole pytest session) are run once
more with our runner, which collects file by file, so the other tests' statuses on R are known.
"""
from __future__ import annotations

import dataclasses
import shlex

from testjack_tui.model import Task, Trial

from .api import ExecResult, TestOutcome, TestRun, WorldRef, as_status
from .backend import SandboxBackend
from .errors import SandboxError
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


def direct_mapping(task: Task, ids: list[str]) -> dict[str, str]:
    """`ids` (T0 ids) -> the ids our runner runs them as (one pass over T0: linear in its size)."""
    known = direct_ids(task)
    return {i: known.get(i, i) for i in ids}


async def run_direct(sb: SandboxBackend, task: Task, world: WorldRef, ids: list[str], timeout: float | None = 600) -> TestRun:
    """Our runner on `ids` (T0 ids), outcomes re-keyed to those ids."""
    mapping = direct_mapping(task, ids)
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


def full_log(result: ExecResult, cap: int = 64 * 1024 * 1024) -> str:
    """The whole output of a command (its log on disk), not only the head and tail kept in memory."""
    if result.log_path is not None:
        try:
            with open(result.log_path, "rb") as fh:
                return fh.read(cap).decode(errors="replace")
        except OSError:
            pass
    return result.output


async def run_swebench(sb: SandboxBackend, task: Task, world: WorldRef, timeout: float | None = 1800) -> TestRun:
    """The harness's test command in the prepared world (patch and T0 applied as the harness
    applies them), statuses from the repository's log parser (testjack_tui/swebench_harness.py)."""
    from testjack_tui.swebench_harness import ACTIVATE, parse_log

    ev = task.tests.evaluator
    if ev is None:
        raise SandboxError(f"{task.id}: no SWE-bench evaluator (test command and log parser)")
    ids = list(dict.fromkeys(task.tests.ids))
    cmd = f"{ACTIVATE}; cd {shlex.quote(world.workdir)} && {ev.test_command}"
    result = await sb.exec(world, ["bash", "-c", cmd], timeout=timeout)
    parsed = parse_log(ev.log_parser, full_log(result))
    outcomes = {}
    for test_id in ids:
        status = parsed.get(test_id)
        if status is not None:
            outcomes[test_id] = TestOutcome(test_id, as_status(status))
        elif result.timed_out:
            outcomes[test_id] = TestOutcome(test_id, "timed_out", "the test command hit its timeout")
        else:
            outcomes[test_id] = TestOutcome(test_id, "not_found", "missing from the test log")
    return TestRun(world=world.name, test_ids=ids, outcomes=outcomes, exec=result, flow="official",
                   reported=len(parsed))


def t0_plan(task: Task) -> tuple[str, str]:
    """(the command T0 runs as, what reads its results), in words for `verify` and reports:
    the same choice run_t0 makes."""
    ev = task.tests.evaluator
    framework = task.tests.framework or "pytest"
    if ev is not None and ev.kind == "swebench":
        return ev.test_command, f"the harness's {ev.log_parser} log parser"
    if ev is not None:
        ids = "classname.name" if ev.report_format == "junit" else ev.node_id
        where = " in the separate verifier environment" if ev.separate else ""
        return (f"bash /tests/test.sh{where} (timeout {ev.timeout_sec:g}s)",
                f"the task's {ev.report_format} report(s) {', '.join(ev.reports)} (ids: {ids})")
    return f"our {framework} runner on T0's ids", f"our {framework} runner's report"


async def run_t0(sb: SandboxBackend, task: Task, world: WorldRef, trial: Trial | None = None,
                 timeout: float | None = 600) -> TestRun:
    """T0 in `world` (a prepared world of `task`; `trial` for a model world)."""
    ids = list(dict.fromkeys(task.tests.ids))
    ev = task.tests.evaluator
    if ev is not None and ev.kind == "swebench":
        return await run_swebench(sb, task, world, timeout)
    if ev is None or not hasattr(sb, "run_official"):
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
