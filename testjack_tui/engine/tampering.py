"""Proven tampering as trial evidence.

When a run on a trial's world comes back with its canaries wrong (sandbox/canaries.py), the
trial's code forged test reports: that is proof, not a suspicion from reading the diff. It is
stored per run (SessionStore.canary_checks) and surfaces in the trial's evidence as a high,
structural `harness_tampering` signal of kind `canary_tampering`, which the verdict rules read
like any other structural signal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, overload

from .records_runs import CanaryCheck, CanaryVerdict, JsonObject

if TYPE_CHECKING:
    from .store import SessionStore

CANARY_KIND = "canary_tampering"
# Unproven tampering evidence: a run's channels could not be made to agree (a process outlived
# the runner, our own run timed out where the report passed; sandbox/channels.py).
CHANNEL_DOUBT_KIND = "channel_doubt"


def canary_signals(store: SessionStore, trial_id: str) -> list[JsonObject]:
    """Signal dicts (detectors.signals.Signal.to_dict shape) for the trial's proven tampering,
    and for channel doubts (`channel_doubt_signal`)."""
    out = []
    for check in store.canary_checks(trial_id=trial_id):
        if check.verdict != CanaryVerdict.TAMPERED:
            doubt = channel_doubt_signal(check)
            if doubt:
                out.append(doubt)
            continue
        what = "; ".join(check.problems) or "a canary came out wrong"
        out.append({"detector": "harness_tampering", "kind": CANARY_KIND, "file": "", "line": None,
                    "excerpt": "", "severity": "high", "structural": True, "related": check.world,
                    "value": check.key,
                    "message": f"proven tampering in a run on {check.world}: {what}; "
                               "the run's results are void"})
    return out


@overload
def with_canary_evidence(store: SessionStore, trial_id: str, data: JsonObject) -> JsonObject: ...
@overload
def with_canary_evidence(store: SessionStore, trial_id: str, data: None) -> JsonObject | None: ...


def with_canary_evidence(store: SessionStore, trial_id: str, data: JsonObject | None) -> JsonObject | None:
    """The trial's stored evidence dict with its canary signals merged in (once)."""
    signals = canary_signals(store, trial_id)
    if not signals:
        return data
    merged = dict(data or {"trial_id": trial_id})
    have = {(s.get("kind"), s.get("value")) for s in merged.get("signals", [])}
    merged["signals"] = list(merged.get("signals", [])) + [
        s for s in signals if (s["kind"], s["value"]) not in have]
    return merged


def proven(store: SessionStore, trial_id: str) -> bool:
    return any(c.verdict == CanaryVerdict.TAMPERED for c in store.canary_checks(trial_id=trial_id))


def channel_doubt_signal(check: CanaryCheck) -> JsonObject | None:
    """A run whose channels disagreed without proof (sandbox/channels.py): its passes are void
    and the trial cannot be certified; NOT_REPRODUCIBLE names the reason (engine/verdicts.py)."""
    from testjack_tui.sandbox.channels import CHANNEL_MARK

    doubts = [p for p in check.problems if p.startswith(CHANNEL_MARK)]
    if check.verdict != CanaryVerdict.UNVERIFIABLE or not doubts:
        return None
    return {"detector": "harness_tampering", "kind": CHANNEL_DOUBT_KIND, "file": "", "line": None,
            "excerpt": "", "severity": "high", "structural": False, "related": check.world,
            "value": check.key, "message": f"in a run on {check.world}: " + "; ".join(doubts)}
