"""A benchmark's labels file (its ground truth), when it ships one: read here and only here, to
score recall and precision (`report.score_against_labels`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testjack_tui.errors import InputError


# Labels that do not mean "this passing trial violates its task".
NON_DEFECTIVE = {"sound", "sound_incidental", "sound_low_quality", "ambiguous", "underspecified",
                 "clean", "officially_failing", "failing", "not_reproducible"}


def load_labels(path: Path) -> dict[str, dict[str, Any]]:
    """trial id -> {label, mode_group, defective, ...} from a labels file (several layouts).

    When the file lists its `failure_modes`, a trial is defective iff its label is one of them;
    otherwise any label outside NON_DEFECTIVE counts as defective.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(path, None, f"cannot read labels: {exc}") from None
    rows = data.get("trials", data) if isinstance(data, dict) else data
    modes = set(data.get("failure_modes") or ()) if isinstance(data, dict) else set()
    out: dict[str, dict[str, Any]] = {}
    if isinstance(rows, dict):
        for tid, info in rows.items():
            if tid in ("about", "failure_modes", "failure_mode_descriptions", "labels"):
                continue
            out[tid] = dict(info) if isinstance(info, dict) else {"label": info}
    elif isinstance(rows, list):
        for info in rows:
            if isinstance(info, dict):
                tid = info.get("trial_id") or info.get("trial") or info.get("id")
                if tid:
                    out[str(tid)] = dict(info)
    if modes:
        for info in out.values():
            info.setdefault("defective", str(info.get("label", "")) in modes)
    return out


def is_defective(info: dict[str, Any]) -> bool:
    if isinstance(info.get("defective"), bool):
        return bool(info["defective"])
    label = str(info.get("label", "")).strip().lower()
    return bool(label) and label not in NON_DEFECTIVE
