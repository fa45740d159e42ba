"""What a session is asked to do: the benchmark, the scope, the method's knobs and the budget.

Stored as JSON in the session's database, so `resume` and `report` see exactly what ran.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum

from testjack_tui.sandbox.backend import BACKENDS
from testjack_tui.errors import InputError
from .records import JsonObject, member


class Mode(StrEnum):
    """How a session audits (stored, shown and typed as these words)."""

    LIGHTWEIGHT = "lightweight"  # Algorithm 1: sample, audit, share witnesses
    PER_TRIAL = "per-trial"  # every passing trial audited on its own


ROLE_NAMES = ("audit", "reviewer", "task_analysis")


@dataclass
class BudgetLimits:
    """Session-wide limits; None means unlimited. Rounds per task live on SessionConfig."""

    usd: float | None = None
    tokens: int | None = None
    seconds: float | None = None  # wall time the session has spent running (summed over resumes)
    test_runs: int | None = None  # test executions in containers

    def to_dict(self) -> JsonObject:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: JsonObject | None) -> "BudgetLimits":
        data = data or {}
        return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


def mode_named(word: object) -> Mode:
    """The mode a word names; any other word is one line naming the field."""
    return member(Mode, word, "session config", "mode")


def default_agents() -> dict[str, str]:
    return {"audit": "scripted", "reviewer": "scripted", "task_analysis": "scripted"}


@dataclass
class SessionConfig:
    benchmark: str  # path of the benchmark folder (or file) to load
    tasks: list[str] | None = None  # None: every task
    trials: list[str] | None = None  # None: every officially passing trial
    mode: Mode = Mode.LIGHTWEIGHT
    rounds: int = 3  # audit rounds per task in the lightweight loop
    k_repairs: int = 3  # repair attempts after the first candidate (the paper's k); a repair sees R[G]'s failure output
    sampler: str = "uniform"
    seed: int = 0
    budget: BudgetLimits = field(default_factory=BudgetLimits)
    agents: dict[str, str] = field(default_factory=default_agents)
    step: bool = False  # pause before each round and after each reviewer verdict
    auto_approve: bool = True  # False: every reviewer verdict waits for the operator
    task_analysis: bool = True  # run the solution-blind task-analysis role first (lightweight mode)
    # Where witnesses are replayed: "all" passing trials of the task (so the ambiguity rule can
    # measure rho over the whole corpus) or only the "active" set (the paper's cheapest loop).
    replay_scope: str = "all"
    parallel_tasks: int | None = None  # tasks working at once (waits for a person hold none); None: CPUs
    label: str = ""  # free text shown in session lists
    # Trials the lightweight loop audits first, in this order, before it samples (the operator
    # chose them: `audit --agent operator --trial ID`); the corpus stays every passing trial.
    audit_first: list[str] | None = None
    # Mutation evidence: at most this many mutants of each audited trial's added lines run under
    # T0 (one budgeted test run each); 0 turns it off. See engine/detectors/mutation.py.
    mutants: int = 0
    # No-reference mode for every task: ignore G and audit against an independent implementation
    # G′ written from P (tasks without G get that mode anyway). See engine/no_reference.py.
    no_reference: bool = False
    # Where sandbox operations run: "local" podman (default) or "ray" (a Ray cluster's nodes,
    # each running podman); the engine and the LLM calls stay in this process either way.
    backend: str | None = None  # None: the config file's [sandbox] backend, else "local"
    ray_address: str | None = None  # "auto", "ray://HOST:10001", "HOST:6379"; None: a local Ray
    # Another session (id) whose stored test runs this one takes instead of running them again
    # (engine/runner.py): a per-trial audit after a lightweight one runs only what that one did not.
    reuse_runs: str | None = None

    def __post_init__(self) -> None:
        # A mode given as its word (the CLI's option, the TUI's form, a stored config) is a Mode.
        self.mode = mode_named(self.mode)

    def validate(self) -> "SessionConfig":
        where = "session config"
        if self.rounds < 0:
            raise InputError(where, "rounds", "must not be negative")
        if self.mutants < 0:
            raise InputError(where, "mutants", "must not be negative")
        if self.k_repairs < 0:
            raise InputError(where, "k_repairs", "must not be negative")
        if self.backend is not None and self.backend not in BACKENDS:
            raise InputError(where, "backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.replay_scope not in ("all", "active"):
            raise InputError(where, "replay_scope", "must be 'all' or 'active'")
        for role in self.agents:
            if role not in ROLE_NAMES:
                raise InputError(where, f"agents.{role}", f"unknown role (roles: {', '.join(ROLE_NAMES)})")
        for name, value in dataclasses.asdict(self.budget).items():
            if value is not None and value < 0:
                raise InputError(where, f"budget.{name}", "must not be negative")
        return self

    @property
    def backend_name(self) -> str:
        """The sandbox backend this session runs on (sessions stored before backends: local)."""
        return self.backend or "local"

    def to_dict(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["budget"] = self.budget.to_dict()
        if data["reuse_runs"] is None:  # a session that reuses nothing writes the config it always did
            del data["reuse_runs"]
        return data

    @classmethod
    def from_dict(cls, data: JsonObject) -> "SessionConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["budget"] = BudgetLimits.from_dict(data.get("budget"))
        agents = dict(data.get("agents") or {})  # in the order stored: summary.json shows them so
        for role, name in default_agents().items():
            agents.setdefault(role, name)
        values["agents"] = agents
        return cls(**values)
