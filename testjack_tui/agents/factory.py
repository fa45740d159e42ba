"""Build the three roles from the session's agent choices.

Each value of `agents` is "scripted" (replay the benchmark's agent-scripts, labelled
"scripted (offline demo)"), "operator" (the human), "openai" (the profile the config
assigns to the role, else "default") or the name of a profile in the config.
"""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testjack_tui.config import DEFAULT_BASE_URL, Config, Profile, config_path, load_config
from testjack_tui.engine.roles import AuditAgent, Explainer, Implementer, Reviewer, TaskAnalyst
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark

from .caps import describe_caps
from .chat import OpenAIChatModel
from .explainer import LLMExplainer, ScriptedExplainer
from .independent import IndependentImplementer, ScriptedImplementer
from .operator import OperatorAuditAgent, OperatorReviewer
from .roles_llm import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst
from .scripted import ScriptedAuditAgent, ScriptedReviewer, ScriptedTaskAnalyst

ROLE_NAMES = ("audit", "reviewer", "task_analysis")


@dataclass
class Roles:
    audit: AuditAgent
    reviewer: Reviewer
    task_analysis: TaskAnalyst
    # Writes G′ for tasks without a reference (no-reference mode); None: such tasks are excluded.
    implementer: Implementer | None = None
    # One paragraph per witness-failure pattern (engine/failure_patterns.py): the reviewer's model.
    explainer: Explainer | None = None

    async def aclose(self) -> None:
        """Close endpoint clients; call when the session ends."""
        roles = (self.audit, self.reviewer, self.task_analysis, self.implementer, self.explainer)
        for role in {id(r): r for r in roles if r is not None}.values():
            closer = getattr(role, "aclose", None)
            if closer is not None:
                await closer()

    @property
    def labels(self) -> dict[str, str]:
        return {"audit": self.audit.label, "reviewer": self.reviewer.label,
                "task_analysis": self.task_analysis.label}


def _root(benchmark: Benchmark | Path | str) -> Path:
    return Path(benchmark) if isinstance(benchmark, (Path, str)) else Path(benchmark.root)


ENV_VARS = "OPENAI_BASE_URL, OPENAI_API_KEY, TESTJACK_MODEL"


def resolve_profile(config: Config, role: str, choice: str) -> Profile:
    """"openai" = the profile [roles] names for the role, else "default"; otherwise a profile name."""
    return config.profile_for_role(role) if choice == "openai" else config.profile(choice)


def _from_file(config: Config, name: str) -> bool:
    return config.document is not None and name in config.document.get("profiles", {})


def check_endpoint(config: Config, profile: Profile) -> None:
    """Fail at once, in one line, when a profile would send requests nowhere useful: the public
    OpenAI endpoint without a key (the usual case: nothing configured at all)."""
    if profile.base_url.rstrip("/") == DEFAULT_BASE_URL and not os.environ.get(profile.api_key_env):
        path = config.path or config_path()
        where = f"profiles.{profile.name}" if _from_file(config, profile.name) else f"(no profile; {ENV_VARS})"
        raise InputError(path, where, f"--agent {profile.name if profile.name != 'default' else 'openai'} has no "
                         f"endpoint: ${profile.api_key_env} is not set and no base_url is configured; set "
                         f"OPENAI_BASE_URL (and OPENAI_API_KEY, TESTJACK_MODEL) for an OpenAI-compatible "
                         f"server, or write [profiles.NAME] and [roles] in {path}")


def describe_role(config: Config, role: str, choice: str) -> str:
    """One line: what a role's agent choice resolves to (shown at start-up)."""
    if choice in ("scripted", "operator"):
        return f"{role}: {choice}"
    profile = resolve_profile(config, role, choice)
    source = (f"profile {profile.name!r} in {config.path or config_path()}" if _from_file(config, profile.name)
              else f"profile 'default' from the environment ({ENV_VARS})")
    key = "set" if os.environ.get(profile.api_key_env) else "not set"
    return (f"{role}: {choice} -> {source}: model {profile.model} at {profile.base_url}, key "
            f"${profile.api_key_env} {key}, timeout {profile.timeout:g}s, max_tokens {profile.max_tokens}, "
            f"temperature {profile.temperature:g}, concurrency {profile.concurrency}, "
            f"results by {profile.structured_output}; caps (requests include retries): {describe_caps(role)}"
            + (f"; repair {describe_caps('repair')}" if role != "reviewer"
               else f"; explainer (the reviewer's model) {describe_caps('explainer')}"))


def _llm(choice: str | None) -> bool:
    return (choice or "scripted") not in ("scripted", "operator")


def shared_reviewer_note(config: Config, agents: dict[str, str]) -> str | None:
    """One line when the reviewer runs the same model on the same endpoint as a role that writes
    the tests it judges: its independence is then nominal, and the operator should know."""
    if not _llm(agents.get("reviewer")):
        return None
    def seat(role: str) -> tuple[str, str]:
        profile = resolve_profile(config, role, agents[role])
        return profile.model, profile.base_url.rstrip("/")

    reviewer = resolve_profile(config, "reviewer", agents["reviewer"])
    same = [role for role in ("task_analysis", "audit") if _llm(agents.get(role)) and seat(role) == seat("reviewer")]
    if not same:
        return None
    return (f"note: the reviewer runs the same model ({reviewer.model} at {reviewer.base_url}) as the tests' "
            f"author ({' and '.join(same)}), so its review is not independent; give it its own profile "
            f"([roles] reviewer = \"NAME\" in {config.path or config_path()}, or --reviewer NAME)")


def _chat_model(config: Config, role: str, choice: str,
                limiters: dict[str, asyncio.Semaphore] | None = None) -> OpenAIChatModel:
    profile = resolve_profile(config, role, choice)
    check_endpoint(config, profile)
    limiter = None
    if limiters is not None:
        limiter = limiters.setdefault(profile.name, asyncio.Semaphore(max(1, profile.concurrency)))
    return OpenAIChatModel(profile, config.price(profile.model), limiter=limiter)


def require_recordings(agents: dict[str, str], benchmark: Benchmark | Path | str) -> None:
    """One clear line, before any world is built, when a role is scripted and the benchmark has
    no recordings for it to replay."""
    root = _root(benchmark)
    scripted = sorted(role for role in ROLE_NAMES if (agents.get(role) or "scripted") == "scripted")
    if scripted and not (root / "agent-scripts").is_dir():
        raise InputError(root / "agent-scripts", None,
                         f"the scripted agent ({', '.join(scripted)}) replays recorded agent behaviour and this "
                         "benchmark has no recordings: use --agent openai, a profile name, or operator "
                         "(--candidate FILE)")


def make_roles(agents: dict[str, str], benchmark: Benchmark | Path | str, config: Config | None = None) -> Roles:
    unknown = set(agents) - set(ROLE_NAMES)
    if unknown:
        raise InputError("agents", ", ".join(sorted(unknown)), f"unknown role (roles: {', '.join(ROLE_NAMES)})")
    choices = {role: (agents.get(role) or "scripted") for role in ROLE_NAMES}
    root = _root(benchmark)
    operator = OperatorAuditAgent()
    limiters: dict[str, asyncio.Semaphore] = {}  # one per profile: its concurrency is shared
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
            model = _chat_model(config, role, choice, limiters)
            llm_kind = {"audit": LLMAuditAgent, "reviewer": LLMReviewer, "task_analysis": LLMTaskAnalyst}[role]
            built[role] = llm_kind(model)
            if role == "task_analysis":
                built["implementer"] = IndependentImplementer(model)
        if role == "task_analysis" and choice == "scripted":
            built["implementer"] = ScriptedImplementer(root)
        if role == "reviewer":  # the cheap explanation call goes to the reviewer's seat
            if choice == "scripted":
                built["explainer"] = ScriptedExplainer()
            elif choice != "operator":
                built["explainer"] = LLMExplainer(model)
    return Roles(**built)
