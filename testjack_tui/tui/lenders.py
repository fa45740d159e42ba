"""The earlier sessions a new one can take test runs from (the Selection screen's "Reuse runs of",
`testjack-tui tui BENCH --reuse-runs SESSION`): those of the same benchmark folder, as `audit
--reuse-runs` takes them (engine/run_reuse.py). A run taken is the same run key on the same world
snapshot; what the earlier session did not run runs here."""
from __future__ import annotations

from pathlib import Path

NO_LENDER = ""
NO_LENDER_LABEL = "none: run every test here"


def lender_choices(benchmark: str) -> list[tuple[str, str]]:
    """(label, session id) of each stored session of `benchmark`, newest first, after the choice
    of none. Reads every session's store: called off the UI thread."""
    from testjack_tui.engine.session import AuditSession, state_text

    folder = Path(benchmark).expanduser().resolve()
    choices = [(NO_LENDER_LABEL, NO_LENDER)]
    for info in AuditSession.list():
        theirs = str(info.get("benchmark") or "")
        if theirs and Path(theirs) == folder:
            state = state_text(info)  # a finished one says nothing more: the label fits 80 columns
            choices.append((f"{info['id']} · {info.get('mode') or '?'}" + (f" · {state}" if state != "finished" else ""),
                            str(info["id"])))
    return choices


def checked_lender(ref: str, benchmark: str, trials: list[str] | None) -> str:
    """The id of the session `ref` names (an id or an `audit --out` folder), checked as `audit
    --reuse-runs` checks it: it exists, audited this benchmark and ran T0 on each of `trials`.
    Raises InputError naming what is wrong."""
    from testjack_tui.engine.run_reuse import lender_for

    return lender_for(ref, str(Path(benchmark).expanduser().resolve()), trials)
