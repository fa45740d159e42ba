"""Extension points the engine core calls; the "evidence and judgement" features plug in here.

- Witness classification: after every replay the engine asks the classifier which accepted
  witnesses refute and which are ambiguous (the ambiguity rule). Default: every approved-valid
  witness refutes.
- Evidence providers: deterministic per-trial evidence (detectors) computed before a trial is
  audited and handed to the agents (AuditContext.evidence) and to samplers.

A session is handed its `Hooks` (`SessionDeps.hooks`); the application's, with the ambiguity
rule and the detectors, are `testjack_tui.compose.app_hooks()`. Nothing is registered globally.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, TypeAlias

from testjack_tui.model import Task, Trial

from .records import JsonObject
from .records_agent import ChecklistRow


@dataclass(frozen=True)
class WitnessRecord:
    """An approved-valid witness, as the classifier sees it."""

    id: str
    task_id: str
    path: str
    source: str
    requirement: str
    explicit: bool  # the reviewer (or checklist) could quote P for it
    quote: str = ""
    source_trial: str | None = None  # trial whose audit produced it; None: task analysis
    label: str = "valid"
    round: int | None = None
    checklist: tuple[ChecklistRow, ...] = ()  # the audit's checklist items as it wrote them


@dataclass(frozen=True)
class WitnessClass:
    label: str  # "refutes" | "ambiguous"
    rho: float | None = None  # fraction of models whose passing trials mostly fail the witness
    note: str = ""  # e.g. the suggested one-sentence clarification of P
    # True when no replay can change the label (the ambiguity rule's explicit class): per-trial
    # mode then need not replay the witness on the other trials at once (loop_witnesses.replay_now).
    settled: bool = False


# classify(task, witnesses, runs_by_trial, trials) -> {witness_id: WitnessClass | "refutes" | "ambiguous"}
# runs_by_trial: trial id -> witness id -> status of the witness on that trial's model world
# ("passed", "failed", "error", "timed_out", "not_found"); trials: the task's audited corpus.
# A classifier's answer per witness: a WitnessClass, its label alone, or a plugin's raw
# {label, rho, note} (JSON).
ClassAnswer: TypeAlias = WitnessClass | str | JsonObject
Classifier = Callable[[Task, list[WitnessRecord], dict[str, dict[str, str]], list[Trial]], Mapping[str, ClassAnswer]]

# async (sandbox, task, trial, worlds[, ghost=a measurement of the same world: run_reuse.lent_ghost])
# -> the trial's evidence as stored (Evidence.to_dict())
EvidenceProvider = Callable[..., Awaitable[JsonObject]]


def default_classifier(task: Task, witnesses: list[WitnessRecord],
                       runs_by_trial: dict[str, dict[str, str]], trials: list[Trial]) -> dict[str, WitnessClass]:
    return {w.id: WitnessClass("refutes") for w in witnesses}


def classify(task: Task, witnesses: list[WitnessRecord], runs_by_trial: dict[str, dict[str, str]],
             trials: list[Trial], classifier: Classifier = default_classifier,
             signatures: dict[str, dict[str, str]] | None = None) -> dict[str, WitnessClass]:
    """`signatures`: trial id -> witness id -> how the witness failed there (the ambiguity
    rule groups failures by it); given only to a classifier that takes them."""
    if not witnesses:
        return {}
    extra = {"signatures": signatures} if signatures and _takes_signatures(classifier) else {}
    raw = classifier(task, witnesses, runs_by_trial, trials, **extra) or {}
    out: dict[str, WitnessClass] = {}
    for w in witnesses:
        value = raw.get(w.id, "refutes")
        if isinstance(value, str):
            value = WitnessClass(value)
        elif isinstance(value, dict):
            value = WitnessClass(value.get("label", "refutes"), value.get("rho"), value.get("note", ""))
        if value.label not in ("refutes", "ambiguous"):
            value = WitnessClass("refutes", value.rho, value.note)
        out[w.id] = value
    return out


def _takes_signatures(fn: Classifier) -> bool:
    import inspect

    try:
        return "signatures" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class Hooks:
    """What one session uses (tests pass their own)."""

    classifier: Classifier = default_classifier
    evidence: list[EvidenceProvider] = field(default_factory=list)

    def classify(self, task: Task, witnesses: list[WitnessRecord], runs_by_trial: dict[str, dict[str, str]],
                 trials: list[Trial], signatures: dict[str, dict[str, str]] | None = None
                 ) -> dict[str, WitnessClass]:
        return classify(task, witnesses, runs_by_trial, trials, self.classifier, signatures)
