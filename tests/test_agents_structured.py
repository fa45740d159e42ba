"""The three roles hand in structured results (over the real client and the local fake server):
audit findings or an explicit "nothing found", the task analysis's traceability matrix and
suspicious-patch features, the reviewer's per-case verdicts with KEEP_SOME; through the
endpoint's structured output (response_format json_schema) where it has one, the submit tool
where it does not. And `--agent openai` says what it resolves to, or fails at once."""
from __future__ import annotations

import json

import pytest
from agents_worlds import FileWorlds, make_ctx, make_trial
from fake_openai_server import FakeOpenAIServer, Fault, Reply
from test_agents_runtime import CANDIDATE as SOURCE
from test_agents_runtime import SUBMIT, write_reply
from typer.testing import CliRunner

from testjack_tui.agents import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst, OpenAIChatModel
from testjack_tui.agents.factory import describe_role, make_roles
from testjack_tui.agents.schemas import SUBMIT_SCHEMAS
from testjack_tui.cli import app
from testjack_tui.config import Profile, config_path, load_config
from testjack_tui.engine.records_agent import JudgedCandidate, SuspiciousFeature
from testjack_tui.engine.roles import Candidate
from testjack_tui.errors import InputError

PATH = "tests/test_tj_negative.py"
CANDIDATE = Candidate(id="calc:trial-1:1.v1", path=PATH, source=SOURCE,
                      requirement="double raises ValueError for negative input", author="audit")
CASES = {"reference": {f"{PATH}::test_negative_rejected": {"status": "passed", "message": ""},
                       f"{PATH}::test_exact_message": {"status": "passed", "message": ""}},
         "trial-1": {f"{PATH}::test_negative_rejected": {"status": "failed",
                                                         "message": "E   Failed: DID NOT RAISE <class 'ValueError'>"},
                     f"{PATH}::test_exact_message": {"status": "failed",
                                                     "message": "E   AssertionError: 'negative' != 'negative input not allowed'"}}}
REVIEW = {"label": "valid", "requirement": "negative input raises ValueError", "explicit": True,
          "quote": "It must raise ValueError for negative input.", "reason": "the first case follows from P",
          "overall": "KEEP_SOME",
          "cases": [{"test_id": f"{PATH}::test_negative_rejected", "label": "VALID", "scope": "in_scope",
                     "overfitting": "none", "reason": "P says so"},
                    {"test_id": f"{PATH}::test_exact_message", "label": "INVALID", "scope": "in_scope",
                     "overfitting": "to_reference", "reason": "P fixes no message"}]}


@pytest.fixture
def server():
    with FakeOpenAIServer(models=("fake-model",)) as srv:
        yield srv


def model(server, mode="tool") -> OpenAIChatModel:
    return OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model", timeout=2,
                                   max_retries=1, retry_backoff=0.01, structured_output=mode))


def tool_answers(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_audit_findings_or_an_explicit_nothing_found(server):
    silent = {k: v for k, v in SUBMIT.items() if k != "findings"} | {"findings": []}
    both = dict(SUBMIT, nothing_found=True)
    server.script(write_reply(), Reply(tool_calls=[("submit", silent)]), Reply(tool_calls=[("submit", both)]),
                  Reply(tool_calls=[("submit", SUBMIT)]))
    trial = make_trial()
    outcome = await LLMAuditAgent(model(server)).audit(make_ctx(FileWorlds(trial), trial, []))
    assert "or set nothing_found to true" in tool_answers(server.requests[2])[-1]
    assert "nothing_found is true, so findings must be empty" in tool_answers(server.requests[3])[-1]
    [finding] = outcome.findings
    assert finding.candidate_id == "calc:trial-1:1.v1" and finding.t0_missed == "untested_input_class"
    assert outcome.nothing_found is False

    server.script(Reply(tool_calls=[("submit", {"notes": "sound", "checklist": [], "candidates": [],
                                                "nothing_found": True, "findings": []})]))
    outcome = await LLMAuditAgent(model(server)).audit(make_ctx(FileWorlds(trial), trial, []))
    assert outcome.nothing_found is True and outcome.findings == [] and outcome.candidates == []


async def test_task_analysis_returns_traceability_and_features(server):
    source = "from calc import double\n\ndef test_zero():\n    assert double(0) == 0\n"
    base = {"notes": "n", "candidates": [{"path": "tests/test_tj_zero.py", "requirement": "double(0) is 0"}],
            "suspicious_features": [{"id": "F1", "requirement": "negative input raises", "pattern": "return 2 * x",
                                     "why_suspicious": "no check before the return",
                                     "false_positives": "a check in a caller"}]}
    full = dict(base, traceability=[{"requirement": "negative input raises", "explicit": True,
                                     "quote": "It must raise ValueError for negative input.",
                                     "t0_tests": [], "coverage": "none"}])
    server.script(Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_zero.py", "source": source})]),
                  Reply(tool_calls=[("submit", dict(base, traceability=[]))]),
                  Reply(tool_calls=[("submit", full)]))
    result = await LLMTaskAnalyst(model(server)).analyse(make_ctx(FileWorlds(None, worlds=("null",)), None, []))
    assert "traceability: list every requirement" in tool_answers(server.requests[2])[-1]
    assert [c.path for c in result] == ["tests/test_tj_zero.py"]
    assert result.traceability[0].coverage == "none" and result.suspicious_features[0].id == "F1"


async def test_auditor_is_shown_the_task_analysis_features(server):
    server.script(write_reply(), Reply(tool_calls=[("submit", SUBMIT)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.features = [SuspiciousFeature("F1", "negative input raises", "return 2 * x", "no check", "a caller checks")]
    await LLMAuditAgent(model(server)).audit(ctx)
    system = server.requests[0]["messages"][0]["content"]
    assert "F1: look for return 2 * x (requirement: negative input raises" in system


async def test_reviewer_sees_failing_cases_and_keeps_some(server):
    wrong_case = dict(REVIEW, cases=[dict(REVIEW["cases"][0], test_id="tests/other.py::t"), REVIEW["cases"][1]])
    server.script(Reply(tool_calls=[("submit", wrong_case)]), Reply(tool_calls=[("submit", REVIEW)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: CASES}
    verdict = await LLMReviewer(model(server)).review(ctx, CANDIDATE)
    user = server.requests[0]["messages"][1]["content"]
    assert "On the reference solution: 2 of 2 case(s) passed." in user
    assert "On trial trial-1: 2 of 2 case(s) fail." in user
    assert f"FAILED {PATH}::test_exact_message" in user
    assert "AssertionError: 'negative' != 'negative input not allowed'" in user
    assert "is not a case of this candidate" in tool_answers(server.requests[1])[-1]
    assert verdict.overall == "KEEP_SOME" and verdict.keep == (f"{PATH}::test_negative_rejected",)
    assert [c.overfitting for c in verdict.cases] == ["none", "to_reference"]


async def test_reviewer_sees_every_case_id_passing_ones_too(server):
    # Issue 31.5: the reviewer gives one entry per case id shown; a case that passes on the trial
    # is one of them (it was left out, so a model rebuilt its id from a parametrize list).
    third = f"{PATH}::test_zero[0]"
    cases = {"reference": dict(CASES["reference"], **{third: {"status": "passed", "message": ""}}),
             "trial-1": dict(CASES["trial-1"], **{third: {"status": "passed", "message": ""}})}
    complete = dict(REVIEW, cases=REVIEW["cases"] + [{"test_id": third, "label": "INVALID", "scope": "in_scope",
                                                     "overfitting": "none", "reason": "passes anyway"}])
    server.script(Reply(tool_calls=[("submit", REVIEW)]), Reply(tool_calls=[("submit", complete)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: cases}
    verdict = await LLMReviewer(model(server)).review(ctx, CANDIDATE)
    # An answer leaving out the passing case goes back, naming it.
    assert f"cases: no entry for {third} (one entry per case id shown" in tool_answers(server.requests[1])[-1]
    assert [c.test_id for c in verdict.cases][-1] == third
    user = server.requests[0]["messages"][1]["content"]
    assert f"Case ids to judge (3, one entry each): {PATH}::test_exact_message, " \
           f"{PATH}::test_negative_rejected, {third}" in user
    assert "On trial trial-1: 2 of 3 case(s) fail." in user
    assert f"PASSED {third}" in user and user.count(f"PASSED {third}") == 2  # reference and trial
    assert f"FAILED {PATH}::test_exact_message" in user


async def test_keep_all_with_an_invalid_case_is_sent_back(server):
    bad = dict(REVIEW, overall="KEEP_ALL")
    server.script(Reply(tool_calls=[("submit", bad)]), Reply(tool_calls=[("submit", REVIEW)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: CASES}
    await LLMReviewer(model(server)).review(ctx, CANDIDATE)
    assert "KEEP_ALL needs every case VALID" in tool_answers(server.requests[1])[-1]


async def test_result_by_response_format_where_the_endpoint_has_it(server):
    # The reviewer answers in prose; the result is then asked for with the submit schema as
    # response_format (no tools in that request), and the JSON reply is the verdict.
    server.script(Reply(text="I think the first case is required and the second is not."),
                  Reply(text="```json\n" + json.dumps(REVIEW) + "\n```"))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: CASES}
    chat = model(server, "auto")
    verdict = await LLMReviewer(chat).review(ctx, CANDIDATE)
    assert verdict.keep == (f"{PATH}::test_negative_rejected",)
    first, second = server.requests
    assert "response_format" not in first and first["tools"]
    assert second["response_format"]["type"] == "json_schema"
    assert second["response_format"]["json_schema"]["schema"] == SUBMIT_SCHEMAS["review"]
    assert "tools" not in second and chat.json_schema_supported is True


async def test_falls_back_to_the_submit_tool_when_response_format_is_rejected(server):
    server.script(Reply(text="Done looking."),
                  Fault(400, "response_format json_schema is not supported by this server"),
                  Reply(tool_calls=[("submit", REVIEW)]),
                  Reply(text="Second review, prose again."), Reply(tool_calls=[("submit", REVIEW)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: CASES}
    chat = model(server, "auto")
    reviewer = LLMReviewer(chat)
    verdict = await reviewer.review(ctx, CANDIDATE)
    assert verdict.overall == "KEEP_SOME" and chat.json_schema_supported is False
    assert "call submit" in server.requests[2]["messages"][-1]["content"]
    await reviewer.review(ctx, CANDIDATE)
    assert all("response_format" not in r for r in server.requests[3:])  # remembered


# ---- what --agent openai resolves to -------------------------------------------------------
runner = CliRunner()


def test_no_key_and_no_base_url_fails_at_once_naming_file_and_variables(monkeypatch, podman_calls):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TESTJACK_MODEL"):
        monkeypatch.delenv(var, raising=False)
    result = runner.invoke(app, ["audit", "benchmarks/demo", "--agent", "openai", "--headless", "--auto-approve"])
    assert result.exit_code == 2 and podman_calls() == []  # at once: before any world is touched
    # The start-up lines say what each role resolved to (key not set); then one error line.
    *startup, line = [ln for ln in result.output.splitlines() if ln.strip()]
    assert all(ln.startswith(("agent ", "note: ")) for ln in startup) and "key $OPENAI_API_KEY not set" in startup[0]
    assert line.startswith(f"error: {config_path()}: ")
    assert "OPENAI_BASE_URL" in line and "OPENAI_API_KEY" in line and "[profiles.NAME]" in line
    with pytest.raises(InputError):
        make_roles({"audit": "openai"}, "benchmarks/demo", load_config())


def test_help_and_startup_lines_say_what_openai_resolves_to(monkeypatch):
    assert "OPENAI_BASE_URL" in runner.invoke(app, ["audit", "--help"]).output
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TESTJACK_MODEL", "coder")
    result = runner.invoke(app, ["audit", "benchmarks/demo", "--agent", "openai", "--headless", "--auto-approve",
                                 "--task", "no-such-task"])
    assert result.exit_code == 2
    assert ("agent audit: openai -> profile 'default' from the environment (OPENAI_BASE_URL, OPENAI_API_KEY, "
            "TESTJACK_MODEL): model coder at http://127.0.0.1:9/v1") in result.output
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[profiles.local]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "qwen"\n'
                             'timeout = 900\nconcurrency = 2\n[roles]\nreviewer = "local"\n')
    line = describe_role(load_config(), "reviewer", "openai")
    assert line.startswith(f"reviewer: openai -> profile 'local' in {config_path()}: model qwen at "
                           "http://127.0.0.1:8000/v1")
    assert "timeout 900s" in line and "concurrency 2" in line




async def test_known_witnesses_are_in_place_for_the_auditors_test_runs(server):
    witness = Candidate(id="calc:analysis:1.v1", path="tests/test_tj_zero.py", source="def test_zero(): pass\n",
                        requirement="double(0) is 0", author="task_analysis")
    server.script(Reply(tool_calls=[("run_tests", {"world": "model", "test_ids": ["tests/test_tj_zero.py"]})]),
                  write_reply(), Reply(tool_calls=[("submit", SUBMIT)]))
    trial = make_trial()
    tools = FileWorlds(trial)
    ctx = make_ctx(tools, trial, [])
    ctx.known_witnesses = [witness]
    await LLMAuditAgent(model(server)).audit(ctx)
    assert ("run_tests", "model", ("tests/test_tj_zero.py",), ("tests/test_tj_zero.py",)) in tools.calls
    assert "Their files are in place for `run_tests`" in server.requests[0]["messages"][0]["content"]


async def test_later_audits_are_told_what_was_judged_and_not_counted(server):
    server.script(write_reply(), Reply(tool_calls=[("submit", SUBMIT)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.judged = [JudgedCandidate("a cancelled first caller's run is cached", "questionable", "queued",
                                  "P says nothing about cancellation")]
    await LLMAuditAgent(model(server)).audit(ctx)
    system = server.requests[0]["messages"][0]["content"]
    assert ("- a cancelled first caller's run is cached — questionable (waiting for the operator): "
            "P says nothing about cancellation") in system


async def test_any_rejection_of_the_structured_request_falls_back_to_the_tool(server):
    # e.g. a server that wants `tools` whenever the history holds tool calls
    server.script(Reply(text="Done."), Fault(400, "tool messages need tools"), Reply(tool_calls=[("submit", REVIEW)]))
    trial = make_trial()
    ctx = make_ctx(FileWorlds(trial), trial, [])
    ctx.case_runs = {CANDIDATE.id: CASES}
    chat = model(server, "auto")
    verdict = await LLMReviewer(chat).review(ctx, CANDIDATE)
    assert verdict.overall == "KEEP_SOME" and chat.json_schema_supported is False
