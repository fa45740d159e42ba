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
        super().__init__(f"{world_name}: the {stage} does not apply"
                         + (f": {self.summary}" if self.summary else ""))

    @property
    def summary(self) -> str:
        """The first error git reported (later fallbacks' errors are in result.message)."""
        lines = [line.strip() for line in self.result.message.strip().splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error:")]
        if errors:
            return errors[0]
        return lines[-1] if lines else ""
