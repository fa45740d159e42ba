"""The Audit screen while the engine waits (issues 31.1/31.2, 34.2/34.3): the header's clock moves
with no event and no key, tasks not started say `queued` with how many go before them, and in
step mode one key opens a pending decision, the status line names the gate `n` releases, and a
row shows the decision once given. Engine on its simulated sandbox (engine_fakes)."""
from __future__ import annotations

from engine_fakes import FakeSandbox, cand, make_task, make_trial
from test_engine_loop import build
from test_tui_cockpit import rendered, status_text
from tui_wait import wait_for
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.approval import ApprovalScreen
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.widgets.budget import BudgetGauges

TASKS = ("p1", "p2", "p3")


def three_tasks():
    tasks = [make_task(t) for t in TASKS]
    trials, chains = [], {}
    for t in TASKS:
        trials += [make_trial(t, f"{t}a", "m1", ["alias"]), make_trial(t, f"{t}b", "m2", ["alias"])]
        chains[f"{t}a"] = [[cand(t, f"{t}a", 1, "alias")]]
        chains[f"{t}b"] = [[cand(t, f"{t}b", 1, "alias")]]
    return tasks, trials, chains


def screen_for(session) -> AuditScreen:
    bench = session.deps.benchmark
    return AuditScreen(session, bench, trial_views(bench, None, None))


def clock(screen: AuditScreen) -> str:
    text = rendered(screen.query_one(BudgetGauges))
    return text[text.index("time"):].split("runs")[0].strip()


async def test_the_header_clock_moves_with_no_event_and_no_key():
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "rounds": 10})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        # The engine waits for the operator: no event comes until a decision does.
        await wait_for(pilot, lambda: bool(screen.state.pending))
        await wait_for(pilot, lambda: len(screen.inbox) == 0, what="the engine's events taken in")
        await pilot.pause()
        seen = screen.state.events_seen
        before = clock(screen)
        # The clock moves, the wait for the operator on it, and said so.
        await wait_for(pilot, lambda: clock(screen) != before and "(you " in clock(screen),
                       what=f"the clock moving on from {before!r} and counting the operator's wait")
        assert screen.state.events_seen == seen  # nothing happened in the engine
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_tasks_not_started_say_queued_in_the_status_line_and_the_trials_table():
    tasks, trials, chains = three_tasks()
    sandbox = FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials}, delay=0.1)
    session, _, _ = build({"auto_approve": True, "task_analysis": False, "parallel_tasks": 1, "rounds": 2},
                          task=tasks, trials=trials, chains=chains, sandbox=sandbox)
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: "p3: queued (1 ahead)" in status_text(screen))
        line = status_text(screen)
        assert "p2: queued (next)" in line and "p1: checking the task" in line
        rows = {t.trial_id: t.state for t in screen.state.trials.values()}
        assert rows["p3a"] == rows["p3b"] == "queued" and rows["p1a"] == "checking"
        await wait_for(pilot, lambda: screen.state.state == "finished")
        assert not any(t.state in ("queued", "checking") for t in screen.state.trials.values())


async def test_step_mode_one_key_opens_a_pending_verdict_and_the_row_shows_the_decision():
    tasks, trials, chains = three_tasks()
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "step": True, "rounds": 1,
                           "parallel_tasks": 3}, task=tasks[:2], trials=trials[:4],
                          chains={k: v for k, v in chains.items() if not k.startswith("p3")})
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        # Both tasks wait at their first round's gate; the status line says which one n releases.
        await wait_for(pilot, lambda: len(screen.state.gates) == 2)
        first = screen.state.gates[0][0]
        other = "p2" if first == "p1" else "p1"
        await wait_for(pilot, lambda: f"(n releases {first} first)" in status_text(screen),
                       what=f"the status line naming the gate n releases ({first})")
        line = status_text(screen)
        assert f"{first}: waits: round 1 of {first} — n releases it" in line
        assert f"(n releases {first} first)" in line
        screen.query_one("#candidate-table").focus()
        await pilot.press("n")
        # The verdict reaches the operator with no gate before it: one key opens it.
        await wait_for(pilot, lambda: bool(screen.state.pending))
        await wait_for(pilot, lambda: f"{first}: waits for your decision" in status_text(screen),
                       what=f"{first} waiting for the decision on the status line")
        assert all(t != first for t, _ in screen.state.gates)
        assert "after the verdict" not in status_text(screen)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        candidate = app.screen.ctx.candidate_id
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen is screen and not screen.state.pending)
        await wait_for(pilot, lambda: screen.state.candidates[candidate].decision == "approved",
                       what="the decision on the candidate's row")
        assert screen.state.candidates[candidate].status in ("approved", "witness")
        # No second gate after the operator's decision: only the other task's round waits.
        assert [t for t, _ in screen.state.gates] == [other]
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)


async def test_a_task_back_from_a_decision_says_it_waits_for_a_work_slot():
    """p1's decision is answered while p2 holds the only slot: p1's status line no longer shows its
    last round but that it waits for a work slot, until it has one again (SlotWait events)."""
    import asyncio

    from testjack_tui.engine.events import TaskState

    class HeldSandbox(FakeSandbox):
        """p2's test runs wait at a gate: p2 keeps the slot as long as the test wants."""
        gate: asyncio.Event | None = None

        async def run_tests(self, world, test_ids, files=None, timeout=300, isolate_harness=False):
            if world.task_id == "p2" and self.gate is not None:
                await self.gate.wait()
            return await super().run_tests(world, test_ids, files, timeout, isolate_harness)

    tasks, trials, chains = three_tasks()
    tasks, trials = tasks[:2], [t for t in trials if t.task_id in ("p1", "p2")]
    sandbox = HeldSandbox({t.id: t for t in tasks}, {t.id: t for t in trials})
    sandbox.gate = asyncio.Event()
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 1, "rounds": 1},
                          task=tasks, trials=trials, chains=chains, sandbox=sandbox)

    def on_event(event):
        if isinstance(event, TaskState) and (event.task_id, event.state) == ("p2", "checking"):
            for request in session.pending_approvals():  # p1 waited for this; p2 has the slot now
                session.answer(f"approval:{request.candidate.id}", decision_for_all(request.candidate.id))

    session.subscribe(on_event)
    screen = screen_for(session)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: "p1: waiting for a work slot (next)" in status_text(screen))
        assert "round 1" not in status_text(screen).split("p1:")[1].split("│")[0]
        assert screen.state.slot_waits == {"p1": 0}
        sandbox.gate.set()  # p2 goes on and gives its slot back at its own decision (not answered yet)
        await wait_for(pilot, lambda: not screen.state.slot_waits)
        assert screen.state.state != "finished" and "waiting for a work slot" not in status_text(screen)

        def answer_p2() -> bool:
            for request in session.pending_approvals():
                session.answer(f"approval:{request.candidate.id}", decision_for_all(request.candidate.id))
            return screen.state.state == "finished"

        await wait_for(pilot, answer_p2)
        assert screen.state.slot_waits == {} and "waiting for a work slot" not in status_text(screen)


def decision_for_all(candidate_id: str):
    from testjack_tui.engine.roles import ApprovalDecision
    return ApprovalDecision(True, "valid", "operator", "approved in the test")
