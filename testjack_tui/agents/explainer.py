"""The explainer role: one paragraph on why trials fail a witness the way they do.

The engine asks once per failure pattern (engine/failure_patterns.py) and stores the answer for
every trial failing that way. It is a cheap call: the reviewer's model, the failure and one
trial's diff in the request, no tools needed, a short result (`EXPLAIN_SUBMIT`) and its own caps
(`ROLE_CAPS["explainer"]`). The scripted demo's explainer writes the paragraph from the recorded
facts alone, so the offline demo shows one too.
"""
from __future__ import annotations

import re

from testjack_tui.engine.roles import AuditContext, FailurePattern
from testjack_tui.prompts import render

from .chat import ChatModel
from .roles_llm import SessionRole, inert_name
from .scripted import SCRIPTED_LABEL, ScriptedChatModel
from .untrusted import Fence, cap_output

MAX_DIFF = 12_000
MAX_MESSAGE = 3_000


class LLMExplainer(SessionRole):
    role = "explainer"

    async def explain(self, ctx: AuditContext, pattern: FailurePattern) -> str:
        fence = Fence()
        patch = ctx.trial.patch if ctx.trial is not None else ""
        system, user = render(
            "explainer", task_id=ctx.task.id, instruction=ctx.task.instruction, boundary=fence.boundary,
            requirement=inert_name(pattern.requirement, 300),
            quote=f'P says: "{inert_name(pattern.quote, 300)}"' if pattern.quote else "(an implicit requirement)",
            test_path=inert_name(pattern.test_path, 200), status=pattern.status,
            trials=f"{len(pattern.trials)} trial(s): {', '.join(pattern.trials[:12])}",
            test_source=fence.wrap(cap_output(pattern.test_source, 20_000), pattern.test_path),
            failure=fence.wrap(cap_output(pattern.message or pattern.failing, MAX_MESSAGE), "the failing run"),
            diff=fence.wrap(cap_output(patch or "(no patch)", MAX_DIFF), "trial patch"))
        suffix = re.sub(r"[^\w.-]", "_", pattern.witness_id.rpartition(":")[2] or pattern.witness_id)
        session = self._open(ctx, "explain", system, fence, {}, suffix=f"explain-{suffix}")
        session.model = self.pattern_model(ctx, pattern)
        payload = await session.ask(user, "explain")
        return str(payload.get("why") or "")

    def pattern_model(self, ctx: AuditContext, pattern: FailurePattern) -> ChatModel:
        """The chat model that explains this pattern (the scripted demo answers from its facts)."""
        return self.model_for(ctx, "explain")


def scripted_why(p: FailurePattern) -> str:
    """The demo's explanation: what the recorded facts say, in one paragraph (deterministic)."""
    who = "This trial fails" if len(p.trials) == 1 else f"These {len(p.trials)} trials all fail"
    how = ("the code the requirement needs is missing from the trial" if p.missing
           else "the trial's code gives another result than the requirement asks for")
    clause = f', which P states: "{p.quote}".' if p.quote else " (implicit in P)."
    return (f"{who} {p.test_path} ({p.status}: {p.failing}), while the reference solution "
            f"passes it: {how}. The requirement is \"{p.requirement}\"{clause}")


class ScriptedExplainer(LLMExplainer):
    counts_requests = False  # no request leaves the machine

    def __init__(self) -> None:
        super().__init__(ScriptedChatModel([], "scripted explainer"), label=SCRIPTED_LABEL)

    def pattern_model(self, ctx: AuditContext, pattern: FailurePattern) -> ChatModel:
        model: ChatModel = ScriptedChatModel([[("submit", {"why": scripted_why(pattern)[:700]})]],
                                             "scripted explainer")
        return model
