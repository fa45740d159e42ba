"""Extension points the engine core calls; the "evidence and judgement" features plug in here.

- Witness classification: after every replay the engine asks the classifier which accepted
  witnesses refute and which are ambiguous (the ambiguity rule). Default: every approved-valid
  witness refutes. A module `testjack_tui.engine.ambiguity` defining
  `classify_witnesses(task, witnesses, runs_by_trial, trials)` is picked up automatically;
  `register_classifier(fn)` overrides it explicitly.
- Evidence providers: deterministic per-trial evidence (detectors) computed before a trial is
  audited and handed to the agents (AuditContext.evidence) and to samplers.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from testjack_tui.model import Task, Trial


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
    checklist: tuple[dict[str, Any], ...] = ()  # the audit's checklist items (clause, explicit, quote, ...)


@dataclass(frozen=True)
class WitnessClass:
    label: str  # "refutes" | "ambiguous"
    rho: float | None = None  # fraction of models whose passing trials mostly fail the witness
    note: str = ""  # e.g. the suggested one-sentence clarification of P


# classify(task, witnesses, runs_by_trial, trials) -> {witness_id: WitnessClass | "refutes" | "ambiguous"}
# runs_by_trial: trial id -> witness id -> status of the witness on that trial's model world
# ("passed", "failed", "error", "timed_out", "not_found"); trials: the task's audited corpus.
Classifier = Callable[[Task, list[WitnessRecord], dict[str, dict[str, str]], list[Trial]], dict[str, Any]]

EvidenceProvider = Callable[..., Awaitable[dict[str, Any]]]  # async (sandbox, task, trial, worlds) -> dict

_classifier: Classifier | None = None
_evidence_providers: list[EvidenceProvider] = []


def default_classifier(task: Task, witnesses: list[WitnessRecord],
                       runs_by_trial: dict[str, dict[str, str]], trials: list[Trial]) -> dict[str, WitnessClass]:
    return {w.id: WitnessClass("refutes") for w in witnesses}


def register_classifier(fn: Classifier | None) -> None:
    """Use fn to classify witnesses (None restores automatic discovery)."""
    global _classifier
    _classifier = fn


def get_classifier() -> Classifier:
    if _classifier is not None:
        return _classifier
    try:
        module = importlib.import_module("testjack_tui.engine.ambiguity")
    except ModuleNotFoundError as exc:
        if exc.name != "testjack_tui.engine.ambiguity":
            raise
        return default_classifier
    return getattr(module, "classify_witnesses", default_classifier)


def classify(task: Task, witnesses: list[WitnessRecord], runs_by_trial: dict[str, dict[str, str]],
             trials: list[Trial], classifier: Classifier | None = None,
             signatures: dict[str, dict[str, str]] | None = None) -> dict[str, WitnessClass]:
    """`signatures`: trial id -> witness id -> how the witness failed there (the ambiguity
    rule groups failures by it); given only to a classifier that takes them."""
    if not witnesses:
        return {}
    fn = classifier or get_classifier()
    extra = {"signatures": signatures} if signatures and _takes_signatures(fn) else {}
    raw = fn(task, witnesses, runs_by_trial, trials, **extra) or {}
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


def register_evidence_provider(fn: EvidenceProvider) -> None:
    if fn not in _evidence_providers:
        _evidence_providers.append(fn)


def evidence_providers() -> list[EvidenceProvider]:
    """The registered providers, or else the detectors package's, discovered like the classifier."""
    if _evidence_providers:
        return list(_evidence_providers)
    try:
        module = importlib.import_module("testjack_tui.engine.detectors")
    except ModuleNotFoundError as exc:
        if exc.name != "testjack_tui.engine.detectors":
            raise
        return []
    provider = getattr(module, "evidence_provider", None)
    return [provider] if provider else []


@dataclass
class Hooks:
    """What one session uses (tests pass their own)."""

    classifier: Classifier | None = None  # None: the registered / discovered one
    evidence: list[EvidenceProvider] = field(default_factory=evidence_providers)

    def classify(self, task: Task, witnesses: list[WitnessRecord], runs_by_trial: dict[str, dict[str, str]],
                 trials: list[Trial], signatures: dict[str, dict[str, str]] | None = None
                 ) -> dict[str, WitnessClass]:
        return classify(task, witnesses, runs_by_trial, trials, self.classifier, signatures)
