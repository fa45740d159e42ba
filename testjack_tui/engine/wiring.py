"""The parts the engine is handed rather than imports: how to build the agent roles and the
tools an agent session gets. The application's composition root (testjack_tui/compose.py)
installs the real ones; a session may also be given its own (`roles=`, `roles_factory=`,
`tools_factory=`), as tests do. The engine never imports the agents package."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .env import ToolsFactory
from .roles import RoleSet


@dataclass(frozen=True)
class Wiring:
    # (agent choices per role, benchmark, app config) -> the roles (audit, reviewer, task_analysis, ...)
    roles_factory: Callable[..., RoleSet]
    tools_factory: ToolsFactory


_installed: Wiring | None = None


def install_wiring(value: Wiring) -> None:
    global _installed
    _installed = value


def wiring() -> Wiring:
    if _installed is None:
        raise RuntimeError("no agent wiring installed: call testjack_tui.compose.install() first "
                           "(the CLI and the TUI do), or give the session roles and tools_factory")
    return _installed
