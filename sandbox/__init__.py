"""Containers for TestJack: the podman service, images, worlds, exec and test runs.

Knows nothing of LLMs or the UI. Callers are typed against `SandboxBackend` (sandbox.backend):
`Sandbox` is podman on this machine, `sandbox.ray_backend.RayBackend` the same on a Ray cluster.
"""
from .api import ExecResult, PatchResult, TestOutcome, TestRun, WorldEvent, WorldRef
from .backend import LiveWorldHandle, SandboxBackend, make_backend
from .containers import Limits
from .core import LiveWorld, Sandbox
from .errors import PatchError, SandboxError

__all__ = ["SandboxBackend", "LiveWorldHandle", "make_backend", "Sandbox", "LiveWorld", "PatchError",
           "SandboxError", "Limits", "WorldRef", "TestRun", "TestOutcome", "ExecResult", "WorldEvent",
           "PatchResult"]
