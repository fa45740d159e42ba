"""A relay-style session (issue 31, items 5 and 6): the reviewer and the explainer are the real LLM
roles, the real openai client talks to the local fake endpoint with scripted answers, the engine
runs on its simulated sandbox. The reviewer is shown every case id (a passing one too) and must
judge each; every refuted trial's "What is wrong" quotes the assertion and its "Why it happens"
is the one explanation its failure pattern got; the checklist lists the requirement once."""
from __future__ import annotations

import dataclasses

import pytest
from engine_fakes import FakeAnalyst, FakeAudit, cand, make_benchmark, make_task, make_trial, tools_factory
from fake_openai_server import FakeOpenAIServer, Reply
from test_engine_reviews import CaseSandbox
from test_failure_patterns import RolesWithExplainer, why_parts

from testjack_tui.agents.chat import OpenAIChatModel
from testjack_tui.agents.explainer import LLMExplainer
from testjack_tui.agents.roles_llm import LLMReviewer
from testjack_tui.config import Profile
from testjack_tui.engine.hooks import default_classifier
from testjack_tui.engine.report import build_report
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import app_hooks, session_deps

T = "t1"
PATH = "tests/test_tj_alias.py"
WHY = "The trial resolves names before it reads the alias table, so an alias is looked up as itself."


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def model(server) -> OpenAIChatModel:
    return OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model", timeout=5,
                                   max_retries=1, retry_backoff=0.01))


def review(cases: list[str]) -> dict:
    return {"label": "valid", "requirement": "handles alias", "explicit": True,
            "quote": "It must handle alias and quoting.", "reason": "P asks for aliases; the message is incidental",
            "overall": "KEEP_SOME",
            "cases": [{"test_id": c, "label": "VALID" if c.endswith("test_required") else "INVALID",
                       "scope": "in_scope", "overfitting": "none" if c.endswith("test_required") else "to_reference",
                       "reason": "r"} for c in cases]}


async def test_reviewer_and_explainer_through_the_endpoint(server, testjack_home):
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B", ["alias"]),
              make_trial(T, "a3", "model-C")]
    source = cand(T, "a1", 1, "alias")
    chains = {"a1": [[dataclasses.replace(source, source=source.source + "# CASES\n")]]}
    required, incidental = f"{PATH}::test_required", f"{PATH}::test_incidental"
    # The reviewer first leaves out the case the trial misses: the answer goes back, naming it.
    server.script(Reply(tool_calls=[("submit", review([incidental]))]),
                  Reply(tool_calls=[("submit", review([required, incidental]))]),
                  Reply(tool_calls=[("submit", {"why": WHY})]))
    roles = RolesWithExplainer(FakeAudit(chains), LLMReviewer(model(server)), FakeAnalyst({}),
                               explainer=LLMExplainer(model(server)))
    cfg = SessionConfig(benchmark="fake", rounds=1, auto_approve=True, audit_first=["a1"], task_analysis=False)
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               sandbox_factory=CaseSandbox({task.id: task}, {t.id: t for t in trials}),
                                               tools_factory=tools_factory,
                                               hooks=app_hooks(classifier=default_classifier)), session_id="relay-31")
    assert await session.run() == "finished"
    assert len(server.requests) == 3 and server.remaining == 0
    shown = server.requests[0]["messages"][1]["content"]
    assert f"Case ids to judge (2, one entry each): {incidental}, {required}" in shown
    assert f"PASSED {required}" in shown and f"FAILED {incidental}" in shown  # on the reference / on a1
    answers = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert f"cases: no entry for {required}" in answers[-1]
    explain = server.requests[2]["messages"][1]["content"]
    assert "handles alias" in explain and "assert 'x' == 'y'" in explain
    report = build_report("relay-31", benchmark=make_benchmark([task], trials))
    whys = why_parts(report)
    assert sorted(whys) == ["a1", "a2"]
    assert all(WHY in w and "one call for 2 trials failing this way" in w for w in whys.values())
    for t in report.trials:
        for f in t.findings:
            assert "(assert 'x' == 'y')" in f.explanations["what_is_wrong"]
    [row] = [r for r in report.checklists[T] if r.witnesses]
    assert row.clause == "handles alias" and row.failing_trials == {"a1", "a2"}
