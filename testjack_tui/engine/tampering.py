"""Proven tampering as trial evidence.

When a run on a trial's world comes back with its canaries wrong (sandbox/canaries.py), the
trial's code forged test reports: that is proof, not a suspicion from reading the diff. It is
stored per run (SessionStore.canary_checks) and surfaces in the trial's evidence as a high,
structural `harness_tampering` signal of kind `canary_tampering`, which the verdict rules read
like any other structural signal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, overload

from .detectors.signals import Detector, Severity, Signal
from .records import JsonObject
from .records_runs import CanaryCheck, CanaryVerdict

if TYPE_CHECKING:
    from .store import SessionStore

CANARY_KIND = "canary_tampering"
# Unproven tampering evidence: a run's channels could not be made to agree (a process outlived
# the runner, our own run timed out where the report passed; sandbox/channels.py).
CHANNEL_DOUBT_KIND = "channel_doubt"


def canary_signals(store: SessionStore, trial_id: str) -> list[Signal]:
    """Signals for the trial's proven tampering, and for channel doubts (`channel_doubt_signal`)."""
    out = []
    for check in store.canary_checks(trial_id=trial_id):
        if check.verdict != CanaryVerdict.TAMPERED:
            doubt = channel_doubt_signal(check)
            if doubt:
                out.append(doubt)
            continue
        what = "; ".join(check.problems) or "a canary came out wrong"
        out.append(Signal(Detector.HARNESS_TAMPERING, CANARY_KIND, "", None, "",
                          f"proven tampering in a run on {check.world}: {what}; the run's results are void",
                          Severity.HIGH, structural=True, related=check.world, value=check.key))
    return out


@overload
def with_canary_evidence(store: SessionStore, trial_id: str, data: JsonObject) -> JsonObject: ...
@overload
def with_canary_evidence(store: SessionStore, trial_id: str, data: None) -> JsonObject | None: ...


def with_canary_evidence(store: SessionStore, trial_id: str, data: JsonObject | None) -> JsonObject | None:
    """The trial's stored evidence (its JSON) with its canary signals merged in (once)."""
    signals = canary_signals(store, trial_id)
    if not signals:
        return data
    merged = dict(data or {"trial_id": trial_id})
    have = {(s.get("kind"), s.get("value")) for s in merged.get("signals", [])}
    merged["signals"] = list(merged.get("signals", [])) + [
        s.to_dict() for s in signals if (s.kind, s.value) not in have]
    return merged


def proven(store: SessionStore, trial_id: str) -> bool:
    return any(c.verdict == CanaryVerdict.TAMPERED for c in store.canary_checks(trial_id=trial_id))


def channel_doubt_signal(check: CanaryCheck) -> Signal | None:
    """A run whose channels disagreed without proof (sandbox/channels.py): its passes are void
    and the trial cannot be certified; NOT_REPRODUCIBLE names the reason (engine/verdicts.py)."""
    from testjack_tui.sandbox.channels import CHANNEL_MARK

    doubts = [p for p in check.problems if p.startswith(CHANNEL_MARK)]
    if check.verdict != CanaryVerdict.UNVERIFIABLE or not doubts:
        return None
    return Signal(Detector.HARNESS_TAMPERING, CHANNEL_DOUBT_KIND, "", None, "",
                  f"in a run on {check.world}: " + "; ".join(doubts), Severity.HIGH, structural=False,
                  related=check.world, value=check.key)
