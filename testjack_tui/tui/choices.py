"""What the Selection screen offers: agent choices per role, samplers, and the form → config."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


BUILTIN_AGENTS = ("scripted", "operator")
ROLES = (("audit", "Audit agent"), ("reviewer", "Reviewer"), ("task_analysis", "Task analysis"))


def profile_names() -> list[str]:
    """Endpoint profiles from the user's config (always includes "default")."""
    try:
        from testjack_tui.config import load_config
        return sorted(load_config().profiles)
    except Exception:  # noqa: BLE001 - a broken config is reported when a session uses it
        return []


def agent_choices() -> list[str]:
    # "openai" = the profile the config assigns to the role (see agents/factory.py).
    names = list(BUILTIN_AGENTS) + ["openai"]
    return names + [p for p in profile_names() if p not in names]


def samplers() -> list[str]:
    try:
        from testjack_tui.engine.samplers import SAMPLERS
        return SAMPLERS.names()
    except Exception:  # noqa: BLE001
        return ["uniform"]


@dataclass
class SessionForm:
    """The Selection screen's settings, as typed; `config_kwargs` turns them into SessionConfig args."""

    mode: str = "lightweight"
    rounds: str = "3"
    k_repairs: str = "3"
    sampler: str = "uniform"
    seed: str = "0"
    usd: str = ""
    tokens: str = ""
    seconds: str = ""
    test_runs: str = ""
    agents: dict[str, str] = field(default_factory=lambda: {r: "scripted" for r, _ in ROLES})
    step: bool = False
    auto_approve: bool = True
    reuse_runs: str = ""  # an earlier session of the benchmark whose runs to take (tui/lenders.py); not remembered

    def config_kwargs(self, benchmark: str, tasks: list[str] | None,
                      trials: list[str] | None) -> dict[str, Any]:
        """Raises ValueError('field: problem') on a bad value."""
        from testjack_tui.tui.screens.dialogs import parse_limit

        def whole(name: str, text: str, minimum: int = 0) -> int:
            try:
                value = int(text.strip())
            except ValueError:
                raise ValueError(f"{name}: '{text}' is not a whole number") from None
            if value < minimum:
                raise ValueError(f"{name}: must be at least {minimum}")
            return value

        return {
            "benchmark": benchmark,
            "tasks": tasks,
            "trials": trials,
            "mode": self.mode,
            "rounds": whole("rounds per task", self.rounds, 1),
            "k_repairs": whole("k repairs", self.k_repairs, 0),
            "sampler": self.sampler,
            "seed": whole("seed", self.seed, 0),
            "budget": {name: parse_limit(getattr(self, name), name)
                       for name in ("usd", "tokens", "seconds", "test_runs")},
            "agents": dict(self.agents),
            "step": self.step,
            "auto_approve": self.auto_approve,
            "reuse_runs": self.reuse_runs or None,
        }
