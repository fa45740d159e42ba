"""Errors the sandbox raises. A trial's own failures are results, not exceptions."""
from __future__ import annotations

from testjack_tui.errors import SandboxError

from .api import PatchResult

__all__ = ["SandboxError", "PatchError"]


class PatchError(SandboxError):
    """G or s (or the test patch) did not apply while preparing a world."""

    def __init__(self, world_name: str, result: PatchResult, stage: str = "patch"):
        self.world_name = world_name
        self.result = result
        self.stage = stage  # "reference", "trial", "solve script" or "test patch"
        detail = result.message.strip().splitlines()
        super().__init__(f"{world_name}: the {stage} does not apply"
                         + (f": {detail[-1]}" if detail else ""))
