"""The composition root: connects the engine to the agents and the sandbox tools.

The engine (testjack_tui/engine) never imports the agents; a front end builds a session's
collaborators here (`session_deps`) and hands them to `AuditSession.create` / `open`.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

from testjack_tui.engine.deps import SessionDeps
from testjack_tui.engine.env import EngineEnv, ToolsFactory
from testjack_tui.engine.hooks import Classifier, Hooks
from testjack_tui.engine.roles import Approver, RoleSet, WorldTools
from testjack_tui.engine.sampling import Samplers
from testjack_tui.model import Benchmark, Task, Trial
from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import BackendFactory

if TYPE_CHECKING:
    from testjack_tui.config import Config


def sandbox_tools(env: EngineEnv, task: Task, trial: Trial | None, worlds: dict[str, WorldRef],
                  evidence: Mapping[str, Any] | None) -> WorldTools:
    from testjack_tui.agents.tools import SandboxTools

    # The session's BudgetedBackend: every execution an agent triggers counts against --budget-runs.
    return SandboxTools(env.sandbox, task, trial, worlds, evidence=evidence)


def make_roles(agents: dict[str, str], benchmark: Benchmark, config: Config | None = None) -> RoleSet:
    from testjack_tui.agents.factory import make_roles as build
    from testjack_tui.agents.factory import require_recordings

    require_recordings(agents, benchmark)  # a session's roles: fail before any world is built
    return build(agents, benchmark, config)


def app_hooks(classifier: Classifier | None = None) -> Hooks:
    """The application's hooks: the ambiguity rule classifies witnesses (unless `classifier`
    is given), the detectors give every audited trial its evidence."""
    from testjack_tui.engine.ambiguity import classify_witnesses
    from testjack_tui.engine.detectors import evidence_provider

    return Hooks(classifier=classifier or classify_witnesses, evidence=[evidence_provider])


def session_deps(*, benchmark: Benchmark | None = None, roles: RoleSet | None = None,
                 approver: Approver | None = None, operator: bool = False,
                 app_config: Config | None = None, sandbox_factory: BackendFactory | None = None,
                 hooks: Hooks | None = None, tools_factory: ToolsFactory | None = None,
                 samplers: Samplers | None = None) -> SessionDeps:
    """The application's collaborators for one session: the agents' roles (unless `roles` is
    built already) and tools, its hooks and samplers, and what the caller has at hand."""
    deps = SessionDeps(benchmark=benchmark, roles=roles, roles_factory=make_roles,
                       tools_factory=tools_factory or sandbox_tools, sandbox_factory=sandbox_factory,
                       hooks=hooks or app_hooks(), app_config=app_config, approver=approver,
                       operator=operator)
    return deps if samplers is None else dataclasses.replace(deps, samplers=samplers)
