"""Build the three roles from the session's agent choices.

Each value of `agents` is "scripted" (replay the benchmark's agent-scripts, labelled
"scripted (offline demo)"), "operator" (the human), "openai" (the profile the config
assigns to the role, else "default") or the name of a profile in the config.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testjack_tui.config import Config, load_config
from testjack_tui.errors import InputError

from .chat import OpenAIChatModel
from .operator import OperatorAuditAgent, OperatorReviewer
from .roles_llm import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst
from .scripted import ScriptedAuditAgent, ScriptedReviewer, ScriptedTaskAnalyst

ROLE_NAMES = ("audit", "reviewer", "task_analysis")


@dataclass
class Roles:
    audit: Any  # roles.AuditAgent
    reviewer: Any  # roles.Reviewer
    task_analysis: Any  # roles.TaskAnalyst

    async def aclose(self) -> None:
        """Close endpoint clients; call when the session ends."""
        for role in {id(r): r for r in (self.audit, self.reviewer, self.task_analysis)}.values():
            closer = getattr(role, "aclose", None)
            if closer is not None:
                await closer()

    @property
    def labels(self) -> dict[str, str]:
        return {"audit": self.audit.label, "reviewer": self.reviewer.label,
                "task_analysis": self.task_analysis.label}


def _root(benchmark: Any) -> Path:
    root = getattr(benchmark, "root", benchmark)
    return Path(root)


def _chat_model(config: Config, role: str, choice: str) -> OpenAIChatModel:
    profile = config.profile_for_role(role) if choice == "openai" else config.profile(choice)
    return OpenAIChatModel(profile, config.price(profile.model))


def make_roles(agents: dict[str, str], benchmark: Any, config: Config | None = None) -> Roles:
    unknown = set(agents) - set(ROLE_NAMES)
    if unknown:
        raise InputError("agents", ", ".join(sorted(unknown)), f"unknown role (roles: {', '.join(ROLE_NAMES)})")
    choices = {role: (agents.get(role) or "scripted") for role in ROLE_NAMES}
    root = _root(benchmark)
    scripted = sorted(role for role, choice in choices.items() if choice == "scripted")
    if scripted and not (root / "agent-scripts").is_dir():
        # before any world is built: the scripted agents can only replay recordings
        raise InputError(root / "agent-scripts", None,
                         f"the scripted agent ({', '.join(scripted)}) replays recorded agent behaviour and this "
                         "benchmark has no recordings: use --agent openai, a profile name, or operator "
                         "(--candidate FILE)")
    operator = OperatorAuditAgent()
    built: dict[str, Any] = {}
    for role, choice in choices.items():
        if choice == "scripted":
            kind = {"audit": ScriptedAuditAgent, "reviewer": ScriptedReviewer,
                    "task_analysis": ScriptedTaskAnalyst}[role]
            built[role] = kind(root)
        elif choice == "operator":
            # One queue for the operator's candidates, whichever role asks for them.
            built[role] = OperatorReviewer() if role == "reviewer" else operator
        else:
            config = config or load_config()
            model = _chat_model(config, role, choice)
            kind = {"audit": LLMAuditAgent, "reviewer": LLMReviewer, "task_analysis": LLMTaskAnalyst}[role]
            built[role] = kind(model)
    return Roles(**built)
