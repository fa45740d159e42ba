"""Scripted mode, labelled "scripted (offline demo)": recorded agent behaviour, replayed.

The scripts beside a benchmark (`agent-scripts/`) record what agents did — commands they
ran, test files they wrote, repairs, reviewer labels — never verdicts. They are replayed by
a chat model that emits the recorded tool calls, through the same runtime, tools, worlds,
ledger and transcripts as the LLM roles: the steps really run in the worlds, candidate
files are really written and submitted, and the engine executes everything after that.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from testjack_tui.engine.roles import AuditContext, Candidate
from testjack_tui.errors import InputError
from testjack_tui.safe_paths import contained

from .chat import CallMeter, ChatReply, OnText, ToolCallRequest, Usage
from .errors import ScriptError
from .roles_llm import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst, chain_version, SessionRole
from .runtime import AgentSession

SCRIPTED_LABEL = "scripted (offline demo)"
STEP_TOOLS = {"run", "read_file", "run_tests", "list_files", "view_diff", "view_official_tests",
              "view_evidence"}
_ARG_ALIASES = {"cmd": "command", "tests": "test_ids", "file": "path"}

Turn = list[tuple[str, dict[str, Any]]]


class ScriptedChatModel:
    """Replays a fixed list of turns; each turn is one assistant reply of tool calls."""

    label = SCRIPTED_LABEL
    model = "scripted"
    json_schema_supported: bool | None = None  # replays submit with the tool, never response_format
    cacheable = False  # nothing to save: replaying the script costs nothing
    _ids = itertools.count(1)

    def __init__(self, turns: list[Turn], source: str):
        self.turns = turns
        self.source = source
        self.position = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, on_text: OnText,
                       meter: CallMeter) -> ChatReply:
        meter.check(self.model, 0)
        if self.position >= len(self.turns):
            last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "tool"), "")
            raise ScriptError(self.source, None, "the recorded script ran out before a valid submit; "
                              f"last tool answer: {' '.join(str(last).split())[:300]}")
        turn = self.turns[self.position]
        self.position += 1
        calls = [ToolCallRequest(f"scripted_{next(self._ids)}", name, json.dumps(args, ensure_ascii=False))
                 for name, args in turn]
        call_id = calls[0].id if calls else f"scripted_{next(self._ids)}"
        usage = Usage(0, 0, estimated=False)
        meter.record(self.model, usage, 0.0, call_id)
        return ChatReply(text="", tool_calls=calls, usage=usage, usd=0.0, model=self.model,
                         finish_reason="tool_calls", call_id=call_id)


class ScriptLibrary:
    """Reads `<benchmark>/agent-scripts/` and checks each file as it is used."""

    def __init__(self, benchmark_root: Path | str):
        self.benchmark_root = Path(benchmark_root)
        self.root = self.benchmark_root / "agent-scripts"

    def inside(self, path: Path, script: Path | None = None, field: str | None = None) -> Path:
        """`path`, checked to stay inside the benchmark folder (a recorded file is benchmark input)."""
        try:
            return contained(self.benchmark_root, path, field, script)
        except InputError as exc:
            raise ScriptError(exc.path, exc.field, exc.message) from None

    def _json(self, path: Path, what: str) -> dict[str, Any]:
        if not path.exists():
            raise ScriptError(path, None, f"no recorded script for {what}")
        try:
            data = json.loads(self.inside(path).read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ScriptError(path, None, f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ScriptError(path, None, "must be a JSON object")
        return data

    def audit(self, task_id: str, trial_id: str) -> tuple[Path, dict[str, Any]]:
        path = self.root / task_id / "audits" / f"{trial_id}.json"
        data = self._json(path, f"the audit of trial {trial_id} (task {task_id})")
        self._check_chains(path, data)
        for i, step in enumerate(data.get("steps", [])):
            if not isinstance(step, dict) or step.get("tool") not in STEP_TOOLS:
                raise ScriptError(path, f"steps[{i}].tool", f"must be one of {sorted(STEP_TOOLS)}")
        return path, data

    def analysis(self, task_id: str) -> tuple[Path, dict[str, Any]]:
        path = self.root / task_id / "analysis.json"
        data = self._json(path, f"the task analysis of {task_id}")
        self._check_chains(path, data)
        return path, data

    def reviews(self, task_id: str) -> tuple[Path, dict[str, Any]]:
        path = self.root / task_id / "reviews.json"
        return path, self._json(path, f"the reviews of task {task_id}")

    def source(self, task_id: str, relative: str, script: Path, field: str) -> str:
        path = self.root / task_id / relative
        if not path.is_file():
            raise ScriptError(script, field, f"candidate file {relative!r} does not exist")
        return self.inside(path, script, field).read_text(encoding="utf-8")

    def _check_chains(self, path: Path, data: dict[str, Any]) -> None:
        chains = data.get("candidates", [])
        if not isinstance(chains, list):
            raise ScriptError(path, "candidates", "must be a list")
        for i, chain in enumerate(chains):
            for key in ("path", "requirement", "versions"):
                if key not in chain:
                    raise ScriptError(path, f"candidates[{i}].{key}", "missing")
            if not isinstance(chain["versions"], list) or not chain["versions"]:
                raise ScriptError(path, f"candidates[{i}].versions", "must be a non-empty list")


def step_call(step: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    args = {_ARG_ALIASES.get(k, k): v for k, v in step.items() if k != "tool"}
    return step["tool"], args


def _first_pass_turns(library: ScriptLibrary, task_id: str, script: Path, data: dict[str, Any],
                      extra_submit: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = [[step_call(step)] for step in data.get("steps", [])]
    submitted = []
    for i, chain in enumerate(data.get("candidates", [])):
        source = library.source(task_id, chain["versions"][0], script, f"candidates[{i}].versions[0]")
        turns.append([("write_test_file", {"path": chain["path"], "source": source})])
        item = {"path": chain["path"], "requirement": chain["requirement"]}
        if chain.get("test_ids"):
            item["test_ids"] = list(chain["test_ids"])
        submitted.append(item)
    turns.append([("submit", {"notes": data.get("notes", ""), "candidates": submitted, **extra_submit})])
    return turns


def _repair_turns(library: ScriptLibrary, task_id: str, script: Path, data: dict[str, Any],
                  candidate: Candidate) -> list[Turn]:
    chain_index, version = chain_version(candidate.id)
    chains = data.get("candidates", [])
    if not 1 <= chain_index <= len(chains):
        raise ScriptError(script, "candidates", f"no recorded chain for candidate {candidate.id}")
    chain = chains[chain_index - 1]
    if version >= len(chain["versions"]):
        return [[("submit", {"give_up": True, "reason": "no further version was recorded"})]]
    source = library.source(task_id, chain["versions"][version], script,
                            f"candidates[{chain_index - 1}].versions[{version}]")
    return [[("write_test_file", {"path": chain["path"], "source": source})],
            [("submit", {"give_up": False, "requirement": chain["requirement"]})]]


def _origin(data: dict[str, Any], chain: int, version: int) -> str:
    try:
        origin: str = data["candidates"][chain - 1]["versions"][version - 1]  # a file name beside the script
        return origin
    except (KeyError, IndexError):
        return ""


class _Recorded(SessionRole):
    """A role replaying `agent-scripts/`: the library, and a placeholder chat model that
    `model_for` replaces per session with the recorded turns."""

    strict = False  # recordings hold what they hold; the schema's required fields are filled in
    counts_requests = False  # a replay sends no requests
    max_steps_default = 200

    def __init__(self, benchmark_root: Path | str, max_steps: int | None = None):
        self.library = ScriptLibrary(benchmark_root)
        super().__init__(ScriptedChatModel([], str(self.library.root)), label=SCRIPTED_LABEL,
                         max_steps=max_steps or self.max_steps_default)

    def _repair_model(self, ctx: AuditContext, script: Path, data: dict[str, Any],
                      candidate: Candidate | None) -> ScriptedChatModel:
        if candidate is None:
            raise ScriptError(script, None, f"a repair in task {ctx.task.id} needs the candidate it repairs")
        return ScriptedChatModel(_repair_turns(self.library, ctx.task.id, script, data, candidate), str(script))


class ScriptedAuditAgent(_Recorded, LLMAuditAgent):
    def _trial_id(self, ctx: AuditContext) -> str:
        if ctx.trial is None:
            raise ScriptError(self.library.root, None, f"an audit of task {ctx.task.id} needs a trial")
        return ctx.trial.id

    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ScriptedChatModel:
        script, data = self.library.audit(ctx.task.id, self._trial_id(ctx))
        if phase == "repair":
            return self._repair_model(ctx, script, data, candidate)
        checklist = data.get("checklist", [])
        extra = {"checklist": checklist, "findings": data.get("findings", []),
                 "nothing_found": bool(data.get("nothing_found", not data.get("candidates")))}
        if data.get("prompt_silent"):
            extra["prompt_silent"] = data["prompt_silent"]
        return ScriptedChatModel(_first_pass_turns(self.library, ctx.task.id, script, data, extra), str(script))

    def origin_for(self, ctx: AuditContext, chain: int, version: int, session: AgentSession) -> str:
        return _origin(self.library.audit(ctx.task.id, self._trial_id(ctx))[1], chain, version)


class ScriptedTaskAnalyst(_Recorded, LLMTaskAnalyst):
    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ScriptedChatModel:
        script, data = self.library.analysis(ctx.task.id)
        if phase == "repair":
            return self._repair_model(ctx, script, data, candidate)
        extra: dict[str, Any] = {}
        # Recordings carry a checklist; its T0 coverage is the traceability matrix's.
        extra["traceability"] = data.get("traceability") or [
            {"requirement": item["clause"], "explicit": bool(item.get("explicit")), "t0_tests": [],
             "coverage": "none" if item.get("covered_by_t0") is False else "full"}
            for item in data.get("checklist") or [] if item.get("covered_by_t0") is not None]
        extra["suspicious_features"] = data.get("suspicious_features", [])
        return ScriptedChatModel(_first_pass_turns(self.library, ctx.task.id, script, data, extra), str(script))

    def origin_for(self, ctx: AuditContext, chain: int, version: int, session: AgentSession) -> str:
        return _origin(self.library.analysis(ctx.task.id)[1], chain, version)


class ScriptedReviewer(_Recorded, LLMReviewer):
    """Replays recorded labels, keyed by the candidate's source file in the scripts."""

    max_steps_default = 5

    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ScriptedChatModel:
        script, data = self.library.reviews(ctx.task.id)
        key = candidate.origin if candidate else ""
        if key not in data:
            raise ScriptError(script, key or "(no origin)",
                              f"no recorded review for candidate {candidate.id if candidate else '?'}")
        entry = data[key]
        label = entry.get("label")
        overall = entry.get("overall") or {"valid": "KEEP_ALL", "invalid": "DROP_ALL"}.get(label, "HUMAN_REVIEW")
        verdict = {"label": label, "requirement": entry.get("requirement", ""),
                   "explicit": bool(entry.get("explicit", False)), "reason": entry.get("reason", ""),
                   "overall": overall, "cases": entry.get("cases", [])}
        if entry.get("quote"):
            verdict["quote"] = entry["quote"]
        return ScriptedChatModel([[("submit", verdict)]], str(script))
