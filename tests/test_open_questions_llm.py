"""Issue 35.1 and 35.3 through the model path: the trial auditor and the reviewer are models behind
the local OpenAI-compatible endpoint (the real `openai` client, tests/fake_openai_server.py). The
auditor's test fails on the trials that read P otherwise and the reviewer judges it questionable;
the auditor also reports "P is silent on X" in its structured result. Both land under the
report's underspecified-prompt heading, and no trial is refuted by them. Fake sandbox
(engine_fakes.py)."""
from __future__ import annotations

from engine_fakes import FakeAnalyst, FakeRoles, FakeSandbox, make_benchmark, make_task, make_trial
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.agents import LLMAuditAgent, OpenAIChatModel
from testjack_tui.agents.roles_llm import LLMReviewer
from testjack_tui.config import Profile
from testjack_tui.engine import open_questions
from testjack_tui.engine.report import build_report
from testjack_tui.engine.report_render import session_markdown
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import session_deps

T = "t1"
PATH = "tests/test_tj_alias.py"
SOURCE = "# REQ alias\n# LABEL valid\ndef test_alias():\n    assert resolve('a') == 'b'\n"
SILENT = {"on": "whether aliases are case-sensitive", "why": "P names aliases but not their case",
          "clarification": "Say whether alias lookup ignores case."}


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel(Profile(name="f", base_url=server.base_url, model="fake-model", timeout=5,
                                   retry_backoff=0.0))


async def test_a_model_judging_a_discriminating_test_questionable_opens_a_question_about_p():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B", ["alias"]),
              make_trial(T, "a3", "model-C")]
    with FakeOpenAIServer() as server:
        server.script(
            Reply(tool_calls=[("write_test_file", {"path": PATH, "source": SOURCE})]),
            Reply(tool_calls=[("submit", {
                "notes": "n", "checklist": [], "nothing_found": True, "findings": [], "prompt_silent": [SILENT],
                "candidates": [{"path": PATH, "requirement": "an alias resolves to its target"}]})]),
            Reply(tool_calls=[("submit", {
                "label": "questionable", "requirement": "an alias resolves to its target", "explicit": False,
                "reason": "P never says which target an alias resolves to", "overall": "HUMAN_REVIEW",
                "cases": [{"test_id": f"{PATH}::test_it", "label": "QUESTIONABLE", "scope": "in_scope",
                           "overfitting": "to_reference", "reason": "P does not say"}]})]))
        auditor, reviewer = LLMAuditAgent(_model(server)), LLMReviewer(_model(server))
        roles = FakeRoles(auditor, reviewer, FakeAnalyst({}))  # type: ignore[arg-type]
        cfg = SessionConfig(benchmark="fake", rounds=1, auto_approve=True, audit_first=["a2"],
                            task_analysis=False)

        def tools(env, task, trial, worlds, evidence):
            from agents_worlds import FileWorlds
            return FileWorlds(trial)
        session = AuditSession.create(cfg,
                                      session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                                   sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                                   tools_factory=tools))
        events: list = []
        session.subscribe(events.append)
        state = await session.run()
        assert state == "finished", [e.message for e in events if getattr(e, "level", "") == "error"]
        await auditor.aclose()
        await reviewer.aclose()
        assert len(server.requests) == 3  # the audit's two turns and one review
    summary = session.summary()
    assert "refuted" not in {t.state for t in summary.tasks[T].trials.values()}
    stored = {q.requirement: q for q in open_questions.stored(session.store, T)}
    question = stored["an alias resolves to its target"]
    assert question.fails_on == ["a1", "a2"] and question.passes_on == ["a3"]  # replayed, as for rho
    assert question.said[0].startswith("reviewer (") and "P never says which target" in question.said[0]
    silent = stored["whether aliases are case-sensitive"]
    assert silent.said[0].startswith("audit agent: P is silent") and silent.source_trial == "a2"
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    assert {(u.kind, u.requirement) for u in report.underspecified_prompts} == {
        ("open question", "an alias resolves to its target"), ("open question", "whether aliases are case-sensitive")}
    under = session_markdown(report).split("## Underspecified prompts")[1]
    assert "an alias resolves to its target" in under and "Say whether alias lookup ignores case." in under
    a1 = next(t for t in report.trials if t.trial_id == "a1")
    assert not a1.refuted and a1.open_questions[0].requirement == "an alias resolves to its target"
