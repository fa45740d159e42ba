"""The agent loop: ask the model, run the tools it calls, repeat until it submits.

One `AgentSession` is one conversation. The LLM roles and the scripted offline demo both
run through it (the scripted demo is just a chat model that replays recorded tool calls),
so the tools, caps, events, ledger and transcript are the same code in both modes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from testjack_tui.engine.events import AgentOutput, AgentProgress, Event, Log, ToolCall
from testjack_tui.engine.roles import AuditContext

from .caps import RequestCount
from .chat import CallMeter, ChatModel, ChatReply, StructuredOutputUnsupported, ToolCallRequest, Usage
from .errors import AgentError
from .ledger import MemoryLedger
from .toolbox import Toolbox
from .transcript import Transcript

DEFAULT_MAX_STEPS = 40
NUDGE = ("Continue with tool calls. When you are done, call submit with your result; "
         "plain text replies are not read as a result.")
STRUCTURED_ASK = ("You replied without a tool call, so hand in your result now: reply with one JSON "
                  "object with the fields the submit tool takes (its schema is attached as the "
                  "response format). If you still need tools, say so in its notes and submit what "
                  "you have.")

CUT_ASK = ("Your last reply was cut off at the output limit ({limit}) before it was complete, so none "
           "of it was used. Send it again, shorter: one sentence per text field, quotes of P only "
           "as long as the point needs, no more rows than the schema allows. If it still would not "
           "fit, submit the rows that matter most and say in notes what you left out.")
CUT_PLACEHOLDER = "[reply cut off at the output limit; not used]"


def structured_mode(model: ChatModel) -> str:
    """"json_schema" when the final result is asked for with response_format, else "tool"."""
    mode = getattr(model, "structured_output", None) or getattr(
        getattr(model, "profile", None), "structured_output", "tool")
    if mode == "auto" and getattr(model, "json_schema_supported", None) is False:
        return "tool"
    return "json_schema" if mode in ("auto", "json_schema") else "tool"


class AgentSession:
    def __init__(self, *, role: str, model: ChatModel, toolbox: Toolbox, ctx: AuditContext,
                 system: str, transcript: Transcript, max_steps: int = DEFAULT_MAX_STEPS,
                 requests: RequestCount | None = None):
        self.role = role
        self.model = model
        self.toolbox = toolbox
        self.ctx = ctx
        self.max_steps = max_steps
        self.transcript = transcript
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        self.first_user = ""  # the role's opening message, sent again when a repair reopens the session
        self.steps = 0
        ledger = ctx.ledger if ctx.ledger is not None else MemoryLedger()
        self.meter = CallMeter(ledger, role, ctx.task.id, ctx.trial.id if ctx.trial else None,
                               on_record=lambda usage: self.transcript.write("usage", **usage),
                               on_progress=self._on_progress, requests=requests)
        self.transcript.write("system", content=system, model=model.label)

    @property
    def trial_id(self) -> str | None:
        return self.ctx.trial.id if self.ctx.trial else None

    def _emit(self, event: Event) -> None:
        try:
            self.ctx.emit(event)
        except Exception:  # a renderer's failure must not stop an audit
            pass

    def _on_progress(self, data: dict[str, Any]) -> None:
        if data.get("state") in ("retrying", "failed"):
            self.transcript.write("progress", **data)
        self._emit(AgentProgress(self.ctx.session_id, role=self.role, task_id=self.ctx.task.id,
                                 trial_id=self.trial_id, **data))

    def _on_text(self, chunk: str) -> None:
        self._emit(AgentOutput(self.ctx.session_id, role=self.role, task_id=self.ctx.task.id,
                               trial_id=self.trial_id, text=chunk))

    async def ask(self, user_text: str, phase: str, max_steps: int | None = None) -> dict[str, Any]:
        """Send a user message, loop until the model submits a valid result for `phase`."""
        self.toolbox.set_phase(phase)
        self._append({"role": "user", "content": user_text})
        budget = max_steps or self.max_steps
        for _ in range(budget):
            self.steps += 1
            try:
                reply = await self._complete()
                if reply.finish_reason == "length":
                    self._cut(reply)
                    continue
                submitted = await self._handle(reply)
                if submitted is None and not reply.tool_calls and structured_mode(self.model) == "json_schema":
                    submitted = await self._structured_result(phase)
            except Exception as exc:
                self.transcript.write("error", message=str(exc), error_type=type(exc).__name__)
                raise
            if submitted is not None:
                self.transcript.write("submitted", phase=phase, payload=submitted)
                return submitted
        message = (f"{self.role} agent for {self.ctx.task.id}/{self.trial_id or 'analysis'} used its "
                   f"{budget} steps without a valid submit")
        self.transcript.write("error", message=message, error_type="StepLimit")
        self._emit(Log(self.ctx.session_id, level="warning", message=message))
        raise AgentError(message)

    async def _structured_result(self, phase: str) -> dict[str, Any] | None:
        """Ask for the result with response_format (the endpoint's structured output).

        The model worked with tools and stopped calling them; the request carries no tools, so
        servers that enforce the schema by constrained decoding can. An endpoint that rejects
        response_format is remembered, and the session goes on with the submit tool.
        """
        self.messages[-1] = {"role": "user", "content": STRUCTURED_ASK}  # replaces the NUDGE
        self.transcript.write("message", message=self.messages[-1])
        schema = self.toolbox.submit_schema()
        response_format = {"type": "json_schema",
                           "json_schema": {"name": f"{phase}_result", "schema": schema, "strict": False}}
        try:
            reply = await self._complete(response_format=response_format, with_tools=False)
        except StructuredOutputUnsupported as exc:
            self.model.json_schema_supported = False
            self.transcript.write("structured_output_unsupported", message=str(exc))
            self._emit(Log(self.ctx.session_id, level="info",
                           message=f"{self.model.label}: no structured output ({exc}); using the submit tool"))
            self.messages[-1] = {"role": "user", "content": NUDGE}
            return None
        if getattr(self.model, "json_schema_supported", None) is None:
            try:
                self.model.json_schema_supported = True
            except AttributeError:
                pass
        if reply.finish_reason == "length":
            self._cut(reply)
            return None
        self._append({"role": "assistant", "content": reply.text or ""})
        text = _json_object_text(reply.text or "")
        result = await self.toolbox.call("submit", text)
        if result.submitted is not None:
            return result.submitted
        self.meter.last_failure = "structured result: " + " ".join(result.text.split())[:160]
        self._append({"role": "user", "content": result.text + "\nCall submit (or reply with the corrected JSON)."})
        return None

    async def _complete(self, response_format: dict[str, Any] | None = None, with_tools: bool = True) -> ChatReply:
        """One model call; with a response cache, a resumed session replays stored replies."""
        tools = self.toolbox.schemas() if with_tools else []
        extra = {"response_format": response_format} if response_format else {}
        cache = getattr(self.ctx, "llm_cache", None)
        if cache is None or not getattr(self.model, "cacheable", True):
            return await self.model.complete(self.messages, tools, on_text=self._on_text, meter=self.meter,
                                             **extra)
        key = "llm:" + hashlib.sha256(json.dumps([self.model.label, self.messages, tools, response_format],
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
        reply = await self.model.complete(self.messages, tools, on_text=self._on_text, meter=self.meter,
                                          **extra)
        cache.put_llm_response(key, json.dumps({
            "text": reply.text, "model": reply.model, "finish_reason": reply.finish_reason,
            "call_id": reply.call_id,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]}))
        return reply

    def _cut(self, reply: ChatReply) -> None:
        """A reply cut at max_tokens is half a JSON object at best: never parse it, ask again shorter."""
        max_tokens = getattr(getattr(self.model, "profile", None), "max_tokens", None)
        limit = f"max_tokens {max_tokens}" if max_tokens else "the endpoint's max_tokens"
        self.meter.last_failure = f"the reply was cut off at {limit}"
        self.transcript.write("cut", chars=len(reply.text or "") + sum(len(c.arguments) for c in reply.tool_calls),
                              tool_calls=[c.name for c in reply.tool_calls])
        self._emit(Log(self.ctx.session_id, level="warning",
                       message=f"{self.role} ({self.ctx.task.id}/{self.trial_id or 'analysis'}): reply cut off "
                               f"at {limit}; asked again for a shorter one"))
        self._append({"role": "assistant", "content": CUT_PLACEHOLDER})
        self._append({"role": "user", "content": CUT_ASK.format(limit=limit)})

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.transcript.write("message", message=message)

    async def _handle(self, reply: ChatReply) -> dict[str, Any] | None:
        # "" rather than null: some local servers reject a null content next to tool calls.
        assistant: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
        if reply.tool_calls:
            assistant["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.tool_calls]
        self._append(assistant)
        if not reply.tool_calls:
            self.meter.last_failure = "the reply called no tool"
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
                self.meter.last_failure = f"{call.name}: " + " ".join(text.split())[:160]
                self.transcript.write("tool_error", call_id=call.id, name=call.name)
        return submitted


def _json_object_text(text: str) -> str:
    """The JSON object in a reply, without a Markdown fence some models wrap it in."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip() or "{}"


def dumps_args(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False)
