"""The LLM runtime against a real HTTP server through the real openai client.

Streaming, tool calls split across chunks, usage, cost, ledger, retries and every scripted
fault of the fake server; transcripts on disk.
"""
from __future__ import annotations

import json
import socket

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial
from fake_openai_server import FakeOpenAIServer, Fault, Reply, Stall, Truncate

from testjack_tui.agents import (AgentError, EndpointError, LLMAuditAgent, MemoryLedger,
                                 OpenAIChatModel, read_transcript)
from testjack_tui.config import Price, Profile
from testjack_tui.engine.events import AgentOutput, ToolCall
from testjack_tui.engine.roles import BudgetExceeded

CANDIDATE = """\
import pytest
from calc import double

def test_negative_rejected():
    with pytest.raises(ValueError):
        double(-1)
"""

SUBMIT = {"notes": "negative input is not rejected",
          "checklist": [{"clause": "raise ValueError for negative input", "explicit": True,
                         "quote": "It must raise ValueError for negative input.",
                         "covered_by_t0": False, "implemented": False}],
          "candidates": [{"path": "tests/test_tj_negative.py",
                          "requirement": "double raises ValueError for negative input"}],
          "nothing_found": False,
          "findings": [{"what": "double(-1) returns -2", "why": "P requires a ValueError",
                        "clause": "It must raise ValueError for negative input.",
                        "witness": "tests/test_tj_negative.py",
                        "failing_assertion": "DID NOT RAISE ValueError", "t0_missed": "untested_input_class",
                        "t0_missed_detail": "T0 tries no negative number"}]}


def write_reply(**kw) -> Reply:
    return Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_negative.py", "source": CANDIDATE})], **kw)


def submit_reply(**kw) -> Reply:
    return Reply(tool_calls=[("submit", SUBMIT)], **kw)


@pytest.fixture
def server():
    with FakeOpenAIServer(models=("fake-model",)) as srv:
        yield srv


def profile(server, **kw) -> Profile:
    values = dict(name="fake", base_url=server.base_url, model="fake-model", timeout=2.0, structured_output="tool",
                  max_retries=3, retry_backoff=0.01, max_tokens=512)
    values.update(kw)
    return Profile(**values)


def agent(server, price=Price(1.0, 2.0), **kw) -> LLMAuditAgent:
    return LLMAuditAgent(OpenAIChatModel(profile(server, **kw), price))


async def run_audit(server, entries, *, ledger=None, **kw):
    server.script(*entries)
    trial = make_trial()
    tools = FileWorlds(trial)
    events: list = []
    ledger = ledger if ledger is not None else MemoryLedger()
    outcome = await agent(server, **kw).audit(make_ctx(tools, trial, events, ledger))
    return outcome, events, ledger, tools


async def test_streamed_tool_calls_become_a_candidate(server):
    outcome, events, ledger, tools = await run_audit(server, [
        Reply(text="Looking at the patch first.", tool_calls=[("view_diff", {})]),
        Reply(tool_calls=[("run", {"world": "model", "command": "echo hi"}),
                          ("read_file", {"world": "model", "path": "calc.py"})], pieces=5),
        write_reply(), submit_reply()])
    [candidate] = outcome.candidates
    assert candidate.id == "calc:trial-1:1.v1"
    assert candidate.source == CANDIDATE and candidate.path == "tests/test_tj_negative.py"
    assert candidate.author == "audit" and candidate.attempt == 1
    assert outcome.checklist[0].explicit and outcome.checklist[0].covered_by_t0 is False
    assert tools.written == {"tests/test_tj_negative.py": CANDIDATE}
    assert ("run", "model", "echo hi") in tools.calls and ("read_file", "model", "calc.py") in tools.calls
    text = "".join(e.text for e in events if isinstance(e, AgentOutput))
    assert text == "Looking at the patch first."
    finished = [e for e in events if isinstance(e, ToolCall) and e.finished]
    assert [e.name for e in finished] == ["view_diff", "run", "read_file", "write_test_file", "submit"]
    assert "untrusted-trial-data" in finished[0].result and "+def double" in finished[0].result
    # Usage is measured per call and priced from the table: 4 calls x (120 in, 30 out).
    assert len(ledger.entries) == 4 and not ledger.estimated
    assert ledger.tokens == 4 * 150
    assert ledger.usd == pytest.approx(4 * (120 * 1.0 + 30 * 2.0) / 1e6)
    assert ledger.checks == 4
    # The request asked for usage in the stream and offered the tools.
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in body["tools"]} >= {"run", "view_diff", "submit", "write_test_file"}


async def test_trial_diff_is_fenced_in_the_first_message(server):
    await run_audit(server, [write_reply(), submit_reply()])
    user = server.requests[0]["messages"][1]["content"]
    system = server.requests[0]["messages"][0]["content"]
    start = user.index("<untrusted-trial-data boundary=")
    boundary = user[start:].split('"')[1]
    assert f'</untrusted-trial-data boundary="{boundary}">' in user
    assert boundary in system  # the prompt names the boundary it uses
    fenced = user[start:user.index(f'</untrusted-trial-data boundary="{boundary}">', start)]
    assert "def double" in fenced or "+def double" in user


async def test_429_then_success_is_retried(server):
    outcome, _, ledger, _ = await run_audit(server, [Fault(429, "slow down"), write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1
    assert len(server.requests) == 3
    assert ledger.checks == 3  # every attempt, the retry included, passed the budget check first


async def test_500_then_success_is_retried(server):
    outcome, _, _, _ = await run_audit(server, [Fault(500), Fault(503), write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1 and len(server.requests) == 4


async def test_stall_past_timeout_is_retried(server):
    outcome, _, _, _ = await run_audit(server, [Stall(10), write_reply(), submit_reply()], timeout=0.5)
    assert len(outcome.candidates) == 1 and len(server.requests) == 3


async def test_truncated_stream_is_retried_and_partial_usage_counted(server):
    outcome, events, ledger, _ = await run_audit(server, [Truncate(), write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1
    partial = ledger.entries[0]
    assert partial.estimated and partial.completion_tokens > 0
    assert ledger.estimated


async def test_malformed_tool_json_goes_back_to_the_model(server):
    outcome, events, _, _ = await run_audit(server, [
        Reply(tool_calls=[("write_test_file", '{"path": "tests/x.py", "source": "oops')]),
        write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1
    tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in tool_messages[-1]["content"]


async def test_missing_usage_is_estimated_and_flagged(server):
    _, _, ledger, _ = await run_audit(server, [write_reply(usage=False), submit_reply(usage=False)])
    assert all(e.estimated for e in ledger.entries)
    assert all(e.prompt_tokens > 0 and e.completion_tokens > 0 for e in ledger.entries)


async def test_tool_calls_without_index_are_assembled(server):
    outcome, _, _, _ = await run_audit(server, [write_reply(omit_index=True), submit_reply(omit_index=True)])
    assert outcome.candidates[0].source == CANDIDATE


async def test_unknown_model_is_one_clear_line(server):
    server.script(write_reply())
    trial = make_trial()
    with pytest.raises(EndpointError) as info:
        await agent(server, model="no-such-model").audit(make_ctx(FileWorlds(trial), trial, []))
    message = str(info.value)
    assert "\n" not in message and "no-such-model" in message and "not found" in message


async def test_unreachable_endpoint_is_one_clear_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAIChatModel(Profile(name="gone", base_url=f"http://127.0.0.1:{port}/v1", model="m",
                                    timeout=1, max_retries=1, retry_backoff=0.01))
    trial = make_trial()
    with pytest.raises(EndpointError) as info:
        await LLMAuditAgent(model).audit(make_ctx(FileWorlds(trial), trial, []))
    message = str(info.value)
    assert "\n" not in message and f"127.0.0.1:{port}" in message and "cannot connect" in message


async def test_retries_give_up_with_a_clear_error(server):
    with pytest.raises(AgentError, match="gave up after 4 attempts"):
        await run_audit(server, [Fault(500)] * 4)


async def test_budget_stops_retries(server):
    # The first, truncated attempt already costs more than the limit: the retry is refused.
    ledger = MemoryLedger(usd_limit=1e-9)
    with pytest.raises(BudgetExceeded):
        await run_audit(server, [Truncate("x" * 400), write_reply(), submit_reply()], ledger=ledger)
    assert len(server.requests) == 1
    assert server.remaining == 2


async def test_token_budget_checked_before_each_call(server):
    ledger = MemoryLedger(tokens_limit=512 + 149)  # room for one call of max_tokens 512, not two
    with pytest.raises(BudgetExceeded):
        await run_audit(server, [write_reply(), submit_reply()], ledger=ledger)
    assert len(server.requests) == 1


async def test_invalid_submission_is_sent_back_for_correction(server):
    bad = dict(SUBMIT, candidates=[{"path": "tests/never_written.py", "requirement": "x"}])
    no_checklist = {k: v for k, v in SUBMIT.items() if k != "checklist"}
    outcome, _, _, _ = await run_audit(server, [
        write_reply(), Reply(tool_calls=[("submit", bad)]), Reply(tool_calls=[("submit", no_checklist)]),
        submit_reply()])
    assert len(outcome.candidates) == 1
    answers = [m["content"] for m in server.requests[3]["messages"] if m["role"] == "tool"]
    assert "was not written with write_test_file" in answers[-2]
    assert "'checklist' is a required property" in answers[-1]


async def test_step_cap(server):
    server.script(*[Reply(tool_calls=[("run", {"world": "null", "command": "echo again"})])] * 3)
    trial = make_trial()
    audit_agent = LLMAuditAgent(OpenAIChatModel(profile(server)), max_steps=3)
    with pytest.raises(AgentError, match="used its 3 steps"):
        await audit_agent.audit(make_ctx(FileWorlds(trial), trial, []))


async def test_plain_text_reply_gets_a_nudge(server):
    outcome, _, _, _ = await run_audit(server, [Reply(text="I think it is fine."), write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1
    assert "call submit" in server.requests[1]["messages"][-1]["content"]


async def test_long_tool_output_comes_in_pages_the_model_can_read_on(server):
    _, events, _, _ = await run_audit(server, [
        Reply(tool_calls=[("run", {"world": "null", "command": "yes"})]),
        Reply(tool_calls=[("read_more", {"ref": "out1", "page": 4})]), write_reply(), submit_reply()])
    [run] = [e for e in events if isinstance(e, ToolCall) and e.finished and e.name == "run"]
    assert len(run.result) < 13_000
    assert run.result.rstrip().endswith("[page 1 of 4 of output out1; call read_more with ref 'out1' and page 2 for more]")
    [more] = [e for e in events if isinstance(e, ToolCall) and e.finished and e.name == "read_more"]
    assert "[page 4 of 4 of output out1: the end]" in more.result
    assert more.result.count("y\n") > 100  # the rest of the output, not an error


async def test_transcript_is_saved_as_jsonl(server, testjack_home):
    await run_audit(server, [Fault(429), write_reply(), submit_reply()])
    [path] = list((testjack_home / "data" / "sessions" / "s1" / "transcripts").glob("*.jsonl"))
    assert path.name == "audit-calc-trial-1.jsonl"
    records = read_transcript(path)
    kinds = [r["type"] for r in records]
    assert kinds[0] == "system" and "submitted" in kinds and kinds.count("usage") == 2
    messages = [r["message"] for r in records if r["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"])["source"] == CANDIDATE


async def test_explicit_transcript_path_is_used(server, tmp_path):
    server.script(write_reply(), submit_reply())
    trial = make_trial()
    target = tmp_path / "t.jsonl"
    await agent(server).audit(make_ctx(FileWorlds(trial), trial, [], transcript_path=str(target)))
    assert read_transcript(target)[-1]["type"] == "submitted"


async def test_repair_continues_the_conversation(server):
    server.script(write_reply(), submit_reply())
    trial = make_trial()
    tools = FileWorlds(trial)
    auditor = agent(server)
    ctx = make_ctx(tools, trial, [])
    [candidate] = (await auditor.audit(ctx)).candidates
    fixed = CANDIDATE.replace("double(-1)", "double(-5)")
    server.script(Reply(tool_calls=[("write_test_file", {"path": candidate.path, "source": fixed})]),
                  Reply(tool_calls=[("submit", {"give_up": False, "requirement": "negative input is rejected"})]))
    # The reference run's output goes back as it is, except lines of G's code (a traceback through G).
    feedback = ("FAILED tests/test_tj_negative.py::test_negative_rejected\n"
                "calc.py:3: in double\n    raise ValueError(\"negative input not allowed\")\n"
                "E   ValueError: negative input not allowed")
    repaired = await auditor.repair(ctx, candidate, feedback)
    sent = "\n".join(str(m.get("content") or "") for m in server.requests[-2]["messages"])
    assert "E   ValueError: negative input not allowed" in sent and "calc.py:3: in double" in sent
    assert 'raise ValueError("negative input not allowed")' not in sent and "[reference code withheld]" in sent
    assert repaired.id == "calc:trial-1:1.v2" and repaired.parent == candidate.id and repaired.attempt == 2
    assert repaired.source == fixed and repaired.requirement == "negative input is rejected"
    # The same conversation: the first user message and the earlier tool calls are still there.
    messages = server.requests[-1]["messages"]
    assert sum(1 for m in messages if m["role"] == "assistant") >= 3
    assert "FAILED tests/test_tj_negative.py" in messages[-3]["content"] or any(
        "FAILED tests/test_tj_negative.py" in (m.get("content") or "") for m in messages)
    server.script(Reply(tool_calls=[("submit", {"give_up": True, "reason": "cannot"})]))
    assert await auditor.repair(ctx, repaired, "still failing") is None


async def test_repair_must_rewrite_the_file(server):
    server.script(write_reply(), submit_reply())
    trial = make_trial()
    auditor = agent(server)
    ctx = make_ctx(FileWorlds(trial), trial, [])
    [candidate] = (await auditor.audit(ctx)).candidates
    server.script(Reply(tool_calls=[("submit", {"give_up": False})]),
                  Reply(tool_calls=[("write_test_file", {"path": candidate.path, "source": CANDIDATE + "\n"})]),
                  Reply(tool_calls=[("submit", {"give_up": False})]))
    repaired = await auditor.repair(ctx, candidate, "failed")
    assert repaired is not None and repaired.requirement == candidate.requirement
    answers = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("before submitting" in a for a in answers)


async def test_probe_endpoint_for_doctor(server):
    from testjack_tui.agents.chat import probe_endpoint
    assert "available" in await probe_endpoint(profile(server))
    with pytest.raises(EndpointError, match="not offered"):
        await probe_endpoint(profile(server, model="other"))
