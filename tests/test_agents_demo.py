"""The bundled demo's agent-scripts, replayed on real worlds.

- every officially passing demo trial has a loadable recorded audit (any sample works);
- a scripted audit runs its recorded steps in the worlds and writes/submits its candidates,
  and the recorded reviews and task analysis replay through the same runtime;
- the same recorded tool calls sent by the fake OpenAI server through the real client give
  the same outcome as scripted mode: one code path, two chat models.
"""
from __future__ import annotations

import pytest
import pytest_asyncio
from conftest import DEMO
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox import Sandbox
from testjack_tui.agents import (LLMAuditAgent, OpenAIChatModel, SandboxTools, ScriptedAuditAgent,
                                 ScriptedReviewer, ScriptedTaskAnalyst, make_roles)
from testjack_tui.config import Profile
from testjack_tui.engine.events import ToolCall
from testjack_tui.engine.roles import AuditContext

TASK = "merge-list-strategies"
TRIAL = "merge-list-strategies__orca__2"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DEMO)


def test_every_passing_trial_has_a_loadable_script(bench):
    agent = ScriptedAuditAgent(DEMO)
    missing = []
    for trial in bench.trials:
        if not trial.official_pass:
            continue
        ctx = AuditContext("s", bench.tasks[trial.task_id], trial, tools=None, emit=lambda e: None)
        try:
            turns = agent.model_for(ctx, "audit").turns
        except Exception as exc:  # collect every problem, not just the first
            missing.append(str(exc))
            continue
        assert turns[-1][0][0] == "submit"
    assert not missing, "\n".join(missing)




@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def worlds(bench):
    task = bench.tasks[TASK]
    trial = next(t for t in bench.trials if t.id == TRIAL)
    async with Sandbox(session="agents-demo", concurrency=1) as sb:
        refs = {"null": await sb.prepare(task, "null"), "reference": await sb.prepare(task, "reference"),
                "model": await sb.prepare(task, "model", trial)}
        yield sb, task, trial, refs


async def scripted_audit(worlds, agent):
    sb, task, trial, refs = worlds
    events: list = []
    async with SandboxTools(sb, task, trial, refs) as tools:
        ctx = AuditContext("demo", task, trial, tools, events.append)
        outcome = await agent.audit(ctx)
    return outcome, events, ctx


@pytest.mark.podman
@pytest.mark.asyncio(loop_scope="module")
async def test_scripted_audit_runs_its_steps_in_the_worlds(worlds):
    outcome, events, ctx = await scripted_audit(worlds, ScriptedAuditAgent(DEMO))
    finished = [e for e in events if isinstance(e, ToolCall) and e.finished]
    assert [e.name for e in finished][-2:] == ["write_test_file", "submit"]
    first = finished[0]
    assert first.name == "run" and "exit code 0" in first.result and "recordkit/merge.py" in first.result
    assert "def deep_merge" in finished[1].result  # read_file in the model world
    [candidate] = outcome.candidates
    assert candidate.id == f"{TASK}:{TRIAL}:1.v1" and candidate.origin == "candidates/au_replace_alias_v1.py"
    assert candidate.source == (DEMO / "agent-scripts" / TASK / candidate.origin).read_text()
    sb, task, trial, refs = worlds
    files = {candidate.path: candidate.source}
    reference = await sb.run_tests(refs["reference"], candidate.run_ids(), files=files)
    model = await sb.run_tests(refs["model"], candidate.run_ids(), files=files)
    assert reference.all_passed and model.any_failed
    verdict = await ScriptedReviewer(DEMO).review(ctx, candidate)
    assert verdict.label in ("valid", "questionable", "invalid") and verdict.candidate_id == candidate.id


@pytest.mark.podman
@pytest.mark.asyncio(loop_scope="module")
async def test_llm_path_replaying_the_same_calls_gives_the_same_outcome(worlds):
    scripted, _, ctx = await scripted_audit(worlds, ScriptedAuditAgent(DEMO))
    turns = ScriptedAuditAgent(DEMO).model_for(ctx, "audit").turns
    with FakeOpenAIServer() as server:
        server.script(*[Reply(tool_calls=turn) for turn in turns])
        agent = LLMAuditAgent(OpenAIChatModel(Profile(name="fake", base_url=server.base_url,
                                                      model="fake-model", timeout=5)))
        agent.strict = False  # the recordings carry no findings; the same calls must give the same outcome
        llm, _, _ = await scripted_audit(worlds, agent)
        await agent.aclose()
    assert [(c.id, c.path, c.source, c.requirement) for c in llm.candidates] == \
           [(c.id, c.path, c.source, c.requirement) for c in scripted.candidates]
    assert llm.checklist == scripted.checklist and llm.notes == scripted.notes


@pytest.mark.podman
@pytest.mark.asyncio(loop_scope="module")
async def test_scripted_task_analysis_on_the_null_world(worlds):
    sb, task, _, refs = worlds
    async with SandboxTools(sb, task, None, {"null": refs["null"]}) as tools:
        ctx = AuditContext("demo", task, None, tools, lambda e: None)
        analyst = ScriptedTaskAnalyst(DEMO)
        candidates = await analyst.analyse(ctx)
        assert candidates and all(c.author == "task_analysis" for c in candidates)
        assert [c.id for c in candidates] == [f"{TASK}:analysis:{i}.v1" for i in range(1, len(candidates) + 1)]
        chained = [c for c in candidates if c.origin.endswith("_v1.py")
                   and (DEMO / "agent-scripts" / TASK / c.origin.replace("_v1.py", "_v2.py")).exists()]
        for candidate in chained:
            repaired = await analyst.repair(ctx, candidate, "FAILED tests/x.py::test_y - assert 1 == 2")
            assert repaired.origin == candidate.origin.replace("_v1.py", "_v2.py")


def test_factory_builds_the_offline_demo(bench):
    roles = make_roles({"audit": "scripted", "reviewer": "scripted", "task_analysis": "scripted"}, bench)
    assert set(roles.labels.values()) == {"scripted (offline demo)"}
