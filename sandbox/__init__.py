"""Containers for TestJack: the podman service, images, worlds, exec and test runs.

Knows nothing of LLMs or the UI. Use `Sandbox` (async) and the types in `sandbox.api`.
"""
from .api import ExecResult, PatchResult, TestOutcome, TestRun, WorldEvent, WorldRef
from .containers import Limits
from .core import LiveWorld, Sandbox
from .errors import PatchError, SandboxError

__all__ = ["Sandbox", "LiveWorld", "PatchError", "SandboxError", "Limits", "WorldRef", "TestRun",
           "TestOutcome", "ExecResult", "WorldEvent", "PatchResult"]
