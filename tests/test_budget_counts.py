"""--budget-runs counts every execution of trial code: the engine's runs, the agents' tool calls,
the detectors' container runs, and runs that were in flight when a process was killed."""
from __future__ import annotations

import pytest

from testjack_tui.engine.budget import Budget
from testjack_tui.engine.budgeted import BudgetedBackend
from testjack_tui.engine.config import BudgetLimits
from testjack_tui.engine.roles import BudgetExceeded
from testjack_tui.engine.store import SessionStore


class Recorder:
    def __init__(self):
        self.calls = []

    async def exec(self, world, cmd, timeout=60, cwd=None, env=None, stdin=None):  # SandboxBackend.exec
        self.calls.append(("exec", cmd))
        return "ran"

    async def run_tests(self, world, ids, files=None, timeout=300, isolate_harness=False):
        self.calls.append(("run_tests", tuple(ids)))
        return "ran"


async def test_detector_and_agent_executions_count_and_stop_at_the_limit(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    budget = Budget(store, BudgetLimits(test_runs=2), "s")
    inner = Recorder()
    counted = BudgetedBackend(inner, budget)
    await counted.exec("w", "coverage run")
    await counted.run_tests("w", ["t"])
    with pytest.raises(BudgetExceeded):
        await counted.exec("w", "one too many")
    assert budget.test_runs == 2 and len(inner.calls) == 2  # the third never ran
    await counted.unmetered.exec("w", "cat calc.py")  # reading a world's files is no run
    assert budget.test_runs == 2 and len(inner.calls) == 3

    from testjack_tui.compose import sandbox_tools

    class Env:
        sandbox = counted
    tools = sandbox_tools(Env, None, None, {}, None)
    assert tools.sandbox is counted  # the agents' tool calls go through the same one backend


def test_runs_in_flight_at_a_kill_are_counted_on_resume(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    budget = Budget(store, BudgetLimits(), "s")
    budget.reserve_test_runs(1)
    budget.reserve_test_runs(1)  # both started, neither stored: the process is killed here
    store.close()
    again = Budget(SessionStore(tmp_path / "s.db"), BudgetLimits(), "s")
    assert again.test_runs == 2


async def test_the_wall_time_budget_stops_a_hanging_run(tmp_path):
    import asyncio

    from testjack_tui.sandbox.api import WorldRef
    from testjack_tui.engine.runner import TestRunner

    class Hanging:
        cancelled = False

        async def run_tests(self, world, ids, files=None, timeout=300, isolate_harness=False):
            try:
                await asyncio.sleep(300)  # a trial that hangs until its own timeout
            except asyncio.CancelledError:
                Hanging.cancelled = True  # the sandbox removes the container on cancellation
                raise

    store = SessionStore(tmp_path / "s.db")
    budget = Budget(store, BudgetLimits(seconds=0.5), "s")
    budget.start_clock()
    runner = TestRunner(BudgetedBackend(Hanging(), budget), store, lambda e: None, "s")
    world = WorldRef("t", "model", "x", "img", "/app")
    with pytest.raises(BudgetExceeded) as exc:
        # the run's own timeout is 300 s; the hang guard fails long before it
        await asyncio.wait_for(runner.run(world, ["tests/test_a.py::test_a"], timeout=300), 60)
    assert exc.value.limit == "seconds" and Hanging.cancelled
    assert store.runs() == []  # nothing stored: resume runs it again


async def test_the_report_counts_the_same_runs_as_the_gauge(tmp_path):
    # The header's "runs" gauge is the budget; the report and `sessions` must say the same
    # number, commands run by agents and detectors included, also after reopening.
    from testjack_tui.engine.summary import build_summary

    store = SessionStore(tmp_path / "s.db")
    budget = Budget(store, BudgetLimits(), "s")
    counted = BudgetedBackend(Recorder(), budget)
    await counted.exec("w", "coverage run")
    await counted.run_tests("w", ["t"])
    assert budget.test_runs == 2
    assert build_summary(store).usage.test_runs == 2
    store.close()
    reopened = SessionStore(tmp_path / "s.db")
    assert Budget(reopened, BudgetLimits(), "s").test_runs == build_summary(reopened).usage.test_runs == 2
