"""The agent loop: ask the model, run the tools it calls, repeat until it submits.

One `AgentSession` is one conversation. The LLM roles and the scripted offline demo both
run through it (the scripted demo is just a chat model that replays recorded tool calls),
so the tools, caps, events, ledger and transcript are the same code in both modes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from testjack_tui.engine.events import AgentOutput, Log, ToolCall
from testjack_tui.engine.roles import AuditContext

from .chat import CallMeter, ChatModel, ChatReply, ToolCallRequest, Usage
from .errors import AgentError
from .ledger import MemoryLedger
from .toolbox import Toolbox
from .transcript import Transcript

DEFAULT_MAX_STEPS = 40
NUDGE = ("Continue with tool calls. When you are done, call submit with your result; "
         "plain text replies are not read as a result.")


class AgentSession:
    def __init__(self, *, role: str, model: ChatModel, toolbox: Toolbox, ctx: AuditContext,
                 system: str, transcript: Transcript, max_steps: int = DEFAULT_MAX_STEPS):
        self.role = role
        self.model = model
        self.toolbox = toolbox
        self.ctx = ctx
        self.max_steps = max_steps
        self.transcript = transcript
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        self.steps = 0
        ledger = ctx.ledger if ctx.ledger is not None else MemoryLedger()
        self.meter = CallMeter(ledger, role, ctx.task.id, ctx.trial.id if ctx.trial else None,
                               on_record=lambda usage: self.transcript.write("usage", **usage))
        self.transcript.write("system", content=system, model=model.label)

    @property
    def trial_id(self) -> str | None:
        return self.ctx.trial.id if self.ctx.trial else None

    def _emit(self, event) -> None:
        try:
            self.ctx.emit(event)
        except Exception:  # a renderer's failure must not stop an audit
            pass

    def _on_text(self, chunk: str) -> None:
        self._emit(AgentOutput(self.ctx.session_id, role=self.role, task_id=self.ctx.task.id,
                               trial_id=self.trial_id, text=chunk))

    async def ask(self, user_text: str, phase: str, max_steps: int | None = None) -> dict:
        """Send a user message, loop until the model submits a valid result for `phase`."""
        self.toolbox.set_phase(phase)
        self._append({"role": "user", "content": user_text})
        budget = max_steps or self.max_steps
        for _ in range(budget):
            self.steps += 1
            try:
                reply = await self._complete()
            except Exception as exc:
                self.transcript.write("error", message=str(exc), error_type=type(exc).__name__)
                raise
            submitted = await self._handle(reply)
            if submitted is not None:
                self.transcript.write("submitted", phase=phase, payload=submitted)
                return submitted
        message = (f"{self.role} agent for {self.ctx.task.id}/{self.trial_id or 'analysis'} used its "
                   f"{budget} steps without a valid submit")
        self.transcript.write("error", message=message, error_type="StepLimit")
        self._emit(Log(self.ctx.session_id, level="warning", message=message))
        raise AgentError(message)

    async def _complete(self) -> ChatReply:
        """One model call; with a response cache, a resumed session replays stored replies."""
        tools = self.toolbox.schemas()
        cache = getattr(self.ctx, "llm_cache", None)
        if cache is None or not getattr(self.model, "cacheable", True):
            return await self.model.complete(self.messages, tools, on_text=self._on_text, meter=self.meter)
        key = "llm:" + hashlib.sha256(json.dumps([self.model.label, self.messages, tools],
                                                 sort_keys=True, default=str).encode()).hexdigest()
        stored = cache.get_llm_response(key)
        if stored:
            data = json.loads(stored)
            if data.get("text"):
                self._on_text(data["text"])
            self.transcript.write("replayed", key=key)
            return ChatReply(text=data.get("text", ""), model=data.get("model", self.model.model),
                             tool_calls=[ToolCallRequest(**c) for c in data.get("tool_calls", [])],
                             usage=Usage(0, 0, False), usd=0.0, finish_reason=data.get("finish_reason"),
                             call_id=data.get("call_id", ""))
        reply = await self.model.complete(self.messages, tools, on_text=self._on_text, meter=self.meter)
        cache.put_llm_response(key, json.dumps({
            "text": reply.text, "model": reply.model, "finish_reason": reply.finish_reason,
            "call_id": reply.call_id,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]}))
        return reply

    def _append(self, message: dict) -> None:
        self.messages.append(message)
        self.transcript.write("message", message=message)

    async def _handle(self, reply: ChatReply) -> dict | None:
        # "" rather than null: some local servers reject a null content next to tool calls.
        assistant: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
        if reply.tool_calls:
            assistant["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.tool_calls]
        self._append(assistant)
        if not reply.tool_calls:
            self._append({"role": "user", "content": NUDGE})
            return None
        submitted = None
        for call in reply.tool_calls:
            self._emit(ToolCall(self.ctx.session_id, role=self.role, task_id=self.ctx.task.id,
                                trial_id=self.trial_id, call_id=call.id, name=call.name,
                                arguments=call.arguments))
            if submitted is not None:
                # Every tool call needs an answer, even the ones after the result is in.
                text, error = "ignored: a result was already submitted.", False
            else:
                result = await self.toolbox.call(call.name, call.arguments)
                text, error = result.text, result.error
                if result.submitted is not None:
                    submitted = result.submitted
            self._emit(ToolCall(self.ctx.session_id, role=self.role, task_id=self.ctx.task.id,
                                trial_id=self.trial_id, call_id=call.id, name=call.name,
                                arguments=call.arguments, result=text, finished=True))
            self._append({"role": "tool", "tool_call_id": call.id, "content": text})
            if error:
                self.transcript.write("tool_error", call_id=call.id, name=call.name)
        return submitted


def dumps_args(args: dict) -> str:
    return json.dumps(args, ensure_ascii=False)
