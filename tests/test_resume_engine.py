"""Resuming: a session interrupted anywhere continues from its database without redoing stored
steps (no test re-run, no repeated audit/review/repair), and ends with the same result."""
from __future__ import annotations

import asyncio
import dataclasses
import os

from engine_fakes import FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox
from test_engine_loop import build, scenario
from testjack_tui.engine.events import RoundStarted
from testjack_tui.engine.session import AuditSession, list_sessions
from testjack_tui.engine.store import SessionStore
from testjack_tui.engine.summary import outcome_view
from testjack_tui.compose import session_deps


def fresh_deps(session, sandbox=None):
    """What a new process would build: new roles and a new sandbox on the same benchmark."""
    chains = session.deps.roles.audit.chains
    return dataclasses.replace(session.deps, roles=FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst(chains)),
                               sandbox_factory=sandbox or session.deps.sandbox_factory)


async def test_resume_after_a_crash_at_every_point_gives_the_same_result():
    reference, ref_sandbox, ref_roles = build({"seed": 5})
    await reference.run()
    expected = outcome_view(reference.summary())
    total = len(ref_sandbox.runs())
    task, trials, _ = scenario()
    for crash_at in range(1, total, 3):
        crashing = FakeSandbox({task.id: task}, {t.id: t for t in trials}, fail_after=crash_at)
        session, _, roles = build({"seed": 5}, sandbox=crashing)
        assert await session.run() == "failed"
        ran_before = len(crashing.runs())
        healthy = FakeSandbox({task.id: task}, {t.id: t for t in trials})
        again = AuditSession.open(session.id, fresh_deps(session, healthy))
        assert await again.run() == "finished"
        assert outcome_view(again.summary()) == expected, f"crash after {crash_at} runs"
        assert ran_before + len(healthy.runs()) == total, "stored runs are not repeated"
        new_roles = again.deps.roles
        assert set(roles.audit.audits).isdisjoint(new_roles.audit.audits), "no audit asked twice"
        assert set(roles.reviewer.reviewed).isdisjoint(new_roles.reviewer.reviewed), "no review asked twice"


async def test_stop_then_resume():
    task, trials, _ = scenario()
    slow = FakeSandbox({task.id: task}, {t.id: t for t in trials}, delay=0.01)
    session, _, _ = build({"seed": 4}, sandbox=slow)

    def on_event(event):
        if isinstance(event, RoundStarted) and event.round == 2:
            session.stop()

    session.subscribe(on_event)
    assert await session.run() == "stopped"
    assert session.state == "stopped"
    again = AuditSession.open(session.id, fresh_deps(session))
    assert await again.run() == "finished"
    reference, _, _ = build({"seed": 4})
    await reference.run()
    assert outcome_view(again.summary()) == outcome_view(reference.summary())


async def test_interrupted_sessions_are_listed_as_such():
    session, _, _ = build()
    await session.run()
    session.store.set_meta("state", "running")
    session.store.set_meta("pid", 2 ** 22 + 12345)  # no such process
    listed = {s["id"]: s for s in list_sessions()}
    assert listed[session.id]["state"] == "interrupted"
    assert listed[session.id]["refuted"] == 3
    session.store.set_meta("pid", os.getpid())
    session.store.set_meta("pid_start", "")
    assert {s["id"]: s for s in AuditSession.list()}[session.id]["state"] == "running"


def test_llm_response_cache_roundtrip(tmp_path):
    store = SessionStore(tmp_path / "x" / "session.db")
    assert store.get_llm_response("k") is None
    store.put_llm_response("k", '{"text": "hi"}')
    store.put_llm_response("d", {"text": "dict"})
    again = SessionStore(tmp_path / "x" / "session.db")
    assert again.get_llm_response("k") == '{"text": "hi"}'
    assert again.get_llm_response("d") == '{"text": "dict"}'


async def test_events_are_logged_in_the_database():
    session, _, _ = build()
    await session.run()
    kinds = [e["kind"] for e in AuditSession.open(session.id, session_deps()).events()]
    assert kinds[0] == "session_started" and kinds[-1] == "session_finished"
    assert "trial_refuted" in kinds and "witness_confirmed" in kinds


async def test_run_twice_concurrently_is_refused():
    session, _, _ = build()
    first = asyncio.ensure_future(session.run())
    await asyncio.sleep(0)
    try:
        await session.run()
    except RuntimeError as exc:
        assert "already running" in str(exc)
    else:
        raise AssertionError("a second run() must be refused")
    await first
