"""`doctor` for the front ends: the sandbox's checks of this machine or of a Ray cluster, and
the pruning of cached world snapshots. Nothing of the sandbox (or of Ray) is imported until a
function runs."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from testjack_tui.sandbox.diagnostics import Check as Check


def check(name: str, status: str, detail: str, hint: str = "") -> Check:
    """One line of the doctor's report, with what to do about it (`hint`)."""
    from testjack_tui.sandbox.diagnostics import Check

    return Check(name, status, detail, hint)


def machine_checks(fix: bool = False, log: Callable[[str], None] = lambda m: None) -> list[Check]:
    from testjack_tui.sandbox.diagnostics import run_checks

    return run_checks(fix=fix, log=log)


def cluster_checks(address: str | None) -> list[Check]:
    from testjack_tui.sandbox.ray_backend.doctor import cluster_checks as checks

    return checks(address)


def prune_world_snapshots(prefix: str = "", older_than_hours: float | None = None) -> tuple[list[str], list[str]]:
    from testjack_tui.sandbox.prune import prune_world_snapshots as prune

    return prune(prefix, older_than_hours)
