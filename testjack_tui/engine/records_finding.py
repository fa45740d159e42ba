"""A refuting finding of a trial's verdict (engine/verdicts.judge_trial builds it): the witness,
its runs on both worlds, how to re-run it, the detector signals tied to it, the four-part
explanation with the claims backing it, and who let it count (`decision`, engine/standing.py).

`to_json()` writes the keys each trial's report.json has always shown, in their order
("decision" only once a standing decided it); `from_json` reads a stored standing's back.
"""
from __future__ import annotations

from dataclasses import dataclass

from .detectors.signals import Signal
from .explanations import Claim
from .records import JsonObject, member
from .records_cands import DecidedBy
from .records_verdict import WHERE, DecisionRecord, WitnessRun


@dataclass(frozen=True)
class Finding:
    id: str  # "F-01", ...
    witness_id: str
    source: str  # "task analysis" | "audit of trial <id>"
    path: str
    test_ids: tuple[str, ...]
    test_source: str
    command: str  # the task's runner's own command for the witness
    command_note: str
    reference: WitnessRun
    model: WitnessRun
    requirement: str
    explicit: bool
    quote: str
    klass: str  # ambiguity class: explicit | implicit_necessary | ambiguous ("class")
    rho: float | None
    confidence: float
    approved_by: DecidedBy
    reviewer_reason: str
    tied_signals: tuple[Signal, ...]
    explanations: dict[str, str]  # part -> its paragraph (explanations.PARTS)
    claims: tuple[Claim, ...]
    decision: DecisionRecord | None = None  # None until a standing is decided

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "id": self.id, "witness_id": self.witness_id, "source": self.source, "path": self.path,
            "test_ids": list(self.test_ids), "test_source": self.test_source, "command": self.command,
            "command_note": self.command_note,
            "runs": {"reference": self.reference.to_json(), "model": self.model.to_json()},
            "requirement": self.requirement, "explicit": self.explicit, "quote": self.quote,
            "class": self.klass, "rho": self.rho, "confidence": self.confidence,
            "approved_by": self.approved_by, "reviewer_reason": self.reviewer_reason,
            "tied_signals": [s.to_dict() for s in self.tied_signals],
            "explanations": dict(self.explanations), "claims": [c.to_dict() for c in self.claims]}
        if self.decision is not None:
            out["decision"] = self.decision.to_json()
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> Finding:
        runs = data.get("runs") or {}
        decision = data.get("decision")
        return cls(
            str(data["id"]), str(data["witness_id"]), str(data.get("source") or ""), str(data.get("path") or ""),
            tuple(data.get("test_ids") or ()), str(data.get("test_source") or ""), str(data.get("command") or ""),
            str(data.get("command_note") or ""), WitnessRun.from_json(runs["reference"]),
            WitnessRun.from_json(runs["model"]), str(data.get("requirement") or ""), bool(data.get("explicit")),
            str(data.get("quote") or ""), str(data.get("class") or ""), data.get("rho"),
            float(data.get("confidence") or 0.0),
            member(DecidedBy, data.get("approved_by"), WHERE, "findings.approved_by"),
            str(data.get("reviewer_reason") or ""),
            tuple(Signal.from_dict(s) for s in data.get("tied_signals") or ()),
            {str(k): str(v) for k, v in (data.get("explanations") or {}).items()},
            tuple(Claim.from_dict(c) for c in data.get("claims") or ()),
            None if decision is None else DecisionRecord.from_json(decision))
