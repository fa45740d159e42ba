"""A benchmark's labels file (its ground truth), when it ships one: read here and only here, to
score recall and precision (`report.score_against_labels`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from testjack_tui.errors import InputError


# Labels that do not mean "this passing trial violates its task".
NON_DEFECTIVE = {"sound", "sound_incidental", "sound_low_quality", "ambiguous", "underspecified",
                 "clean", "officially_failing", "failing", "not_reproducible"}
# Keys of the file's top object that are about the file, not trials.
_ABOUT = ("about", "failure_modes", "failure_mode_descriptions", "labels")


@dataclass(frozen=True)
class TrialLabel:
    """One trial's ground truth, as its labels file gives it."""

    label: str
    defective: bool  # the trial violates its task (`is_defective`, unless the file says so itself)
    task: str | None = None
    mode_group: str | None = None  # the way it fails, shared by the trials failing that way
    also: tuple[str, ...] = ()  # other mode groups the trial shows too


def is_defective(label: str, failure_modes: frozenset[str] = frozenset()) -> bool:
    """When the file lists its `failure_modes`, a trial is defective iff its label is one of them;
    otherwise any label outside NON_DEFECTIVE counts as defective."""
    if failure_modes:
        return label in failure_modes
    label = label.strip().lower()
    return bool(label) and label not in NON_DEFECTIVE


def load_labels(path: Path) -> dict[str, TrialLabel]:
    """trial id -> its label, from a labels file (several layouts: {trial: label},
    {trial: {label, ...}}, [{trial_id, label, ...}], any of them under "trials")."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(path, None, f"cannot read labels: {exc}") from None
    rows = data.get("trials", data) if isinstance(data, dict) else data
    modes = (data.get("failure_modes") or []) if isinstance(data, dict) else []
    if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
        raise InputError(path, "failure_modes", "must be a list of labels")
    out: dict[str, TrialLabel] = {}
    if isinstance(rows, dict):
        for tid, info in rows.items():
            if tid not in _ABOUT:
                out[tid] = _label(info if isinstance(info, dict) else {"label": info}, frozenset(modes), path, tid)
    elif isinstance(rows, list):
        for i, info in enumerate(rows):
            if isinstance(info, dict):
                tid = info.get("trial_id") or info.get("trial") or info.get("id")
                if tid:
                    out[str(tid)] = _label(info, frozenset(modes), path, f"[{i}]")
    else:
        raise InputError(path, "trials", f"must be an object or a list of trials, got {type(rows).__name__}")
    return out


def _label(info: dict[str, object], modes: frozenset[str], path: Path, where: str) -> TrialLabel:
    label, defective = info.get("label", ""), info.get("defective")
    task, group, also = info.get("task"), info.get("mode_group"), info.get("also") or []
    if not isinstance(label, str):
        raise InputError(path, f"{where}.label", f"must be text, got {label!r}")
    if defective is not None and not isinstance(defective, bool):
        raise InputError(path, f"{where}.defective", f"must be true or false, got {defective!r}")
    for name, value in (("task", task), ("mode_group", group)):
        if value is not None and not isinstance(value, str):
            raise InputError(path, f"{where}.{name}", f"must be text, got {value!r}")
    if not isinstance(also, list) or not all(isinstance(m, str) for m in also):
        raise InputError(path, f"{where}.also", "must be a list of mode groups")
    return TrialLabel(label, is_defective(label, modes) if defective is None else defective,
                      task if isinstance(task, str) else None, group if isinstance(group, str) else None,
                      tuple(also))
