"""A TUI test's session taking the runs of a shared demo audit (tests/conftest.py), as an operator
does on the Selection screen's Settings tab ("Reuse runs", testjack_tui/tui/lenders.py).

The lender's session folder is copied into the test's own TESTJACK_HOME: the test sees one stored
session, the shared home is only read, and a run taken is the same run key (world snapshot, tests,
files) the test's session would have run itself."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from textual.widgets import Select
from tui_wait import wait_for


def lend(audit: dict, home: Path) -> str:
    """The session of `audit` (a demo fixture's dict), copied into `home`; its id."""
    session_id = audit["session_id"]
    shutil.copytree(Path(audit["home"]) / "data" / "sessions" / session_id,
                    home / "data" / "sessions" / session_id)
    return session_id


async def choose_lender(pilot: Any, selection: Any, lender: str) -> None:
    """On the Settings tab: reuse the runs of session `lender` (once the screen has listed it)."""
    await wait_for(pilot, lambda: lender in selection.lenders, what=f"session {lender} offered to reuse runs of")
    selection.query_one("#reuse_runs", Select).value = lender
