"""Containers for TestJack: the podman service, images, worlds, exec and test runs.

Knows nothing of LLMs or the UI. Callers are typed against `SandboxBackend` (testjack_tui.sandbox.backend):
`Sandbox` is podman on this machine, `testjack_tui.sandbox.ray_backend.RayBackend` the same on a Ray cluster.

The names below load on first use: loading a benchmark only needs `testjack_tui.sandbox.runners`, and the
podman client alone costs a fifth of a second at start-up.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_WHERE = {
    "ExecResult": "api", "PatchResult": "api", "TestOutcome": "api", "TestRun": "api",
    "WorldEvent": "api", "WorldRef": "api",
    "LiveWorldHandle": "backend", "SandboxBackend": "backend", "make_backend": "backend",
    "Limits": "containers", "LiveWorld": "core", "Sandbox": "core",
    "PatchError": "errors", "SandboxError": "errors",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .api import ExecResult, PatchResult, TestOutcome, TestRun, WorldEvent, WorldRef  # noqa: F401
    from .backend import LiveWorldHandle, SandboxBackend, make_backend  # noqa: F401
    from .containers import Limits  # noqa: F401
    from .core import LiveWorld, Sandbox  # noqa: F401
    from .errors import PatchError, SandboxError  # noqa: F401
