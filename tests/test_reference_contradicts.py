""""The reference contradicts P here" (issue 35.7): asked for a repair of a test that fails on the
reference, or in its audit report, the model can say the reference itself breaks words of P,
with the quote and the run's lines. The engine records a task finding (report.md, report.json,
the report command's summary), drops the test with that reason instead of a silent give-up, and
refutes no trial with it. The real `openai` client against the fake OpenAI server over HTTP;
fake sandbox (engine_fakes.py)."""
from __future__ import annotations

import json

from engine_fakes import FakeAnalyst, FakeReviewer, FakeRoles, FakeSandbox, make_benchmark, make_task, make_trial
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.agents import LLMAuditAgent, OpenAIChatModel
from testjack_tui.config import Profile
from testjack_tui.engine.events import CandidateDropped
from testjack_tui.engine.report import build_report
from testjack_tui.engine.report_render import session_markdown
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import session_deps

T = "t1"
QUOTE = "It must handle alias and quoting."
CLAIM = "drops the alias of a quoted name"
OUTPUT = "AssertionError: assert resolve('\"a\"') == 'b'"
BROKEN = "# REQ alias\n# LABEL valid\n# BROKEN\ndef test_alias_quoted():\n    assert resolve('\"a\"') == 'b'\n"
NOTHING = {"candidates": [], "nothing_found": True, "notes": "n", "checklist": [], "findings": []}


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel(Profile(name="f", base_url=server.base_url, model="fake-model", timeout=5,
                                   retry_backoff=0.0))


def _session(task, trials, roles):
    from agents_worlds import FileWorlds
    return AuditSession.create(SessionConfig(benchmark="fake", mode="lightweight", rounds=1),
                               session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                            sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                            tools_factory=lambda env, task, trial, worlds, evidence: FileWorlds(trial)))


async def test_a_repair_answered_with_the_reference_contradicting_p_becomes_a_task_finding():
    task, trials = make_task(T), [make_trial(T, "a1", "model-A")]
    with FakeOpenAIServer() as server:
        server.script(
            Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_alias.py", "source": BROKEN})]),
            Reply(tool_calls=[("submit", {**NOTHING, "candidates": [
                {"path": "tests/test_tj_alias.py", "requirement": "handles alias of quoted names"}]})]),
            Reply(tool_calls=[("submit", {"give_up": True, "reason": "the test is right",
                                          "reference_contradicts": {"quote": QUOTE, "claim": CLAIM,
                                                                    "output": OUTPUT}})]))
        auditor = LLMAuditAgent(_model(server))
        roles = FakeRoles(auditor, FakeReviewer(), FakeAnalyst({"analysis": []}))  # type: ignore[arg-type]
        session = _session(task, trials, roles)
        events: list = []
        session.subscribe(events.append)
        state = await session.run()
        assert state == "finished", [e.message for e in events if getattr(e, "level", "") == "error"]
        await auditor.aclose()
        requests = list(server.requests)
    assert len(requests) == 3  # audit (2 turns), then one repair request answered with the claim
    asked = requests[2]["messages"][-1]["content"]
    assert "reference_contradicts" in asked and "do not bend the test" in asked
    repair_tool = next(t for t in requests[2]["tools"] if t["function"]["name"] == "submit")
    assert "reference_contradicts" in repair_tool["function"]["parameters"]["properties"]
    # Dropped with the claim as its reason, never a bare give-up.
    [dropped] = [e for e in events if isinstance(e, CandidateDropped)]
    assert "its author says the reference contradicts P" in dropped.reason and QUOTE in dropped.reason
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    data = json.loads(json.dumps(report.to_json()))
    [claim] = data["tasks"][T]["reference_contradicts"]
    assert (claim["quote"], claim["claim"], claim["output"]) == (QUOTE, CLAIM, OUTPUT)
    assert claim["by"] == "audit agent" and claim["candidate_id"] == "t1:a1:1.v1"
    assert "tests/test_tj_alias.py" in claim["reference_run"] and "failed" in claim["reference_run"]
    [fate] = data["tasks"][T]["audit_tests"]  # listed with what happened to it, the claim included
    assert fate["fate"].startswith("dropped: fails on the reference (failed); its author says the reference "
                                   "contradicts P")
    md = session_markdown(report)
    assert "## The reference contradicts P (the task is not well-formed on these points)" in md
    assert f'P says "{QUOTE}"; the reference {CLAIM}.' in md
    from testjack_tui.tui.screens.report import ReportScreen  # the TUI report's prompts tab
    shown = "\n".join(line.plain for line in ReportScreen._contradiction_lines(T, report))
    assert f'the reference contradicts P: "{QUOTE}"' in shown and f"audit agent: the reference {CLAIM}" in shown
    # It refutes nothing: the one trial stays clean.
    assert [t.findings for t in report.trials] == [[]] and report.tables.benchmark[0].refuted == 0


async def test_an_audit_report_saying_the_reference_contradicts_p_lands_in_the_task_report():
    task, trials = make_task(T), [make_trial(T, "a1", "model-A")]
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", {**NOTHING, "reference_contradicts": [
            {"quote": QUOTE, "claim": CLAIM, "output": OUTPUT}]})]))
        auditor = LLMAuditAgent(_model(server))
        roles = FakeRoles(auditor, FakeReviewer(), FakeAnalyst({"analysis": []}))  # type: ignore[arg-type]
        session = _session(task, trials, roles)
        assert await session.run() == "finished"
        await auditor.aclose()
        assert len(server.requests) == 1
        schema = next(t for t in server.requests[0]["tools"] if t["function"]["name"] == "submit")
    assert "reference_contradicts" in schema["function"]["parameters"]["properties"]
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    [claim] = report.tasks[T].reference_contradicts
    assert claim.by == "audit agent" and claim.source_trial == "a1" and claim.candidate_id == ""
    assert "(audit of a1)" in session_markdown(report)
    # A resumed report does not count it twice.
    assert len(build_report(session.id).tasks[T].reference_contradicts) == 1


async def test_the_operator_says_the_reference_contradicts_p_in_the_verdicts_file(tmp_path):
    """Headless operator audit (`--agent operator --candidate F --verdicts V`): the verdicts file's
    `reference_contradicts` answers for the operator's test that fails on the reference."""
    from testjack_tui.agents import OperatorAuditAgent
    from testjack_tui.commands.operator_input import CandidateFile, FileOperatorAgent
    from testjack_tui.commands.verdicts_file import check_quotes, load_verdicts
    from testjack_tui.engine.approval import TableApprover

    task, trials = make_task(T), [make_trial(T, "a1", "model-A")]
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text('["tests/test_tj_alias.py"]\n'
                        f'reference_contradicts = {{ quote = "{QUOTE}", claim = "{CLAIM}" }}\n')
    table = TableApprover(load_verdicts(verdicts), str(verdicts))
    check_quotes(table.table, verdicts, {T: task.instruction})
    mine = CandidateFile(tmp_path / "test_tj_alias.py", "tests/test_tj_alias.py", "handles alias of quoted names",
                         BROKEN, path_given=True)
    operator = FileOperatorAgent(OperatorAuditAgent(), [mine], table=table)
    roles = FakeRoles(operator, FakeReviewer(), None)  # type: ignore[arg-type]
    session = AuditSession.create(SessionConfig(benchmark="fake", mode="lightweight", rounds=1, task_analysis=False),
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               approver=table,
                                               sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                               tools_factory=lambda *a: object()))
    assert await session.run() == "finished"
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    [claim] = report.tasks[T].reference_contradicts
    assert claim.by == "operator" and (claim.quote, claim.claim) == (QUOTE, CLAIM)
    assert "tests/test_tj_alias.py" in claim.output and "failed" in claim.output  # the run it answered
    assert f'- operator (audit of a1) test `t1:a1:op1.v1`: P says "{QUOTE}"' in session_markdown(report)


def test_a_bad_reference_claim_in_the_verdicts_file_is_one_line_naming_the_entry(tmp_path):
    import pytest

    from testjack_tui.commands.verdicts_file import check_quotes, load_verdicts
    from testjack_tui.errors import InputError

    bad = tmp_path / "v.toml"
    bad.write_text('["x.py"]\nreference_contradicts = { quote = "", claim = "c" }\n')
    with pytest.raises(InputError, match=r"x.py.reference_contradicts.quote.*non-empty"):
        load_verdicts(bad)
    bad.write_text('["x.py"]\nreference_contradicts = { quote = "words nowhere in the prompt", claim = "c" }\n')
    with pytest.raises(InputError, match=r"x.py.reference_contradicts.quote.*not words of the task prompt"):
        check_quotes(load_verdicts(bad), bad, {T: make_task(T).instruction})
