"""One explanation per witness-failure pattern, for the "Why it happens" of refuted trials.

A witness shared across a task refutes trials nobody audited: no audit finding says why they
fail. Trials that fail one witness the same way (the same outcome and the same failing assertion,
addresses and ids aside) share a cause, so the explainer role is asked once per such pattern, at
the end of the task's audit; its paragraph is stored under the pattern's key (the session's
response cache, so a resumed session asks nothing again) and the report reads it for every trial
failing that way. Each call goes through the role's agent session: counted in the budget and the
role's request cap like any other.

    await explain_refutations(loop)        # engine/loop.py audit_task, after the rounds
    stored_explanation(store, witness_id, status, message)   # the report
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from .events import Log
from .explanations import failing_line, missing_surface, run_message
from .roles import BudgetExceeded, Explainer, FailurePattern, RoleSet
from .store import SessionStore
from .records_verdict import Explanation

if TYPE_CHECKING:
    from .env import EngineEnv


class RefutedTask(Protocol):
    """What this module reads of a task's loop (engine/loop.TaskLoop), below it in the floors."""

    @property
    def env(self) -> EngineEnv: ...
    @property
    def task(self) -> Any: ...
    @property
    def witnesses(self) -> Any: ...
    @property
    def refuted(self) -> Any: ...
    @property
    def runs_by_trial(self) -> Any: ...
    @property
    def run_keys(self) -> Any: ...
    @property
    def corpus(self) -> Any: ...
    def _context(self, trial: Any, role: str) -> Any: ...
    async def _close(self, tools: Any) -> None: ...

KEY_PREFIX = "explanation:"
# What differs between two runs of one failure without changing it: object addresses, temp
# paths, durations.
_NOISE = re.compile(r"0x[0-9a-fA-F]+|/tmp/\S+|\b\d+(?:\.\d+)?s\b")


def pattern_key(witness_id: str, status: str, message: str) -> str:
    """The cache key of one way of failing a witness."""
    line = _NOISE.sub("…", failing_line(message))
    digest = hashlib.sha256(json.dumps([witness_id, status, line]).encode()).hexdigest()[:24]
    return KEY_PREFIX + digest


def explainer_of(roles: RoleSet) -> Explainer | None:
    """The session's explainer role; role sets without one (tests' fakes, older wiring) explain
    nothing and the report says so."""
    explainer = getattr(roles, "explainer", None)
    return explainer if explainer is not None and hasattr(explainer, "explain") else None


def stored_explanation(store: SessionStore, witness_id: str, status: str, message: str) -> Explanation | None:
    """The explanation stored for the pattern this failure belongs to, or None."""
    raw = store.get_llm_response(pattern_key(witness_id, status, message))
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return Explanation.from_json(data) if isinstance(data, dict) and data.get("text") else None


def patterns(loop: RefutedTask) -> list[FailurePattern]:
    """Every failure pattern among the loop's refuted trials, trials in id order."""
    store = loop.env.store
    by_id = {w.record.id: w for w in loop.witnesses}
    found: dict[str, FailurePattern] = {}
    for trial_id in sorted(loop.refuted):
        for wid in loop.refuted[trial_id]:
            w = by_id.get(wid)
            if w is None:
                continue
            status = loop.runs_by_trial.get(trial_id, {}).get(wid, "")
            run = store.get_run(loop.run_keys.get((trial_id, wid), "") or "")
            message = run_message(run, w.candidate.path, w.candidate.test_ids)
            key = pattern_key(wid, status, message)
            if key in found:
                p = found[key]
                found[key] = FailurePattern(**{**p.__dict__, "trials": p.trials + (trial_id,)})
                continue
            found[key] = FailurePattern(
                key=key, witness_id=wid, test_path=w.candidate.path, test_source=w.candidate.source,
                requirement=w.record.requirement, quote=w.record.quote if w.record.explicit else "",
                status=status, failing=failing_line(message) or status, message=message,
                trials=(trial_id,), missing=missing_surface(message))
    return list(found.values())


async def explain_refutations(loop: RefutedTask) -> int:
    """Ask the explainer once for each failure pattern not explained yet; returns the calls made.
    A call that fails is logged and skipped (the report falls back to the evidence); a budget
    limit pauses the session like any other."""
    env = loop.env
    explainer = explainer_of(env.roles)
    if explainer is None:
        return 0
    todo = [p for p in patterns(loop) if not env.store.get_llm_response(p.key)]
    calls = 0
    trials = {t.id: t for t in loop.corpus}
    for p in todo:
        trial = trials.get(p.trials[0])
        ctx, tools = loop._context(trial, "explainer")
        calls += 1
        try:
            text = (await explainer.explain(ctx, p)).strip()
        except BudgetExceeded:
            raise  # the session pauses; resuming asks again within a raised limit
        except Exception as exc:  # an explanation is an extra: its failure costs the audit nothing
            env.emit(Log(env.session_id, level="warning",
                         message=f"{loop.task.id}: the explainer gave up on {p.witness_id} "
                                 f"({len(p.trials)} trial(s)): {exc}"))
            continue
        finally:
            await loop._close(tools)
        if text:
            env.store.put_llm_response(p.key, json.dumps(Explanation(
                text, explainer.label, p.trials, p.witness_id, p.failing).to_json()))
    if calls:
        env.emit(Log(env.session_id, level="info",
                     message=f"{loop.task.id}: explained {calls} failure pattern(s) of the refuted trials "
                             "(one call each)"))
    return calls
