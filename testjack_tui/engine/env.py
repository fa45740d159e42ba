"""What one session's loops share (`EngineEnv`) and the factory that binds an agent's tools to
it: the type every step of the engine is handed.

It sits below every module that takes an env (oracle, approval, probes, task checks, the loop)
and imports only the engine's lower floors (roles, store, budget, budgeted, runner, hooks, control), so
none of them has to import the loop to name its argument's type.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from testjack_tui.model import Task, Trial
from testjack_tui.sandbox.api import WorldRef

from .budget import Budget
from .budgeted import BudgetedBackend
from .config import SessionConfig
from .control import Control
from .hooks import Hooks
from .roles import Approver, RoleSet, WorldTools
from .runner import TestRunner
from .sampling import UNIFORM, Samplers
from .store import SessionStore
from .records import JsonObject


class ToolsFactory(Protocol):
    """(session env, task, trial or None for task analysis, worlds by kind, evidence or None) ->
    the tools one agent session gets (the agents' WorldTools, built by the composition root)."""

    def __call__(self, env: EngineEnv, task: Task, trial: Trial | None, worlds: dict[str, WorldRef],
                 evidence: JsonObject | None, /) -> WorldTools: ...


@dataclass
class EngineEnv:
    """Everything one session's loops share."""

    session_id: str
    cfg: SessionConfig
    store: SessionStore
    budget: Budget
    runner: TestRunner
    roles: RoleSet
    approver: Approver
    control: Control
    emit: Callable[[object], None]
    # The one sandbox every step, detector and agent tool runs trial code through (counted).
    sandbox: BudgetedBackend
    hooks: Hooks = field(default_factory=Hooks)
    # (env, task, trial, worlds, evidence) -> WorldTools for one agent session
    tools_factory: ToolsFactory | None = None
    # The operator's queue when someone is at the TUI (None headless): verdicts that must be
    # seen by a person even under auto-approval go there.
    operator_approver: Approver | None = None
    independent_tasks: set[str] = field(default_factory=set)  # audited against G′ (no reference)
    # Static detector evidence per trial id (lightweight mode), computed once by the session.
    static_evidence: dict[str, JsonObject] = field(default_factory=dict)
    # Per model, over every task of the session: share of its trials with structural static
    # evidence (samplers.model_record); the lightweight samplers read it.
    model_record: dict[str, float] = field(default_factory=dict)
    samplers: Samplers = UNIFORM  # the session's (SessionDeps.samplers)
