"""How the lightweight loop picks the next trial to audit from the active set.

Samplers are pluggable: a `Samplers` set maps a name to a factory, called once per task as
`factory(task, seed, context)`, that returns an object with `pick(active, state) -> Trial`. The
application's set is `testjack_tui.engine.samplers.SAMPLERS`; a session is handed its own
(`SessionDeps.samplers`), so a test adds a sampler with `SAMPLERS.with_(...)`, changing no global.
A sampler must be deterministic given its seed and the sequence of calls: a resumed session
replays the loop from its stored steps and must draw the same trials again.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Protocol

from testjack_tui.errors import InputError
from testjack_tui.model import Task, Trial
from .records import JsonObject
from .records_agent import SuspiciousFeature


@dataclass(frozen=True)
class SampledWitness:
    """A witness confirmed so far, as a sampler sees it."""

    id: str
    requirement: str
    source_trial: str | None  # None: the task analysis's


@dataclass
class SamplerState:
    """What the loop knows when it samples (read-only for samplers)."""

    round: int  # 1-based number of the round about to start
    refuted: list[str] = field(default_factory=list)  # trial ids refuted so far
    clean: list[str] = field(default_factory=list)  # trial ids audited clean so far
    audited: list[str] = field(default_factory=list)  # trial ids audited so far, in order
    witnesses: list[SampledWitness] = field(default_factory=list)  # confirmed witnesses
    # Per trial: witness id -> status ("passed", "failed", ...) from replays so far.
    runs_by_trial: dict[str, dict[str, str]] = field(default_factory=dict)
    evidence: dict[str, JsonObject] = field(default_factory=dict)  # per trial, from evidence providers


@dataclass
class SamplerContext:
    """Fixed per task: every trial of the corpus (passing and reproducible), for clustering."""

    trials: list[Trial]
    # Full evidence (static + ghost branches) of the trials audited so far; the loop fills it
    # as audits start, so a sampler may read it at every pick.
    evidence: dict[str, JsonObject] = field(default_factory=dict)
    # Static detector evidence (Evidence.to_dict(): diff scope, tampering, literal collisions,
    # sniffing) of EVERY trial of the corpus, computed at task start: no containers needed.
    static_evidence: dict[str, JsonObject] = field(default_factory=dict)
    # The task analysis's suspicious-patch features; the loop fills this list in place once the
    # analysis is in, so a sampler reads it at every pick.
    features: list[SuspiciousFeature] = field(default_factory=list)
    # Per model: the share of its trials, over every task of the session, with structural static
    # detector evidence (samplers.model_record); computed once at session start.
    model_record: dict[str, float] = field(default_factory=dict)


class Sampler(Protocol):
    name: str

    def pick(self, active: list[Trial], state: SamplerState) -> Trial: ...


SamplerFactory = Callable[[Task, int, SamplerContext], Sampler]

@dataclass(frozen=True)
class Samplers:
    """Sampler factories by name, with a one-line description each (immutable: `with_` gives
    a new set)."""

    factories: dict[str, tuple[SamplerFactory, str]] = field(default_factory=dict)

    def with_(self, name: str, factory: SamplerFactory, description: str = "") -> Samplers:
        return Samplers({**self.factories, name: (factory, description)})

    def names(self) -> list[str]:
        return sorted(self.factories)

    def descriptions(self) -> dict[str, str]:
        return {name: self.factories[name][1] for name in self.names()}

    def make(self, name: str, task: Task, seed: int, context: SamplerContext) -> Sampler:
        if name not in self.factories:
            raise InputError("session config", "sampler",
                             f"unknown sampler {name!r} (known: {', '.join(self.names())})")
        return self.factories[name][0](task, seed, context)


class UniformSampler:
    """The paper's sampler: uniform over the active set, seeded per task."""

    name = "uniform"

    def __init__(self, task: Task, seed: int, context: SamplerContext | None = None):
        self.rng = random.Random(f"{seed}:{task.id}")

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        if not active:
            raise ValueError("cannot sample from an empty active set")
        # Sort so the draw depends on the seed, not on the order trials were loaded in.
        return self.rng.choice(sorted(active, key=lambda t: t.id))


# The sampler every set has; engine/samplers.py adds the lightweight loop's strategies.
UNIFORM = Samplers().with_("uniform", UniformSampler, "uniform random over the active set (the paper's)")
