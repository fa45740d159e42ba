"""What a session is handed rather than imports (`SessionDeps`): how to build the agent roles
and the tools an agent session gets, the sandbox backend, the hooks, the user's config.

The application's composition root builds the real ones (`testjack_tui.compose.session_deps`)
and the front ends pass them to `AuditSession.create` / `open`; tests build their own. Nothing
is installed globally: the engine never imports the agents package, and what it is not given
it does not have (a session asked for roles with neither `roles` nor `roles_factory` says so).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from testjack_tui.model import Benchmark
from testjack_tui.sandbox.backend import BackendFactory

from .env import ToolsFactory
from .hooks import Hooks
from .roles import Approver, RoleSet
from .sampling import Samplers

if TYPE_CHECKING:
    from testjack_tui.config import Config


class RolesFactory(Protocol):
    """(agent choices per role, benchmark, the user's config) -> the roles (audit, reviewer,
    task_analysis, ...); built by the composition root from the agents package."""

    def __call__(self, agents: dict[str, str], benchmark: Benchmark, config: Config | None = None, /
                 ) -> RoleSet: ...


@dataclass(frozen=True)
class SessionDeps:
    """One session's collaborators. `roles` (built already, e.g. by `plan_session`) wins over
    `roles_factory`; `sandbox_factory` None: the backend the session's config names. Frozen:
    what a session was handed does not change under it (`dataclasses.replace` makes another)."""

    benchmark: Benchmark | None = None  # None: loaded from the config's path when the session runs
    roles: RoleSet | None = None
    roles_factory: RolesFactory | None = None
    tools_factory: ToolsFactory | None = None
    sandbox_factory: BackendFactory | None = None
    hooks: Hooks = field(default_factory=Hooks)
    app_config: Config | None = None  # None: the user's config file, read when first needed
    approver: Approver | None = None  # answers approvals instead of the operator (--verdicts)
    operator: bool = False  # a person answers at the TUI: verdicts that need one go there
    samplers: Samplers = field(default_factory=lambda: _samplers())  # what `--sampler` may name


def _samplers() -> Samplers:
    from .samplers import SAMPLERS  # the sampler's module: only when a session is made

    return SAMPLERS
