"""Waiting for a person holds no work slot (issue 34): a task whose decision is never answered
does not stop the others, tasks not started are reported as queued with how many go before
them, and the order and pace of the operator's answers change nothing in the results.
On the simulated sandbox of engine_fakes.py; timeouts here are hang guards only."""
from __future__ import annotations

import asyncio

from engine_fakes import cand, make_task, make_trial
from test_engine_loop import build
from testjack_tui.engine.events import ApprovalRequested, Paused, TaskState
from testjack_tui.engine.report import build_report
from testjack_tui.engine.roles import ApprovalDecision
from testjack_tui.engine.session import list_sessions
from testjack_tui.engine.summary import outcome_view

TASKS = ("p1", "p2", "p3")


def three_tasks():
    tasks = [make_task(t) for t in TASKS]
    trials, chains = [], {}
    for t in TASKS:
        trials += [make_trial(t, f"{t}a", "m1", ["alias"]), make_trial(t, f"{t}b", "m2", ["quote"]),
                   make_trial(t, f"{t}c", "m3")]
        chains[f"{t}a"] = [[cand(t, f"{t}a", 1, "alias"), cand(t, f"{t}a", 2, "quote")]]
        chains[f"{t}b"] = [[cand(t, f"{t}b", 1, "quote")]]
        chains[f"{t}c"] = [[cand(t, f"{t}c", 1, "alias")]]
    return tasks, trials, chains


def decision_for(candidate_id: str) -> ApprovalDecision:
    """The operator's answer, fixed per candidate: the quote candidates are overruled."""
    if ":2." in candidate_id or candidate_id.endswith("b:1.v1"):
        return ApprovalDecision(False, "invalid", "operator", "overruled in the test")
    return ApprovalDecision(True, "valid", "operator", "approved in the test")


async def test_a_decision_never_answered_holds_no_slot_and_the_other_tasks_finish():
    tasks, trials, chains = three_tasks()
    # One slot: before, p1's pending decision held it and p2, p3 never started.
    session, sandbox, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 1,
                                 "rounds": 3}, task=tasks, trials=trials, chains=chains)
    finished: set[str] = set()
    both_done = asyncio.Event()

    def on_event(event):
        if isinstance(event, ApprovalRequested) and event.task_id != "p1":
            session.answer(event.request_id, decision_for(event.candidate_id))
        if isinstance(event, TaskState) and event.state == "finished":
            finished.add(event.task_id)
            if {"p2", "p3"} <= finished:
                both_done.set()

    session.subscribe(on_event)
    run = asyncio.ensure_future(session.run())
    await asyncio.wait_for(both_done.wait(), 30)
    # p1 still waits for its decision, and waits holding nothing.
    assert "p1" not in finished
    assert [r.task_id for r in session.pending_approvals()] and \
        {r.task_id for r in session.pending_approvals()} == {"p1"}
    assert session.slots is not None and session.slots.free == 1 and session.slots.busy_peak == 1
    assert session.store.task_states()["p1"].state == "auditing"
    assert session.budget.waiting_seconds > 0  # the wait is open and on the clock (unrounded: no duration bound)
    for request in session.pending_approvals():
        session.answer(f"approval:{request.candidate.id}", decision_for(request.candidate.id))

    def answer_late(event):
        if isinstance(event, ApprovalRequested):
            session.answer(event.request_id, decision_for(event.candidate_id))

    session.subscribe(answer_late)
    assert await asyncio.wait_for(run, 30) == "finished"
    states = session.store.task_states()
    assert {t: states[t].state for t in TASKS} == {t: "finished" for t in TASKS}
    assert sandbox.calls  # the worlds ran
    usage = session.summary().usage
    # The wait was recorded (unrounded in the store; the summary rounds to 0.1 s, so a fast
    # run may show 0.0 there: no duration is asserted, only that it is counted and reported).
    assert float(session.store.get_meta("waiting_seconds", 0.0)) > 0
    assert 0 <= usage.waiting_seconds <= usage.seconds
    import json
    assert "waiting_seconds" in json.loads((session.directory / "summary.json").read_text())["usage"]


async def test_tasks_not_started_are_queued_with_how_many_are_ahead():
    tasks, trials, chains = three_tasks()
    session, sandbox, _ = build({"auto_approve": True, "task_analysis": False, "parallel_tasks": 1,
                                 "rounds": 1}, task=tasks, trials=trials, chains=chains)
    seen: list[tuple[str, str, int]] = []
    listed: list[dict] = []

    def on_event(event):
        if isinstance(event, TaskState):
            seen.append((event.task_id, event.state, event.ahead))
            if (event.task_id, event.state, event.ahead) == ("p3", "queued", 1):
                # While p1 runs, p3 has run nothing and `sessions` says two tasks wait.
                assert not [c for c in sandbox.calls if c[1].startswith("p3/")]
                listed.extend(s for s in list_sessions() if s["id"] == session.id)

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 30) == "finished"
    assert ("p2", "queued", 0) in seen and ("p3", "queued", 1) in seen and ("p3", "queued", 0) in seen
    # Queued, then checking (its T0 check), then auditing: in that order for each task.
    for t in TASKS[1:]:
        states = [s for task, s, _ in seen if task == t]
        assert states.index("queued") < states.index("checking") < states.index("auditing")
    assert listed and listed[0]["queued"] == 2 and listed[0]["state"] == "running"
    assert session.slots is not None and session.slots.busy_peak == 1


def _results(session) -> dict:
    report = build_report(session.id)
    return {"outcome": outcome_view(session.summary()),
            "trials": sorted((t.trial_id, t.state, t.label, t.audited,
                              tuple(sorted(f.witness_id for f in t.findings)))
                             for t in report.trials),
            "decisions": sorted((d.candidate, d.decision, d.label, d.counts) for d in report.decisions)}


async def _run_answering(order: str) -> dict:
    tasks, trials, chains = three_tasks()
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 2,
                           "rounds": 3, "seed": 5}, task=tasks, trials=trials, chains=chains)
    waiting: list[ApprovalRequested] = []

    def on_event(event):
        if isinstance(event, ApprovalRequested):
            if order == "at once":
                session.answer(event.request_id, decision_for(event.candidate_id))
            else:
                waiting.append(event)

    async def answer_newest_when_idle():
        # The slow operator: answers only when no task has anything else to do, newest first.
        while True:
            await asyncio.sleep(0.005)
            slots = session.slots
            if slots is not None and waiting and slots.free == slots.size:
                event = waiting.pop()
                session.answer(event.request_id, decision_for(event.candidate_id))

    session.subscribe(on_event)
    answerer = asyncio.ensure_future(answer_newest_when_idle())
    try:
        assert await asyncio.wait_for(session.run(), 60) == "finished"
    finally:
        answerer.cancel()
    return _results(session)


async def test_the_same_decisions_in_another_order_give_the_same_report():
    quick = await _run_answering("at once")
    slow = await _run_answering("newest first, when idle")
    assert quick == slow
    assert any(t[1] == "refuted" for t in quick["trials"]) and any(t[4] for t in quick["trials"])
    assert {d[1] for d in quick["decisions"]} == {"approved", "overruled"}


async def test_step_mode_asks_for_the_decision_without_a_gate_before_it():
    """One key per decision: the verdict reaches the operator at once; no 'after the verdict'
    gate stands before it, and none after a decision the operator gave."""
    task = make_task("s1")
    trials = [make_trial("s1", "s1a", "m", ["alias"])]
    chains = {"s1a": [[cand("s1", "s1a", 1, "alias")]]}
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "step": True},
                          task=task, trials=trials, chains=chains)
    gates: list[str] = []

    def on_event(event):
        if isinstance(event, Paused):
            gates.append(event.waiting_for)
            asyncio.get_running_loop().call_soon(session.step_next)
        if isinstance(event, ApprovalRequested):
            session.answer(event.request_id, decision_for(event.candidate_id))

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 30) == "finished"
    assert gates and all(g.startswith("round") for g in gates)


async def test_a_decision_is_recorded_and_shown_at_once_while_the_slots_are_busy():
    """The answer is stored and announced before the task waits for a slot to go on: the row
    says what the operator decided even while every slot works for other tasks."""
    from engine_fakes import FakeSandbox
    from testjack_tui.engine.events import ApprovalAnswered

    tasks, trials, chains = three_tasks()
    tasks, trials = tasks[:2], [t for t in trials if t.task_id in ("p1", "p2")]
    sandbox = FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials}, delay=0.02)
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 1, "rounds": 1},
                          task=tasks, trials=trials, chains=chains, sandbox=sandbox)
    seen: dict[str, object] = {}

    def on_event(event):
        if isinstance(event, TaskState) and (event.task_id, event.state) == ("p2", "checking"):
            for request in session.pending_approvals():  # p1 waits; p2 has just taken the slot
                session.answer(f"approval:{request.candidate.id}", decision_for(request.candidate.id))
        if isinstance(event, ApprovalRequested) and event.task_id == "p2":
            session.answer(event.request_id, decision_for(event.candidate_id))
        if isinstance(event, ApprovalAnswered) and event.candidate_id.startswith("p1") and "p2" not in seen:
            seen["p2"] = session.store.task_states()["p2"].state
            seen["free"] = session.slots.free if session.slots else None

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 30) == "finished"
    assert seen == {"p2": "checking", "free": 0}


async def test_a_task_back_from_a_decision_says_it_waits_for_a_slot_then_that_it_has_one():
    """p1's decision comes while p2 holds the only slot: p1 announces it waits for a slot (none of
    its work runs meanwhile), then that it has one, and only then goes on. A task not started is
    announced by TaskState "queued" instead, never by SlotWait."""
    from engine_fakes import FakeSandbox
    from testjack_tui.engine.events import ApprovalAnswered, SlotWait, TestRunFinished

    tasks, trials, chains = three_tasks()
    tasks, trials = tasks[:2], [t for t in trials if t.task_id in ("p1", "p2")]
    sandbox = FakeSandbox({t.id: t for t in tasks}, {t.id: t for t in trials}, delay=0.02)
    session, _, _ = build({"auto_approve": False, "task_analysis": False, "parallel_tasks": 1, "rounds": 1},
                          task=tasks, trials=trials, chains=chains, sandbox=sandbox)
    seen: list[object] = []

    def on_event(event):
        seen.append(event)
        if isinstance(event, TaskState) and (event.task_id, event.state) == ("p2", "checking"):
            for request in session.pending_approvals():  # p1 waits; p2 has just taken the slot
                session.answer(f"approval:{request.candidate.id}", decision_for(request.candidate.id))
        if isinstance(event, ApprovalRequested) and event.task_id == "p2":
            session.answer(event.request_id, decision_for(event.candidate_id))

    session.subscribe(on_event)
    assert await asyncio.wait_for(session.run(), 30) == "finished"
    slot_events = [(i, e) for i, e in enumerate(seen) if isinstance(e, SlotWait)]
    assert slot_events and {e.task_id for _, e in slot_events} <= {"p1", "p2"}
    p1 = [(i, e.state, e.ahead) for i, e in slot_events if e.task_id == "p1"]
    assert [state for _, state, _ in p1][:2] == ["waiting", "granted"] and p1[0][2] == 0
    waiting_at, granted_at = p1[0][0], p1[1][0]
    answered_at = next(i for i, e in enumerate(seen)
                       if isinstance(e, ApprovalAnswered) and e.candidate_id.startswith("p1"))
    assert answered_at < waiting_at < granted_at
    # No work of p1 while it waits; p2's work goes on meanwhile.
    between = seen[waiting_at + 1:granted_at]
    assert not [e for e in between if isinstance(e, TestRunFinished) and e.task_id == "p1"]
    assert [e for e in between if getattr(e, "task_id", "") == "p2"]
    # Every "waiting" is followed by its "granted": nothing is left announced as waiting.
    for task in {e.task_id for _, e in slot_events}:
        states = [e.state for _, e in slot_events if e.task_id == task]
        assert states[0] == "waiting" and states[-1] == "granted"
        assert all(after == "waiting" for before, after in zip(states, states[1:]) if before == "granted")
    # A task that never started is "queued" by TaskState: p2 never gets a SlotWait before it starts.
    p2_start = next(i for i, e in enumerate(seen) if isinstance(e, TaskState) and (e.task_id, e.state) == ("p2", "checking"))
    assert not [i for i, e in slot_events if e.task_id == "p2" and i < p2_start]
