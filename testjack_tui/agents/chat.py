"""Chat models the agent runtime talks to: one reply per call, text plus tool calls.

`OpenAIChatModel` streams chat completions from any OpenAI-compatible endpoint (OpenAI,
vLLM, Ollama, llama.cpp). Tool calls are assembled from their streamed fragments by index
ourselves, because several local servers stream them in ways the strict helper rejects.
Usage comes from the stream's usage chunk; when a server leaves it out we estimate it and
say so. Every attempt, retries included, asks the ledger first, so retries cannot overrun
the budget.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from testjack_tui.config import Price, Profile
from testjack_tui.engine.roles import Ledger

from .caps import RequestCount
from .errors import AgentError, EndpointError

if TYPE_CHECKING:
    # openai (and the httpx under it) take about a second to import: only a session that talks
    # to a model pays it, not the scripted agent, the operator or `list`/`report`/`export`.
    import openai
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

OnText = Callable[[str], None]
CHARS_PER_TOKEN = 4  # the usual rough rule for English text and code


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it (may be malformed)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ChatReply:
    text: str
    tool_calls: list[ToolCallRequest]
    usage: Usage
    usd: float
    model: str
    finish_reason: str | None = None
    call_id: str = ""
    attempts: int = 1


@dataclass
class CallMeter:
    """Binds the ledger to who is calling, so the model can check and record each attempt."""

    ledger: Ledger
    role: str
    task_id: str = ""
    trial_id: str | None = None
    on_record: Callable[[dict[str, Any]], None] | None = None  # e.g. the transcript
    # Where a request stands ({"state": "waiting" | "streaming" | "retrying" | ..., ...}); the
    # runtime turns it into AgentProgress events so the CLI and TUI show every wait.
    on_progress: Callable[[dict[str, Any]], None] | None = None
    requests: RequestCount | None = None  # the role's request cap; None: uncounted (recordings)
    last_failure: str = ""  # why the last attempt failed, for the line that says the role gave up

    def progress(self, state: str, **data: Any) -> None:
        if self.on_progress is not None:
            try:
                self.on_progress({"state": state, **data})
            except Exception:  # a renderer's failure must not stop a request
                pass

    def check(self, model: str, max_tokens: int | None) -> None:
        if self.requests is not None:
            self.requests.take(self.last_failure)
        self.ledger.check(self.role, model, max_tokens)

    def record(self, model: str, usage: Usage, usd: float, call_id: str) -> None:
        self.ledger.record(self.role, model, usage.prompt_tokens, usage.completion_tokens, usd,
                           usage.estimated, call_id=call_id, task_id=self.task_id,
                           trial_id=self.trial_id)
        if self.on_record:
            self.on_record({"model": model, "prompt_tokens": usage.prompt_tokens,
                            "completion_tokens": usage.completion_tokens, "usd": usd,
                            "estimated": usage.estimated, "call_id": call_id})


class ChatModel(Protocol):
    label: str
    model: str
    # "auto" structured output: whether the endpoint took response_format (None: not yet known)
    json_schema_supported: bool | None

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, on_text: OnText,
                       meter: CallMeter) -> ChatReply: ...


def estimate_tokens(text: str) -> int:
    return max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN) if text else 0


class _Retryable(Exception):
    """One attempt failed in a way worth retrying; `received` chars were streamed before it."""

    def __init__(self, message: str, received: int = 0, retry_after: float | None = None):
        super().__init__(message)
        self.received = received
        self.retry_after = retry_after


@dataclass
class _Assembly:
    """Accumulates one streamed reply."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None
    last_index: int = -1

    def received(self) -> int:
        return sum(map(len, self.text)) + sum(len("".join(c["args"])) for c in self.calls.values())

    def add_tool_fragment(self, fragment: ChoiceDeltaToolCall) -> None:
        index = getattr(fragment, "index", None)
        frag_id = getattr(fragment, "id", None)
        if index is None:
            # Some servers omit the index: a new id starts a new call, otherwise continue the last.
            if frag_id and (self.last_index < 0 or self.calls[self.last_index]["id"] not in ("", frag_id)):
                index = self.last_index + 1
            else:
                index = max(self.last_index, 0)
        entry = self.calls.setdefault(index, {"id": "", "name": "", "args": []})
        self.last_index = max(self.last_index, index)
        if frag_id:
            entry["id"] = frag_id
        function = getattr(fragment, "function", None)
        if function is not None:
            if getattr(function, "name", None):
                # Names arrive whole in practice; a few servers repeat them on every fragment.
                if not entry["name"].endswith(function.name):
                    entry["name"] += function.name
            if getattr(function, "arguments", None):
                entry["args"].append(function.arguments)

    def tool_calls(self) -> list[ToolCallRequest]:
        result = []
        for index in sorted(self.calls):
            entry = self.calls[index]
            call_id = entry["id"] or f"call_{uuid.uuid4().hex[:12]}"
            result.append(ToolCallRequest(call_id, entry["name"], "".join(entry["args"])))
        return result


def _messages_size(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, default=str)) + len(json.dumps(tools, default=str))


class OpenAIChatModel:
    """Streaming chat completions with tools over an OpenAI-compatible endpoint."""

    heartbeat = 10.0  # seconds between "still waiting" / "still streaming" progress reports

    def __init__(self, profile: Profile, price: Price | None = None,
                 client: openai.AsyncOpenAI | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 limiter: asyncio.Semaphore | None = None):
        self.profile = profile
        self.model = profile.model
        self.label = profile.label
        self.price = price
        self._sleep = sleep
        # At most `concurrency` requests at once on this profile (shared by the roles using it).
        self.limiter = limiter or asyncio.Semaphore(max(1, profile.concurrency))
        self.structured_output = profile.structured_output
        self.json_schema_supported: bool | None = None  # learnt from the endpoint ("auto")
        # Retries are ours (so each one passes the budget check); the client must not retry.
        import openai
        self.client = client or openai.AsyncOpenAI(
            base_url=profile.base_url, api_key=profile.api_key(), timeout=profile.timeout,
            max_retries=0)

    async def aclose(self) -> None:
        await self.client.close()

    def cost(self, usage: Usage) -> float:
        return self.price.cost(usage.prompt_tokens, usage.completion_tokens) if self.price else 0.0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, on_text: OnText,
                       meter: CallMeter, response_format: dict[str, Any] | None = None) -> ChatReply:
        attempt = 0
        prompt_estimate = estimate_tokens("x" * _messages_size(messages, tools))
        attempts = self.profile.max_retries + 1
        while True:
            attempt += 1
            meter.check(self.model, self.profile.max_tokens)
            call_id = f"llm_{uuid.uuid4().hex[:12]}"
            try:
                async with self.limiter:
                    reply = await self._attempt(messages, tools, on_text, prompt_estimate, meter,
                                                attempt, attempts, response_format)
            except _Retryable as exc:
                meter.last_failure = str(exc)
                if exc.received:
                    # Tokens were generated before the stream broke: count them (estimated).
                    partial = Usage(prompt_estimate, estimate_tokens("x" * exc.received), True)
                    meter.record(self.model, partial, self.cost(partial), call_id)
                if attempt > self.profile.max_retries:
                    meter.progress("failed", model=self.label, attempt=attempt, max_attempts=attempts,
                                   reason=str(exc))
                    if isinstance(exc, _Unreachable):
                        raise EndpointError(f"{exc} (tried {attempt} times)") from None
                    raise AgentError(f"{self._where()}: gave up after {attempt} attempts: {exc}") from None
                delay = self.profile.retry_backoff * (2 ** (attempt - 1))
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, 60.0))
                meter.progress("retrying", model=self.label, attempt=attempt, max_attempts=attempts,
                               reason=str(exc), delay=delay, received=exc.received)
                await self._sleep(delay)
                continue
            except StructuredOutputUnsupported:
                raise
            except Exception as exc:
                meter.progress("failed", model=self.label, attempt=attempt, max_attempts=attempts,
                               reason=str(exc))
                raise
            meter.last_failure = ""
            reply.call_id = call_id
            reply.attempts = attempt
            reply.usd = self.cost(reply.usage)
            meter.record(self.model, reply.usage, reply.usd, call_id)
            return reply

    def _where(self) -> str:
        return f"endpoint {self.profile.base_url} (profile {self.profile.name!r}, model {self.model!r})"

    async def _heartbeat(self, meter: CallMeter, acc: "_Assembly", started: float, attempt: int,
                         attempts: int) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.heartbeat)
            received = acc.received()
            meter.progress("streaming" if received else "waiting", model=self.label,
                           elapsed=loop.time() - started, received=received, attempt=attempt,
                           max_attempts=attempts)

    async def _attempt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: OnText,
                       prompt_estimate: int, meter: CallMeter, attempt: int = 1, attempts: int = 1,
                       response_format: dict[str, Any] | None = None) -> ChatReply:
        import httpx
        import openai
        acc = _Assembly()
        kwargs: dict[str, Any] = dict(model=self.model, messages=messages, stream=True,
                                      stream_options={"include_usage": True},
                                      max_tokens=self.profile.max_tokens,
                                      temperature=self.profile.temperature)
        if tools:
            kwargs["tools"] = tools
        if response_format:
            kwargs["response_format"] = response_format
        stream = None
        loop = asyncio.get_running_loop()
        started = loop.time()
        meter.progress("waiting", model=self.label, elapsed=0.0, attempt=attempt, max_attempts=attempts)
        beat = asyncio.ensure_future(self._heartbeat(meter, acc, started, attempt, attempts))
        first = True
        try:
            stream = await self.client.chat.completions.create(**kwargs)
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    u = chunk.usage
                    acc.usage = Usage(int(u.prompt_tokens or 0), int(u.completion_tokens or 0), False)
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            acc.text.append(delta.content)
                            on_text(delta.content)
                        for fragment in delta.tool_calls or ():
                            acc.add_tool_fragment(fragment)
                        if first and acc.received():
                            first = False
                            meter.progress("streaming", model=self.label, elapsed=loop.time() - started,
                                           received=acc.received(), attempt=attempt, max_attempts=attempts)
                    if choice.finish_reason:
                        acc.finish_reason = choice.finish_reason
        except openai.BadRequestError as exc:
            # Any 400 to the structured request (an unknown field, tools history without tools,
            # a schema the server cannot compile): fall back to the submit tool; a 400 that has
            # nothing to do with it comes back on the tool path and is reported there.
            if response_format:
                raise StructuredOutputUnsupported(_brief(exc)) from None
            raise AgentError(f"{self._where()}: HTTP {exc.status_code}: {_brief(exc)}") from None
        except openai.NotFoundError as exc:
            raise EndpointError(f"{self._where()}: model not found or wrong URL ({_brief(exc)})") from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EndpointError(f"{self._where()}: key rejected; set ${self.profile.api_key_env} "
                                f"({_brief(exc)})") from None
        except openai.RateLimitError as exc:
            raise _Retryable(f"rate limited (429): {_brief(exc)}", acc.received(),
                             _retry_after(exc)) from None
        except openai.InternalServerError as exc:
            raise _Retryable(f"server error {exc.status_code}: {_brief(exc)}", acc.received(),
                             _retry_after(exc)) from None
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409) or exc.status_code >= 500:
                raise _Retryable(f"HTTP {exc.status_code}: {_brief(exc)}", acc.received()) from None
            raise AgentError(f"{self._where()}: HTTP {exc.status_code}: {_brief(exc)}") from None
        except openai.APITimeoutError:
            raise _Retryable(f"no reply within the profile's timeout ({self.profile.timeout:g}s)",
                             acc.received()) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            if isinstance(cause, httpx.ConnectError) and not acc.received():
                raise _Unreachable(f"{self._where()}: cannot connect ({cause})") from None
            raise _Retryable(f"connection failed: {cause}", acc.received()) from None
        except httpx.TimeoutException:
            raise _Retryable(f"stream stalled past {self.profile.timeout:g}s", acc.received()) from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise _Retryable(f"stream dropped: {type(exc).__name__}: {exc}", acc.received()) from None
        except openai.APIError as exc:  # an error event inside the stream
            raise _Retryable(f"stream error: {_brief(exc)}", acc.received()) from None
        finally:
            beat.cancel()
            if stream is not None:
                # A broken or abandoned stream must not leave its connection open.
                with contextlib.suppress(Exception):
                    await stream.close()
        if acc.finish_reason is None:
            # The server closed the stream before saying the reply was complete.
            raise _Retryable("stream ended before the reply was finished", acc.received())
        text = "".join(acc.text)
        calls = acc.tool_calls()
        usage = acc.usage
        if usage is None:
            completion = estimate_tokens(text + "".join(c.name + c.arguments for c in calls))
            usage = Usage(prompt_estimate, completion, estimated=True)
        meter.progress("done", model=self.label, elapsed=loop.time() - started, received=acc.received(),
                       attempt=attempt, max_attempts=attempts)
        return ChatReply(text=text, tool_calls=calls, usage=usage, usd=0.0, model=self.model,
                         finish_reason=acc.finish_reason)


class _Unreachable(_Retryable):
    pass


class StructuredOutputUnsupported(AgentError):
    """The endpoint rejected `response_format`; the caller falls back to the submit tool."""



def _brief(exc: Exception) -> str:
    message = getattr(exc, "message", None) or str(exc)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            message = inner["message"]
        elif isinstance(body.get("message"), str):
            message = body["message"]
    return " ".join(str(message).split())[:300]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


async def probe_endpoint(profile: Profile) -> str:
    """One line for `doctor`: can we reach the endpoint, and does it list the model?

    Raises EndpointError with a one-line reason when it cannot be used.
    """
    import openai
    client = openai.AsyncOpenAI(base_url=profile.base_url, api_key=profile.api_key(),
                                timeout=min(profile.timeout, 15.0), max_retries=0)
    where = f"endpoint {profile.base_url} (profile {profile.name!r})"
    try:
        models = [m.id async for m in client.models.list()]
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise EndpointError(f"{where}: key rejected; set ${profile.api_key_env} ({_brief(exc)})") from None
    except openai.APIConnectionError as exc:
        raise EndpointError(f"{where}: cannot connect ({exc.__cause__ or exc})") from None
    except openai.APIStatusError as exc:
        # Some servers have no /models route; reaching them at all is what we can tell.
        return f"{where}: reachable (no model list: HTTP {exc.status_code})"
    finally:
        await client.close()
    if profile.model not in models:
        shown = ", ".join(models[:8]) + (" ..." if len(models) > 8 else "")
        raise EndpointError(f"{where}: model {profile.model!r} is not offered (models: {shown or 'none'})")
    return f"{where}: reachable, model {profile.model!r} available"

