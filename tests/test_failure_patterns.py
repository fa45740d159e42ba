"""One cheap explanation call per witness-failure pattern (issue 31.5): every refuted trial's
"Why it happens" comes from it (audited or not), trials failing a witness the same way share one
call, the calls are counted in the budget and stored, so a report or a resumed session asks
nothing again. The real engine on its simulated sandbox (engine_fakes); the explainer is the real
LLM role with the real openai client against the local fake endpoint (scripted answers)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from engine_fakes import (FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, make_benchmark,
                          tools_factory)
from fake_openai_server import FakeOpenAIServer, Reply
from test_engine_loop import scenario

from testjack_tui.agents.explainer import LLMExplainer, ScriptedExplainer, scripted_why
from testjack_tui.agents.chat import OpenAIChatModel
from testjack_tui.config import Profile
from testjack_tui.engine.failure_patterns import pattern_key
from testjack_tui.engine.hooks import default_classifier
from testjack_tui.engine.report import build_report
from testjack_tui.engine.roles import FailurePattern
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import app_hooks, session_deps


@dataclass
class RolesWithExplainer(FakeRoles):
    explainer: object | None = None


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def session_with(explainer, session_id=None):
    task, trials, chains = scenario()
    sandbox = FakeSandbox({task.id: task}, {t.id: t for t in trials})
    roles = RolesWithExplainer(FakeAudit(chains), FakeReviewer(), FakeAnalyst(chains), explainer=explainer)
    cfg = SessionConfig(benchmark="fake", rounds=10, auto_approve=True)
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               sandbox_factory=sandbox, tools_factory=tools_factory,
                                               hooks=app_hooks(classifier=default_classifier)), session_id=session_id)
    return session, task, trials


def why_parts(report):
    """trial -> the "Why it happens" of its findings, joined."""
    return {t.trial_id: " ".join(f.explanations["why_it_happens"] for f in t.findings)
            for t in report.trials if t.refuted}


async def test_one_explanation_per_failure_pattern_through_the_endpoint(server):
    answers = [f"Cause number {i}: the trial's parser skips the alias table." for i in range(1, 9)]
    server.script(*[Reply(tool_calls=[("submit", {"why": a})]) for a in answers])
    explainer = LLMExplainer(OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model",
                                                     timeout=5, max_retries=1, retry_backoff=0.01)))
    session, task, trials = session_with(explainer)
    assert await session.run() == "finished"
    store = session.store
    refutations = [(r.trial_id, r.witness_id) for r in store.refutations()]
    refuted = sorted({t for t, _ in refutations})
    assert refuted == ["a1", "a2", "a4"]
    calls = len(server.requests)
    # Trials failing one witness the same way share one call: fewer calls than (trial, witness) pairs.
    assert 1 <= calls < len(refutations)
    # Each call is counted in the budget, under its own role.
    assert sum(1 for row in store.ledger() if row.role == "explainer") == calls
    request = server.requests[0]["messages"][1]["content"]
    assert "It must handle alias and quoting." in request and "untrusted-trial-data" in request
    # Every refuted trial's "Why it happens" quotes one of the answers; nothing says "Not explained".
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    whys = why_parts(report)
    assert sorted(whys) == refuted
    for trial_id, why in whys.items():
        assert any(a in why for a in answers[:calls]), (trial_id, why)
        assert "Not explained further" not in why
    shared = [w for w in whys.values() if "one call for" in w]
    assert shared, "a call stands for several trials failing the same way, and says so"
    # A second report reads the stored answers: no request.
    build_report(session.id, benchmark=make_benchmark([task], trials))
    assert len(server.requests) == calls


async def test_the_scripted_explainer_is_deterministic_and_shows_in_the_demo_report():
    session, task, trials = session_with(ScriptedExplainer())
    assert await session.run() == "finished"
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    whys = why_parts(report)
    assert sorted(whys) == ["a1", "a2", "a4"]
    assert all("(failed: assert expected == got), while the reference solution passes it" in w
               for w in whys.values())
    assert "These 2 trials all fail" in whys["a1"] and whys["a1"].split(" [")[0] == whys["a2"].split(" [")[0]
    assert sum(1 for row in session.store.ledger() if row.role == "explainer") >= 1  # zero tokens, counted
    p = FailurePattern(key="k", witness_id="w", test_path="tests/test_tj_w.py", test_source="", requirement="handles w",
                       quote="`w` (weeks)", status="failed", failing="ValueError: unknown unit 'w'", message="",
                       trials=("a", "b"), missing=False)
    assert scripted_why(p) == scripted_why(p) and scripted_why(p).startswith("These 2 trials all fail tests/test_tj_w.py")


def test_a_pattern_is_the_witness_the_outcome_and_the_assertion_addresses_aside():
    one = "tests/t.py::test_a: E       AssertionError: <Obj at 0x7f12ab> != 3\nE  Use -v to get more diff"
    two = "tests/t.py::test_a: E       AssertionError: <Obj at 0x7f99cd> != 3"
    assert pattern_key("w1", "failed", one) == pattern_key("w1", "failed", two)
    assert pattern_key("w1", "failed", one) != pattern_key("w2", "failed", one)
    assert pattern_key("w1", "failed", one) != pattern_key("w1", "error", one)
    assert pattern_key("w1", "failed", one) != pattern_key("w1", "failed", "E   AssertionError: 4 != 3")


async def test_an_explainer_that_gives_up_costs_the_audit_nothing(server):
    # The endpoint answers nothing usable (its script is empty: 500s): each pattern's call stops at
    # the explainer's request cap, one warning line names it, and the session finishes.
    from testjack_tui.agents.caps import ROLE_CAPS
    from testjack_tui.engine.events import Log

    explainer = LLMExplainer(OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model",
                                                     timeout=5, max_retries=0, retry_backoff=0.01)))
    session, task, trials = session_with(explainer)
    logs: list = []
    session.subscribe(lambda e: logs.append(e.message) if isinstance(e, Log) else None)
    assert await session.run() == "finished"
    gave_up = [m for m in logs if "the explainer gave up" in m]
    assert gave_up and len(server.requests) <= len(gave_up) * ROLE_CAPS["explainer"].requests
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    assert sorted(why_parts(report)) == ["a1", "a2", "a4"]  # the evidence still speaks
