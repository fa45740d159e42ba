"""Nothing an agent waits on is silent: per-role progress events over the real HTTP client.

A request that waits on the model reports "waiting" with the elapsed time; tokens arriving
report "streaming"; a timeout is reported as "retrying" with the reason before the request is
sent again. The headless CLI renders these lines, and a profile's concurrency caps requests.
"""
from __future__ import annotations

import asyncio
import io

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial
from fake_openai_server import FakeOpenAIServer, Fault, Reply, Stall
from test_agents_runtime import submit_reply, write_reply

from testjack_tui.agents import LLMAuditAgent, OpenAIChatModel, read_transcript
from testjack_tui.agents.chat import CallMeter
from testjack_tui.agents.ledger import MemoryLedger
from testjack_tui.commands.audit_cmd import ProgressPrinter
from testjack_tui.config import Profile
from testjack_tui.engine.events import AgentProgress


@pytest.fixture
def server():
    with FakeOpenAIServer(models=("fake-model",)) as srv:
        yield srv


def chat(server, **kw) -> OpenAIChatModel:
    values = dict(name="fake", base_url=server.base_url, model="fake-model", timeout=1.0, max_retries=2,
                  retry_backoff=0.01, max_tokens=256, structured_output="tool")
    values.update(kw)
    model = OpenAIChatModel(Profile(**values))
    model.heartbeat = 0.2
    return model


async def audit(server, entries, model=None):
    server.script(*entries)
    trial = make_trial()
    events: list = []
    agent = LLMAuditAgent(model or chat(server))
    outcome = await agent.audit(make_ctx(FileWorlds(trial), trial, events))
    await agent.aclose()
    return outcome, events


def progress(events) -> list[AgentProgress]:
    return [e for e in events if isinstance(e, AgentProgress)]


async def test_a_silent_model_is_reported_waiting_then_timed_out_and_retried(server):
    # The first request gets no byte back for longer than the profile's timeout.
    outcome, events = await audit(server, [Stall(2.0, silent=True), write_reply(), submit_reply()])
    assert len(outcome.candidates) == 1
    seen = progress(events)
    waiting = [e for e in seen if e.state == "waiting" and e.elapsed > 0]
    assert waiting and waiting[0].role == "audit" and waiting[0].trial_id == "trial-1"
    assert waiting[0].model == "fake-model @ fake" and waiting[0].received == 0
    [retry] = [e for e in seen if e.state == "retrying"]
    assert "no reply within the profile's timeout (1s)" in retry.reason
    assert retry.attempt == 1 and retry.max_attempts == 3
    # The retry comes after the waits, and the next request is the same conversation again.
    assert seen.index(retry) > seen.index(waiting[0])
    assert server.requests[0]["messages"] == server.requests[1]["messages"]


async def test_tokens_arriving_are_reported_as_streaming(server):
    # One chunk, then nothing: "streaming" with what has arrived, then a retry naming the stall.
    _, events = await audit(server, [Stall(2.0), write_reply(), submit_reply()])
    streaming = [e for e in progress(events) if e.state == "streaming"]
    assert streaming and streaming[0].received == len("thinking")
    retry = next(e for e in progress(events) if e.state == "retrying")
    assert "1s" in retry.reason
    done = [e for e in progress(events) if e.state == "done"]
    assert len(done) == 2 and done[-1].received > 0


async def test_retry_reason_is_kept_in_the_transcript(server, tmp_path):
    server.script(Fault(503, "overloaded"), write_reply(), submit_reply())
    trial = make_trial()
    agent = LLMAuditAgent(chat(server))
    path = tmp_path / "t.jsonl"
    await agent.audit(make_ctx(FileWorlds(trial), trial, [], transcript_path=str(path)))
    await agent.aclose()
    [record] = [r for r in read_transcript(path) if r["type"] == "progress"]
    assert record["state"] == "retrying" and "server error 503: overloaded" in record["reason"]


def test_the_cli_prints_waiting_streaming_and_retry_lines():
    out = io.StringIO()
    printer = ProgressPrinter(out)
    base = dict(role="audit", task_id="calc", trial_id="trial-1", model="m @ p")
    for e in [AgentProgress("s", state="waiting", elapsed=0.0, **base),
              AgentProgress("s", state="waiting", elapsed=10.0, **base),  # under 30 s: quiet
              AgentProgress("s", state="waiting", elapsed=31.0, **base),
              AgentProgress("s", state="streaming", elapsed=40.0, received=1200, **base),
              AgentProgress("s", state="retrying", attempt=1, max_attempts=5, delay=2.0,
                            reason="no reply within the profile's timeout (120s)", **base),
              AgentProgress("s", state="failed", attempt=5, max_attempts=5, reason="HTTP 400", **base)]:
        printer(e)
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == [
        "audit calc/trial-1: waiting on m @ p (31s, nothing received yet)",
        "audit calc/trial-1: m @ p is answering (1200 characters in 40s)",
        "audit calc/trial-1: m @ p: attempt 1 of 5 failed: no reply within the profile's timeout (120s); "
        "retrying in 2s",
        "audit calc/trial-1: m @ p: request failed after 5 attempt(s): HTTP 400",
    ]


async def test_concurrency_caps_requests_in_flight(server):
    in_flight, peak = 0, 0
    lock = asyncio.Lock()
    model = chat(server, concurrency=1, timeout=5.0)
    server.script(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    original = model._attempt

    async def counted(*args, **kw):
        nonlocal in_flight, peak
        async with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        try:
            await asyncio.sleep(0.05)
            return await original(*args, **kw)
        finally:
            in_flight -= 1

    model._attempt = counted
    meter = CallMeter(MemoryLedger(), "reviewer")
    replies = await asyncio.gather(*[model.complete([{"role": "user", "content": "hi"}], [], on_text=lambda t: None,
                                                    meter=meter) for _ in range(3)])
    await model.aclose()
    assert sorted(r.text for r in replies) == ["a", "b", "c"] and peak == 1


def test_a_verdict_left_for_the_operator_is_said_so():
    from testjack_tui.engine.events import ApprovalAnswered

    out = io.StringIO()
    ProgressPrinter(out)(ApprovalAnswered("s", request_id="r", candidate_id="t:a1:1.v1", counts=False,
                                          label="questionable", by="queued"))
    assert out.getvalue().split("] ", 1)[1].strip() == \
        "queued: t:a1:1.v1 is questionable: left for the operator, not counted"


def test_verbose_prints_a_multi_line_script_once_per_container():
    from testjack_tui.engine.events import WorldState

    script = "python - <<'PY'\nimport json\nprint(json.dumps({'ok': 1}))\nPY"
    out = io.StringIO()
    printer = ProgressPrinter(out, verbose=True)
    for state in ("running", "exited"):
        printer(WorldState("s", world="model", container="c1", state=state, command=script))
    printer(WorldState("s", world="model", container="c2", state="running", command=script))
    printer(WorldState("s", world="model", container="c1", state="running", command="pytest -q"))
    printer(WorldState("s", world="model", container="c1", state="exited", command="pytest -q"))
    text = out.getvalue()
    assert text.count("print(json.dumps({'ok': 1}))") == 2  # once in c1, once in c2
    assert "world model c1 exited python - <<'PY' [... 3 more line(s), shown above]" in text
    assert text.count("pytest -q") == 2  # one-line commands keep every state
