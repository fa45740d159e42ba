"""Replies that do not fit the role's max_tokens: a reply cut at the limit (finish_reason
"length") is never parsed; the role asks again for a shorter one and goes on."""
from __future__ import annotations

import json

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.agents import LLMReviewer, OpenAIChatModel
from testjack_tui.agents.runtime import CUT_PLACEHOLDER
from testjack_tui.config import Profile
from testjack_tui.engine.roles import Candidate

CANDIDATE = Candidate(id="calc:trial-1:1.v1", path="tests/test_tj_negative.py",
                      source="def test_neg():\n    assert 1\n", requirement="rejects negatives", author="audit")
VERDICT = {"label": "invalid", "requirement": "", "explicit": False, "reason": "P does not ask for it",
           "overall": "DROP_ALL", "cases": [{"test_id": "tests/test_tj_negative.py::test_neg", "label": "INVALID",
                                             "scope": "out_of_scope", "overfitting": "none", "reason": "not in P"}]}


def reviewer(server, structured_output):
    return LLMReviewer(OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model", timeout=5,
                                               max_tokens=512, structured_output=structured_output)))


def sent_after(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] in ("assistant", "user", "tool")]


async def test_a_tool_call_cut_at_max_tokens_is_asked_again_not_parsed():
    trial = make_trial()
    with FakeOpenAIServer() as server:
        cut = json.dumps(VERDICT)[:60]  # half a submit, as a model cut off mid-JSON sends it
        server.script(Reply(tool_calls=[("submit", cut)], finish_reason="length"),
                      Reply(tool_calls=[("submit", VERDICT)]))
        verdict = await reviewer(server, "tool").review(make_ctx(FileWorlds(trial), trial, []), CANDIDATE)
        assert verdict.label == "invalid" and verdict.reason == "P does not ask for it"
        assert len(server.requests) == 2
        retry = server.requests[1]["messages"]
        # The cut reply went back as a placeholder (no half tool call to answer), then the ask.
        assert retry[-2] == {"role": "assistant", "content": CUT_PLACEHOLDER}
        assert retry[-1]["role"] == "user" and "cut off at the output limit (max_tokens 512)" in retry[-1]["content"]
        assert "shorter" in retry[-1]["content"]
        assert not any(m["role"] == "tool" for m in retry)  # nothing was parsed or run


async def test_a_structured_result_cut_at_max_tokens_is_asked_again():
    trial = make_trial()
    with FakeOpenAIServer() as server:
        server.script(Reply(text="I have looked at it."),  # no tool call: the result is asked for by schema
                      Reply(text=json.dumps(VERDICT)[:50], finish_reason="length"),
                      Reply(tool_calls=[("submit", VERDICT)]))
        verdict = await reviewer(server, "json_schema").review(make_ctx(FileWorlds(trial), trial, []), CANDIDATE)
        assert verdict.label == "invalid"
        assert len(server.requests) == 3  # the cut structured reply, then the loop asks again
        asks = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "user"]
        assert "cut off at the output limit (max_tokens 512)" in asks[-1]


@pytest.mark.parametrize("finish", ["stop", "tool_calls"])
async def test_complete_replies_are_not_treated_as_cut(finish):
    trial = make_trial()
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", VERDICT)], finish_reason=finish))
        verdict = await reviewer(server, "tool").review(make_ctx(FileWorlds(trial), trial, []), CANDIDATE)
        assert verdict.label == "invalid" and len(server.requests) == 1


@pytest.mark.parametrize("phase", ["analysis", "audit", "review", "repair"])
def test_every_structured_result_fits_the_default_max_tokens_with_room_to_spare(phase):
    from testjack_tui.agents.chat import CHARS_PER_TOKEN
    from testjack_tui.agents.schemas import SUBMIT_SCHEMAS, worst_case_chars

    # The longest payload the schema accepts (every list full, every string at its limit).
    worst = worst_case_chars(SUBMIT_SCHEMAS[phase])
    assert worst is not None, f"{phase}: a list or string without a limit"
    assert worst / CHARS_PER_TOKEN <= 0.8 * Profile(name="x").max_tokens


def test_worst_case_counts_every_row_and_character():
    from testjack_tui.agents.schemas import ids, text, worst_case_chars

    schema = {"type": "object", "properties": {"a": text(10), "b": ids(2, "x"), "c": {"enum": ["yes", "no"]}}}
    longest = {"a": "x" * 10, "b": ["y" * 100, "y" * 100], "c": "yes"}
    assert worst_case_chars(schema) >= len(json.dumps(longest))
    assert worst_case_chars({"type": "array", "items": text(5)}) is None  # no maxItems: unbounded
