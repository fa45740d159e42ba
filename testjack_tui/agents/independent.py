"""The independent implementer: writes G′, an implementation of P, when a task has no reference.

Solution-blind like the task analyst (its tools reach only the null world, never a trial), it
submits whole files; the engine turns them into a patch, runs T0 on it and, when a T0 test
fails, hands back only test names and messages for another attempt (see
testjack_tui/engine/no_reference.py). The scripted demo replays recorded files through the same
session, tools and schema.
"""
from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from testjack_tui.engine.roles import AuditContext, Candidate
from testjack_tui.prompts import render

from .errors import ScriptError
from .roles_llm import SessionKey, official_tests_block, SessionRole
from .runtime import AgentSession
from .scripted import SCRIPTED_LABEL, ScriptedChatModel, ScriptLibrary, Turn, step_call
from .untrusted import Fence


def _files(payload: dict[str, Any]) -> dict[str, str]:
    return {posixpath.normpath(f["path"]): f["content"] for f in payload.get("files", [])}


class IndependentImplementer(SessionRole):
    """implement(ctx) -> {path: content}; revise(ctx, feedback) -> the next version, or None."""

    role = "task_analysis"  # the same access: P, T0 and the null world only
    caps = "reference"

    def _new_session(self, ctx: AuditContext) -> AgentSession:
        fence = Fence()
        system, user = render(
            "independent_reference", task_id=ctx.task.id, instruction=ctx.task.instruction,
            official_tests=official_tests_block(ctx, fence), boundary=fence.boundary,
            max_steps=self.max_steps)
        session = self._open(ctx, "reference", system, fence, {}, suffix="independent")
        session.first_user = user
        return session

    def _key(self, ctx: AuditContext) -> SessionKey:
        return (ctx.session_id, ctx.task.id, "independent")

    async def implement(self, ctx: AuditContext) -> tuple[dict[str, str], str]:
        session = self._new_session(ctx)
        self._keep(ctx, session)
        payload = await session.ask(session.first_user, "reference")
        return _files(payload), payload.get("notes", "")

    async def revise(self, ctx: AuditContext, feedback: str, attempt: int) -> tuple[dict[str, str], str] | None:
        session = self._sessions.get(self._key(ctx))
        if session is None:  # resumed in another process: start over with the feedback
            session = self._new_session(ctx)
            self._keep(ctx, session)
            session._append({"role": "user", "content": session.first_user})
        session.model = self.model_for(ctx, f"revise:{attempt}")
        text = ("T0 does not pass on your implementation. Only the failing tests and their "
                "messages are shown:\n\n" + feedback + "\n\nSubmit a corrected version (whole files).")
        payload = await session.ask(text, "reference")
        return _files(payload), payload.get("notes", "")


class ScriptedImplementer(IndependentImplementer):
    """Replays `agent-scripts/<task>/independent.json`: recorded steps, then one submit per
    recorded version (`versions[i].files` maps repo paths to files beside the script)."""

    counts_requests = False  # a replay sends no requests

    def __init__(self, benchmark_root: Path | str, max_steps: int = 200):
        self.library = ScriptLibrary(benchmark_root)
        super().__init__(ScriptedChatModel([], str(self.library.root)), label=SCRIPTED_LABEL,
                         max_steps=max_steps)

    def _script(self, task_id: str) -> tuple[Path, dict[str, Any]]:
        path = self.library.root / task_id / "independent.json"
        data = self.library._json(path, f"the independent implementation of task {task_id}")
        if not isinstance(data.get("versions"), list) or not data["versions"]:
            raise ScriptError(path, "versions", "must be a non-empty list")
        return path, data

    def _submit(self, task_id: str, script: Path, data: dict[str, Any], index: int) -> list[Turn]:
        version = data["versions"][index]
        files = []
        for repo_path, relative in sorted((version.get("files") or {}).items()):
            source = self.library.root / task_id / relative
            if not source.is_file():
                raise ScriptError(script, f"versions[{index}].files.{repo_path}", f"{relative!r} does not exist")
            source = self.library.inside(source, script, f"versions[{index}].files.{repo_path}")
            files.append({"path": repo_path, "content": source.read_text(encoding="utf-8")})
        return [[("submit", {"files": files, "notes": version.get("notes", "")})]]

    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ScriptedChatModel:
        script, data = self._script(ctx.task.id)
        if phase.startswith("revise:"):
            index = int(phase.split(":", 1)[1])
            if index >= len(data["versions"]):
                raise ScriptError(script, "versions", f"no version {index + 1} was recorded")
            return ScriptedChatModel(self._submit(ctx.task.id, script, data, index), str(script))
        turns = [[step_call(step)] for step in data.get("steps", [])]
        return ScriptedChatModel(turns + self._submit(ctx.task.id, script, data, 0), str(script))
