"""The three roles (audit, reviewer, task analysis) as agent sessions over a chat model.

The chat model is usually `OpenAIChatModel`; the scripted offline demo subclasses these
roles and swaps in a model that replays recorded tool calls, so both run the same code.
What a model *says* is kept as notes only: candidates count after the engine executes them.
"""
from __future__ import annotations

import posixpath
import re
from collections import OrderedDict
from typing import Any

from prompts import render
from testjack_tui.engine.ambiguity import quote_in_prompt
from testjack_tui.engine.roles import (AuditContext, AuditOutcome, Candidate, ChecklistItem,
                                       ReviewVerdict)

from .chat import ChatModel
from .errors import AgentError
from .runtime import DEFAULT_MAX_STEPS, AgentSession
from .toolbox import Toolbox, candidates_written
from .transcript import Transcript, transcript_file
from .untrusted import Fence, cap_output, sanitize_reference_feedback

REPAIR_STEPS = 15
KEPT_SESSIONS = 16  # conversations kept for repairs; older ones are re-opened from scratch


def candidate_id(task_id: str, trial_id: str | None, chain: int, version: int) -> str:
    return f"{task_id}:{trial_id or 'analysis'}:{chain}.v{version}"


def next_version_id(previous: str) -> str:
    base, _, n = previous.rpartition(".v")
    if base and n.isdigit():
        return f"{base}.v{int(n) + 1}"
    return f"{previous}.v2"


def _plain(value: str | None, limit: int = 80) -> str:
    # Agent/model names come from the trial's files: keep them short and inert.
    return re.sub(r"[^\w.@:/+ -]", "_", value or "unknown")[:limit]


def _framework(ctx: AuditContext) -> str:
    return ctx.task.tests.framework or "pytest"


def _official_tests_block(ctx: AuditContext, fence: Fence) -> str:
    return fence.wrap(cap_output(ctx.tools.official_tests(), 12_000), "official tests T0")


def _checklist(payload: dict) -> list[ChecklistItem]:
    return [ChecklistItem(clause=i["clause"], explicit=bool(i["explicit"]), quote=i.get("quote", ""),
                          covered_by_t0=i.get("covered_by_t0"), implemented=i.get("implemented"))
            for i in payload.get("checklist", [])]


def _notes(payload: dict) -> str:
    notes = payload.get("notes", "")
    report = payload.get("report")
    if report:
        lines = [f"verdict (agent's opinion, not counted): {report.get('verdict')}"]
        for issue in report.get("issues", []):
            lines.append(f"- {issue.get('what')} [clause: {issue.get('clause')}] "
                         f"why: {issue.get('why', '')} T0 missed it because: {issue.get('why_t0_missed', '')}")
        notes = (notes + "\n\n" + "\n".join(lines)).strip()
    return notes


def _repair_written(candidate: Candidate):
    path = posixpath.normpath(candidate.path)

    def check(payload: dict, box: Toolbox) -> list[str]:
        if payload.get("give_up"):
            return []
        if path not in box.written_in_phase:
            return [f"write the corrected test to {candidate.path!r} with write_test_file before submitting "
                    "(or submit give_up: true)"]
        return []
    return check


class _SessionRole:
    """Shared plumbing: sessions, transcripts, models."""

    role = ""
    prompt = ""

    def __init__(self, model: ChatModel, *, label: str | None = None, max_steps: int = DEFAULT_MAX_STEPS):
        self.model = model
        self.label = label or model.label
        self.max_steps = max_steps
        self._sessions: OrderedDict[tuple, AgentSession] = OrderedDict()

    async def aclose(self) -> None:
        """Close the endpoint client (its pooled connections)."""
        self._sessions.clear()
        closer = getattr(self.model, "aclose", None)
        if closer is not None:
            await closer()

    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ChatModel:
        """The chat model for one phase of a session (the scripted demo overrides this)."""
        return self.model

    def _key(self, ctx: AuditContext) -> tuple:
        return (ctx.session_id, ctx.task.id, ctx.trial.id if ctx.trial else None)

    def _transcript(self, ctx: AuditContext, suffix: str = "") -> Transcript:
        trial_id = ctx.trial.id if ctx.trial else None
        path = ctx.transcript_path or transcript_file(ctx.session_id, self.role, ctx.task.id, trial_id, suffix)
        return Transcript(path, self.role, ctx.task.id, trial_id)

    def _open(self, ctx: AuditContext, phase: str, system: str, fence: Fence, checks: dict,
              suffix: str = "", candidate: Candidate | None = None) -> AgentSession:
        toolbox = Toolbox(self.role, ctx.tools, fence, phase, checks=checks)
        return AgentSession(role=self.role, model=self.model_for(ctx, phase, candidate), toolbox=toolbox,
                            ctx=ctx, system=system, transcript=self._transcript(ctx, suffix),
                            max_steps=self.max_steps)

    def _keep(self, ctx: AuditContext, session: AgentSession) -> None:
        self._sessions[self._key(ctx)] = session
        while len(self._sessions) > KEPT_SESSIONS:
            self._sessions.popitem(last=False)

    def _candidates(self, ctx: AuditContext, payload: dict, session: AgentSession,
                    author: str) -> list[Candidate]:
        trial_id = ctx.trial.id if ctx.trial else None
        out = []
        for index, item in enumerate(payload.get("candidates", []), start=1):
            path = posixpath.normpath(item["path"])
            out.append(Candidate(
                id=candidate_id(ctx.task.id, trial_id, index, 1), path=path,
                source=session.toolbox.files[path], requirement=item["requirement"], author=author,
                attempt=1, test_ids=tuple(item.get("test_ids") or ()),
                origin=self.origin_for(ctx, index, 1, session)))
        return out

    def origin_for(self, ctx: AuditContext, chain: int, version: int, session: AgentSession) -> str:
        return str(session.transcript.path)

    async def _repair(self, ctx: AuditContext, candidate: Candidate, feedback_text: str,
                      author: str, reopen) -> Candidate | None:
        session = self._sessions.get(self._key(ctx))
        if session is None:
            session = reopen()
            self._keep(ctx, session)
            session.toolbox.files[posixpath.normpath(candidate.path)] = candidate.source
        session.model = self.model_for(ctx, "repair", candidate)
        session.toolbox.checks["repair"] = _repair_written(candidate)
        fence = session.toolbox.fence
        message = (
            f"Your candidate `{candidate.path}` (id {candidate.id}, checking: {candidate.requirement!r}) "
            "failed where it must pass: on a valid implementation of the task. That means the test "
            "expects something the task does not require, or has a bug of its own. Here is what the run "
            "showed:\n\n" + fence.wrap(feedback_text, "validation feedback") + "\n\n"
            f"Rewrite `{candidate.path}` with write_test_file so it checks only what P requires, then call "
            "submit (give_up: false, with the requirement). If the requirement cannot be tested "
            "honestly, call submit with give_up: true.")
        payload = await session.ask(message, "repair", max_steps=REPAIR_STEPS)
        if payload.get("give_up"):
            return None
        path = posixpath.normpath(candidate.path)
        new_id = next_version_id(candidate.id)
        chain, version = _chain_version(new_id)
        return Candidate(
            id=new_id, path=path, source=session.toolbox.files[path],
            requirement=payload.get("requirement") or candidate.requirement, author=author,
            attempt=candidate.attempt + 1, parent=candidate.id,
            test_ids=tuple(payload.get("test_ids") or candidate.test_ids),
            origin=self.origin_for(ctx, chain, version, session))


def _chain_version(cid: str) -> tuple[int, int]:
    base, _, version = cid.rpartition(".v")
    chain = base.rpartition(":")[2]
    try:
        return int(chain), int(version)
    except ValueError:
        return 0, 0


class LLMAuditAgent(_SessionRole):
    role = "audit"

    def _system_and_user(self, ctx: AuditContext, fence: Fence) -> tuple[str, str]:
        if ctx.trial is None:
            raise AgentError(f"audit of task {ctx.task.id} needs a trial")
        known = ""
        if ctx.known_witnesses:
            listed = "\n".join(f"- {w.path}: {w.requirement}" for w in ctx.known_witnesses)
            known = ("\nTests already confirmed for this task (the trial passes them or they were "
                     "replayed already); look for other problems:\n" + fence.wrap(listed, "known witnesses"))
        return render(
            "audit", task_id=ctx.task.id, trial_id=_plain(ctx.trial.id), agent=_plain(ctx.trial.agent),
            model=_plain(ctx.trial.model), instruction=ctx.task.instruction,
            official_tests=_official_tests_block(ctx, fence),
            diff=fence.wrap(cap_output(ctx.tools.diff(), 30_000), "trial patch"),
            boundary=fence.boundary, framework=_framework(ctx), workdir=ctx.task.environment.workdir,
            max_steps=self.max_steps, known_witnesses=known)

    def _new_session(self, ctx: AuditContext) -> AgentSession:
        fence = Fence()
        system, user = self._system_and_user(ctx, fence)
        session = self._open(ctx, "audit", system, fence, {"audit": candidates_written})
        session.first_user = user
        return session

    async def audit(self, ctx: AuditContext) -> AuditOutcome:
        session = self._new_session(ctx)
        self._keep(ctx, session)
        payload = await session.ask(session.first_user, "audit")
        return AuditOutcome(candidates=self._candidates(ctx, payload, session, "audit"),
                            checklist=_checklist(payload), notes=_notes(payload))

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str) -> Candidate | None:
        def reopen():
            session = self._new_session(ctx)
            session._append({"role": "user", "content": session.first_user})
            return session
        return await self._repair(ctx, candidate, feedback, "audit", reopen)


class LLMTaskAnalyst(_SessionRole):
    """Solution-blind: its tools reach only the null world; repair feedback is sanitized."""

    role = "task_analysis"

    def _new_session(self, ctx: AuditContext) -> AgentSession:
        fence = Fence()
        system, user = render(
            "task_analysis", task_id=ctx.task.id, instruction=ctx.task.instruction,
            official_tests=_official_tests_block(ctx, fence), boundary=fence.boundary,
            framework=_framework(ctx), max_steps=self.max_steps)
        session = self._open(ctx, "analysis", system, fence, {"analysis": candidates_written})
        session.first_user = user
        return session

    async def analyse(self, ctx: AuditContext) -> list[Candidate]:
        session = self._new_session(ctx)
        self._keep(ctx, session)
        payload = await session.ask(session.first_user, "analysis")
        return self._candidates(ctx, payload, session, "task_analysis")

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str) -> Candidate | None:
        # Whatever the engine passes, only test names and assertion messages get through.
        clean = sanitize_reference_feedback(feedback, ctx.task.reference.patch)

        def reopen():
            session = self._new_session(ctx)
            session._append({"role": "user", "content": session.first_user})
            return session
        return await self._repair(ctx, candidate, clean, "task_analysis", reopen)


def _review_check(instruction: str):
    def check(payload: dict, box: Toolbox) -> list[str]:
        problems = []
        if payload["label"] == "valid" and not payload["requirement"].strip():
            problems.append("requirement: a valid test must name the clause of P it checks")
        if payload["explicit"]:
            quote = payload.get("quote", "")
            if not quote.strip():
                problems.append("quote: explicit is true, so quote the words of P that state the clause")
            elif not quote_in_prompt(quote, instruction):
                problems.append("quote: these words do not occur in P; copy them exactly, or set explicit to false")
        return problems
    return check


class LLMReviewer(_SessionRole):
    """Judges a candidate with P as the sole authority. Sees P, T0, the candidate; never G."""

    role = "reviewer"

    async def review(self, ctx: AuditContext, candidate: Candidate) -> ReviewVerdict:
        fence = Fence()
        system, user = render(
            "reviewer", task_id=ctx.task.id, instruction=ctx.task.instruction,
            official_tests=_official_tests_block(ctx, fence), boundary=fence.boundary,
            candidate_path=_plain(candidate.path, 200),
            claimed_requirement=fence.wrap(candidate.requirement, "author's claim"),
            candidate_source=fence.wrap(cap_output(candidate.source, 30_000), candidate.path))
        suffix = re.sub(r"[^\w.-]", "_", candidate.id.rpartition(":")[2] or candidate.id)
        toolbox_checks = {"review": _review_check(ctx.task.instruction)}
        session = self._open(ctx, "review", system, fence, toolbox_checks, suffix=suffix, candidate=candidate)
        payload: dict[str, Any] = await session.ask(user, "review")
        return ReviewVerdict(candidate_id=candidate.id, label=payload["label"],
                             requirement=payload["requirement"].strip() or candidate.requirement,
                             explicit=bool(payload["explicit"]), quote=payload.get("quote", ""),
                             reason=payload["reason"], reviewer=self.label)
