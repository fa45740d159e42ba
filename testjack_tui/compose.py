"""The composition root: connects the engine to the agents and the sandbox tools.

The engine (testjack_tui/engine) never imports the agents; the CLI and the TUI call
`install()` once at start-up, and the engine takes its roles and tools from there.
"""
from __future__ import annotations

from typing import Any

from testjack_tui.engine.wiring import Wiring, install_wiring


def sandbox_tools(env: Any, task: Any, trial: Any, worlds: dict[str, Any], evidence: Any) -> Any:
    from testjack_tui.agents.tools import SandboxTools

    # The session's BudgetedBackend: every execution an agent triggers counts against --budget-runs.
    return SandboxTools(env.sandbox, task, trial, worlds, evidence=evidence)


def make_roles(agents: dict[str, str], benchmark: Any, config: Any = None) -> Any:
    from testjack_tui.agents.factory import make_roles as build
    from testjack_tui.agents.factory import require_recordings

    require_recordings(agents, benchmark)  # a session's roles: fail before any world is built
    return build(agents, benchmark, config)


def install() -> None:
    install_wiring(Wiring(roles_factory=make_roles, tools_factory=sandbox_tools))
