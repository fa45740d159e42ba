"""Typed events the engine emits. The TUI and the headless CLI render the same stream.

Every event is a small frozen dataclass with a `session_id`; `kind` is the class name in
snake case (used in logs and JSON). Renderers must ignore kinds they do not know.
"""
from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field
from .records import JsonObject


@dataclass(frozen=True)
class Event:
    session_id: str
    at: float = field(default_factory=time.time, kw_only=True)

    @property
    def kind(self) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()

    def to_dict(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind
        return data


@dataclass(frozen=True)
class SessionStarted(Event):
    benchmark: str
    mode: str  # a config.Mode's word
    tasks: tuple[str, ...]
    agent: str  # label of the audit agent, e.g. "scripted (offline demo)"


@dataclass(frozen=True)
class SessionFinished(Event):
    state: str  # "finished" | "paused" | "stopped" | "failed"
    reason: str = ""


@dataclass(frozen=True)
class TaskChecked(Event):
    task_id: str
    well_formed: bool
    problems: tuple[str, ...] = ()  # e.g. "G fails T0 test x", "f2p test y passes on null"
    vacuous: tuple[str, ...] = ()  # T0 tests that pass on the null world: they verify nothing


@dataclass(frozen=True)
class TaskState(Event):
    """Where a task stands: "queued" (not started: `ahead` tasks go before it), "checking" (its
    T0 check runs), "auditing", "finished", "excluded", "paused", "failed"."""

    task_id: str
    state: str
    ahead: int = 0
    reason: str = ""


@dataclass(frozen=True)
class SlotWait(Event):
    """A task that gave its work slot back while it waited for a person (a decision, a step
    gate, a pause) has work again: "waiting" for a slot (`ahead` tasks go before it; sent again
    when that changes), then "granted" when it has one (engine/slots.py). A task that has not
    started yet is announced by TaskState "queued" instead."""

    task_id: str
    state: str  # "waiting" | "granted"
    ahead: int = 0


@dataclass(frozen=True)
class TrialState(Event):
    """A trial's standing in the loop changed."""

    task_id: str
    trial_id: str
    state: str  # "active" | "sampled" | "refuted" | "clean" | "ambiguous" | "not_reproducible" | "excluded"
    by: str = ""  # witness id that refuted it, or reason


@dataclass(frozen=True)
class RoundStarted(Event):
    task_id: str
    round: int
    trial_id: str
    active: int  # size of the active set when sampled


@dataclass(frozen=True)
class RoundFinished(Event):
    task_id: str
    round: int
    trial_id: str
    witnesses: tuple[str, ...]
    refuted: tuple[str, ...]  # trials refuted by sharing this round's witnesses


@dataclass(frozen=True)
class WorldState(Event):
    """Mirrors testjack_tui.sandbox.api.WorldEvent for the UI."""

    world: str
    container: str
    state: str  # created | running | output | exited | removed | timeout
    command: str = ""
    text: str = ""
    exit_code: int | None = None
    image: str = ""
    node: str = ""  # the cluster node running the container ("" on the local backend)


@dataclass(frozen=True)
class AgentOutput(Event):
    """A chunk of an agent's text or reasoning as it streams."""

    role: str  # "audit" | "task_analysis" | "reviewer"
    task_id: str
    trial_id: str | None
    text: str


@dataclass(frozen=True)
class AgentProgress(Event):
    """Where one role's request to its model stands: so a long wait is never silent.

    state: "waiting" (sent, nothing back yet), "streaming" (tokens arriving), "retrying"
    (the attempt failed; `reason` says why, the next one starts after `delay` seconds),
    "done" or "failed".
    """

    role: str
    task_id: str
    trial_id: str | None
    state: str
    model: str = ""
    elapsed: float = 0.0  # seconds since this attempt was sent
    received: int = 0  # characters of reply received so far in this attempt
    attempt: int = 1
    max_attempts: int = 1
    reason: str = ""
    delay: float = 0.0


@dataclass(frozen=True)
class ToolCall(Event):
    role: str
    task_id: str
    trial_id: str | None
    call_id: str
    name: str
    arguments: str
    result: str = ""  # filled in by ToolResult; kept here for renderers that only see one
    finished: bool = False


@dataclass(frozen=True)
class TestRunFinished(Event):
    task_id: str
    world: str
    test_ids: tuple[str, ...]
    summary: str  # e.g. "3 passed, 1 failed"
    candidate_id: str | None = None
    lent_by: str = ""  # the session whose run this is, taken instead of running it (engine/run_reuse.py)

    def outcome(self) -> str:
        """The run's summary, naming the session it was taken from when nothing ran here (as the
        CLI's progress lines and the TUI show it)."""
        return f"{self.summary} (the run of session {self.lent_by})" if self.lent_by else self.summary


@dataclass(frozen=True)
class CandidateProposed(Event):
    task_id: str
    trial_id: str | None
    candidate_id: str
    path: str
    source: str
    requirement: str
    author: str
    attempt: int


@dataclass(frozen=True)
class CandidateValidated(Event):
    """The oracle's finding for one candidate on one trial."""

    task_id: str
    trial_id: str | None
    candidate_id: str
    reference: str  # passed / failed / error ...
    model: str  # passed / failed / ... ("" for task-analysis candidates before replay)
    outcome: str  # "discriminates" | "passes_both" | "fails_reference" | "error"
    cause: str = ""  # fails_reference: the decisive lines of the reference run's log
    # The earlier candidate with the same test whose run on R[G] answered ("": its own run).
    reference_of: str = ""
    model_of: str = ""  # the same on the trial's world (a witness's replay there, ...)


@dataclass(frozen=True)
class CandidateDropped(Event):
    task_id: str
    trial_id: str | None
    candidate_id: str
    reason: str


@dataclass(frozen=True)
class ReviewerVerdictEvent(Event):
    task_id: str
    trial_id: str | None
    candidate_id: str
    label: str
    requirement: str
    explicit: bool
    reason: str


@dataclass(frozen=True)
class ApprovalRequested(Event):
    request_id: str
    task_id: str
    trial_id: str | None
    candidate_id: str
    label: str
    reason: str


@dataclass(frozen=True)
class ApprovalAnswered(Event):
    request_id: str
    candidate_id: str
    counts: bool
    label: str  # the label that stands
    by: str  # "auto" | "operator"
    reviewer_label: str = ""  # what the reviewer said
    decision: str = ""  # "approved" | "overruled" | "judged" | "auto" (approval.decision_kind)
    note: str = ""
    operator: JsonObject = field(default_factory=dict)  # the operator's requirement/explicit/quote


@dataclass(frozen=True)
class WitnessConfirmed(Event):
    task_id: str
    witness_id: str  # = candidate id
    requirement: str
    explicit: bool
    source_trial: str | None  # trial whose audit produced it; None for task analysis


@dataclass(frozen=True)
class WitnessReplayed(Event):
    """A confirmed witness ran on one trial's model world (one cell of the replay matrix)."""

    task_id: str
    witness_id: str
    trial_id: str
    status: str  # passed / failed / error / not_found ... (runner statuses)
    run_key: str | None = None


@dataclass(frozen=True)
class TrialRefuted(Event):
    task_id: str
    trial_id: str
    witness_id: str
    status: str  # the witness's outcome on the trial


@dataclass(frozen=True)
class RefutationWithdrawn(Event):
    """A refutation turned ambiguous when more trials were measured (ambiguity rule)."""

    task_id: str
    trial_id: str
    witness_id: str
    rho: float


@dataclass(frozen=True)
class BudgetChanged(Event):
    usd: float
    usd_limit: float | None
    tokens: int
    tokens_limit: int | None
    seconds: float
    seconds_limit: float | None
    test_runs: int
    test_runs_limit: int | None
    estimated: bool = False  # some usage was estimated because the endpoint did not report it
    # Of `seconds` (wall time, counted against seconds_limit), how long a person was awaited.
    waiting_seconds: float = 0.0
    unpriced: tuple[str, ...] = ()  # models with no price configured: `usd` leaves them out


@dataclass(frozen=True)
class Paused(Event):
    reason: str  # "budget: usd" | "step" | "operator"
    waiting_for: str = ""  # "next round" | "approval" | "raised limit"
    task_id: str = ""  # the task that waits ("" = the whole session)


@dataclass(frozen=True)
class Released(Event):
    """A step gate announced by `Paused` let its task through (the operator stepped on)."""

    waiting_for: str = ""
    task_id: str = ""


@dataclass(frozen=True)
class ImageProgress(Event):
    """An environment or toolchain image is being built or pulled: on first use this can take
    minutes (apt-get for a language toolchain), so renderers always show it."""

    message: str


@dataclass(frozen=True)
class Log(Event):
    level: str  # "info" | "warning" | "error"
    message: str
