"""Scripted offline demo mode: recorded tool calls replayed through the same runtime and tools."""
from __future__ import annotations

import json

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial

from testjack_tui.agents import (SCRIPTED_LABEL, ScriptedAuditAgent, ScriptedReviewer,
                                 ScriptedTaskAnalyst, ScriptError, read_transcript)
from testjack_tui.agents.errors import AgentError
from testjack_tui.engine.events import ToolCall


@pytest.fixture
def bench(tmp_path):
    root = tmp_path / "bench"
    scripts = root / "agent-scripts" / "calc"
    (scripts / "candidates").mkdir(parents=True)
    (scripts / "audits").mkdir()
    (scripts / "candidates" / "neg_v1.py").write_text("def test_neg():\n    assert 'v1'\n")
    (scripts / "candidates" / "neg_v2.py").write_text("def test_neg():\n    assert 'v2'\n")
    (scripts / "candidates" / "zero_v1.py").write_text("def test_zero():\n    assert 0 == 0\n")
    chain = {"path": "tests/test_tj_neg.py", "requirement": "negative input raises ValueError",
             "versions": ["candidates/neg_v1.py", "candidates/neg_v2.py"]}
    (scripts / "audits" / "trial-1.json").write_text(json.dumps({
        "notes": "recorded audit",
        "checklist": [{"clause": "negative input raises", "explicit": True,
                       "quote": "It must raise ValueError for negative input.",
                       "covered_by_t0": False, "implemented": False}],
        "steps": [{"tool": "run", "world": "model", "command": "echo model"},
                  {"tool": "read_file", "world": "model", "path": "calc.py"},
                  {"tool": "run_tests", "world": "null", "test_ids": ["tests/test_calc.py::test_double"]}],
        "candidates": [chain]}))
    (scripts / "audits" / "trial-clean.json").write_text(json.dumps(
        {"notes": "nothing found", "checklist": [], "steps": [], "candidates": []}))
    (scripts / "analysis.json").write_text(json.dumps({"notes": "zero", "candidates": [
        {"path": "tests/test_tj_zero.py", "requirement": "double(0) is 0", "versions": ["candidates/zero_v1.py"]}]}))
    (scripts / "reviews.json").write_text(json.dumps({
        "candidates/neg_v2.py": {"label": "valid", "requirement": "negative input raises ValueError",
                                 "explicit": True, "quote": "It must raise ValueError for negative input.",
                                 "reason": "P states it"},
        "candidates/neg_v1.py": {"label": "invalid", "requirement": "", "explicit": False,
                                 "reason": "checks an exact message"}}))
    return root


async def test_audit_replays_steps_through_the_tools(bench):
    trial = make_trial()
    tools = FileWorlds(trial)
    events: list = []
    agent = ScriptedAuditAgent(bench)
    assert agent.label == SCRIPTED_LABEL
    outcome = await agent.audit(make_ctx(tools, trial, events))
    assert ("run", "model", "echo model") in tools.calls
    assert ("read_file", "model", "calc.py") in tools.calls
    assert tools.calls[2][:2] == ("run_tests", "null")
    [candidate] = outcome.candidates
    assert candidate.id == "calc:trial-1:1.v1" and candidate.origin == "candidates/neg_v1.py"
    assert "'v1'" in candidate.source and tools.written["tests/test_tj_neg.py"] == candidate.source
    assert outcome.checklist[0].quote.startswith("It must raise") and outcome.notes == "recorded audit"
    names = [e.name for e in events if isinstance(e, ToolCall) and e.finished]
    assert names == ["run", "read_file", "run_tests", "write_test_file", "submit"]
    path = next((bench.parent / "tj-home").rglob("audit-calc-trial-1.jsonl"))
    assert read_transcript(path)[-1]["type"] == "submitted"


async def test_repair_walks_the_chain_then_gives_up(bench):
    trial = make_trial()
    agent = ScriptedAuditAgent(bench)
    ctx = make_ctx(FileWorlds(trial), trial, [])
    [v1] = (await agent.audit(ctx)).candidates
    v2 = await agent.repair(ctx, v1, "FAILED on reference")
    assert v2.id == "calc:trial-1:1.v2" and v2.parent == v1.id and v2.origin == "candidates/neg_v2.py"
    assert "'v2'" in v2.source and v2.attempt == 2
    assert await agent.repair(ctx, v2, "FAILED again") is None


async def test_repair_works_in_a_fresh_agent_too(bench):
    # A resumed session has a new agent object: the chain is found from the candidate id.
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    [v1] = (await ScriptedAuditAgent(bench).audit(ctx)).candidates
    v2 = await ScriptedAuditAgent(bench).repair(ctx, v1, "failed")
    assert v2.id == "calc:trial-1:1.v2"


async def test_ids_are_deterministic(bench):
    trial = make_trial()
    first = await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, []))
    second = await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, [], session_id="s2"))
    assert [c.id for c in first.candidates] == [c.id for c in second.candidates]


async def test_clean_audit_submits_nothing(bench):
    trial = make_trial()
    trial.id = "trial-clean"
    outcome = await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, []))
    assert outcome.candidates == [] and outcome.notes == "nothing found"


async def test_missing_script_is_a_clear_error(bench):
    trial = make_trial()
    trial.id = "trial-unknown"
    with pytest.raises(ScriptError) as info:
        await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, []))
    assert "trial-unknown.json" in str(info.value) and "no recorded script" in str(info.value)


async def test_bad_script_names_file_and_field(bench):
    path = bench / "agent-scripts" / "calc" / "audits" / "trial-1.json"
    data = json.loads(path.read_text())
    data["steps"].append({"tool": "rm -rf", "world": "model"})
    path.write_text(json.dumps(data))
    trial = make_trial()
    with pytest.raises(ScriptError) as info:
        await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, []))
    assert info.value.field == "steps[3].tool"


async def test_script_that_writes_outside_the_repo_runs_out_with_the_reason(bench):
    path = bench / "agent-scripts" / "calc" / "audits" / "trial-1.json"
    data = json.loads(path.read_text())
    data["candidates"][0]["path"] = "../escape.py"
    path.write_text(json.dumps(data))
    trial = make_trial()
    with pytest.raises(ScriptError, match="leaves the repo|was not written"):
        await ScriptedAuditAgent(bench).audit(make_ctx(FileWorlds(trial), trial, []))


async def test_task_analysis_and_reviews(bench):
    ctx = make_ctx(FileWorlds(None, worlds=("null",)), None, [])
    [candidate] = await ScriptedTaskAnalyst(bench).analyse(ctx)
    assert candidate.id == "calc:analysis:1.v1" and candidate.author == "task_analysis"
    assert await ScriptedTaskAnalyst(bench).repair(ctx, candidate, "failed") is None

    trial = make_trial()
    audit_ctx = make_ctx(FileWorlds(trial), trial, [])
    agent = ScriptedAuditAgent(bench)
    [v1] = (await agent.audit(audit_ctx)).candidates
    v2 = await agent.repair(audit_ctx, v1, "failed")
    reviewer = ScriptedReviewer(bench)
    verdict = await reviewer.review(audit_ctx, v2)
    assert (verdict.label, verdict.explicit, verdict.reviewer) == ("valid", True, SCRIPTED_LABEL)
    assert (await reviewer.review(audit_ctx, v1)).label == "invalid"
    with pytest.raises(ScriptError, match="no recorded review"):
        await reviewer.review(audit_ctx, candidate)


async def test_script_step_limit(bench):
    trial = make_trial()
    with pytest.raises(AgentError, match="steps"):
        await ScriptedAuditAgent(bench, max_steps=2).audit(make_ctx(FileWorlds(trial), trial, []))
