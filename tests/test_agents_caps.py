"""Each role's step and request caps against a useless endpoint (tests/fake_openai_server.py's
`hostile()`): every role stops at its request cap, retries included, with one line naming it,
and a one-round audit of one task stays within 60 requests."""
from __future__ import annotations

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial
from engine_fakes import FakeSandbox, make_benchmark, make_task
from engine_fakes import make_trial as fake_trial
from fake_openai_server import FakeOpenAIServer, hostile

from testjack_tui.agents import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst, OpenAIChatModel
from testjack_tui.agents.caps import ROLE_CAPS, RequestCapReached
from testjack_tui.config import Profile
from testjack_tui.engine.events import Log
from testjack_tui.engine.roles import Candidate
from testjack_tui.compose import session_deps

CANDIDATE = Candidate(id="calc:trial-1:1.v1", path="tests/test_tj_negative.py",
                      source="def test_neg():\n    assert 1\n", requirement="rejects negatives", author="audit")


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        srv.responder = hostile()
        yield srv


def model(server, structured_output="auto"):
    # The default retries (4): the cap counts each attempt, so retries cannot multiply it.
    return OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model", timeout=5,
                                   retry_backoff=0.0, structured_output=structured_output))


@pytest.mark.parametrize("structured_output", ["tool", "auto"])
async def test_each_role_stops_at_its_request_cap_naming_itself(server, structured_output):
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    analysis_ctx = make_ctx(FileWorlds(None), None, [])
    roles = [("task_analysis", lambda: LLMTaskAnalyst(model(server, structured_output)).analyse(analysis_ctx)),
             ("audit", lambda: LLMAuditAgent(model(server, structured_output)).audit(ctx)),
             ("reviewer", lambda: LLMReviewer(model(server, structured_output)).review(ctx, CANDIDATE))]
    for role, call in roles:
        before = len(server.requests)
        with pytest.raises(RequestCapReached) as caught:
            await call()
        assert len(server.requests) - before == ROLE_CAPS[role].requests
        assert str(caught.value).startswith(f"{role} gave up: its {ROLE_CAPS[role].requests} requests per ")
        assert "last failure: " in str(caught.value) and "\n" not in str(caught.value)


async def test_repair_has_its_own_cap(server):
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    auditor = LLMAuditAgent(model(server, "tool"))
    auditor._keep(ctx, auditor._new_session(ctx))  # the conversation a repair continues
    before = len(server.requests)
    with pytest.raises(RequestCapReached, match=r"^audit \(repair\) gave up: its 12 requests per repair"):
        await auditor.repair(ctx, CANDIDATE, "failed on the reference")
    assert len(server.requests) - before == ROLE_CAPS["repair"].requests


async def test_a_one_round_audit_of_one_task_against_a_useless_endpoint_stays_under_60_requests(server):
    from testjack_tui.engine.session import AuditSession, SessionConfig

    task = make_task("t1")
    trials = [fake_trial("t1", "a1", "model-A", ["alias"]), fake_trial("t1", "a2", "model-B")]
    bench = make_benchmark([task], trials)

    class Roles:
        audit = LLMAuditAgent(model(server))
        reviewer = LLMReviewer(model(server))
        task_analysis = LLMTaskAnalyst(model(server))
        implementer = None

    session = AuditSession.create(SessionConfig(benchmark="fake", mode="lightweight", rounds=1),
                                  session_deps(benchmark=bench, roles=Roles(),
                                               sandbox_factory=FakeSandbox({"t1": task}, {t.id: t for t in trials}),
                                               tools_factory=lambda env, task, trial, worlds, evidence: FileWorlds(trial)))
    events: list = []
    session.subscribe(events.append)
    assert await session.run() == "failed"
    assert len(server.requests) <= 60
    gave_up = [e.message for e in events if isinstance(e, Log) and "gave up" in e.message]
    assert len(gave_up) == 1 and "task_analysis gave up" in gave_up[0], gave_up


def test_the_caps_are_printed_at_start(monkeypatch):
    from testjack_tui.agents.factory import describe_role
    from testjack_tui.config import load_config

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    lines = {role: describe_role(load_config(), role, "openai") for role in ("task_analysis", "audit", "reviewer")}
    assert lines["task_analysis"].endswith("caps (requests include retries): 20 steps, 28 requests per task; "
                                           "repair 8 steps, 12 requests per repair")
    assert "20 steps, 28 requests per trial" in lines["audit"]
    assert lines["reviewer"].endswith("6 steps, 10 requests per candidate; explainer (the reviewer's model) "
                                      "2 steps, 4 requests per failure pattern")
