"""The sandbox interface the engine and the agents are typed against, and how to pick one.

Two implementations: `Sandbox` (podman on this machine, the default) and
`testjack_tui.sandbox.ray_backend.RayBackend` (the same operations as Ray actors on a cluster's nodes, each
node running podman itself). Both are async context managers: entering starts the service and
sweeps leftovers of dead processes, leaving removes every container the backend started.
"""
from __future__ import annotations

import contextlib
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

from testjack_tui.model import Task, Trial

from .api import ExecResult, TestRun, WorldKind, WorldListener, WorldRef

Command = str | Sequence[str]
BackendName = Literal["local", "ray"]
BACKENDS: tuple[str, ...] = ("local", "ray")


@runtime_checkable
class LiveWorldHandle(Protocol):
    """A container of one world kept for an agent session (`SandboxBackend.open`)."""

    world: WorldRef

    async def exec(self, cmd: Command, timeout: float | None = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None,
                   stdin: str | bytes | None = None) -> ExecResult: ...

    async def read_file(self, path: str, max_bytes: int = 2 * 1024 * 1024) -> str: ...

    async def write_file(self, path: str, text: str | bytes) -> None: ...

    async def list_files(self, path: str = ".") -> list[str]: ...

    async def run_tests(self, test_ids: Sequence[str], files: dict[str, str] | None = None,
                        timeout: float | None = 300, isolate_harness: bool = False) -> TestRun: ...


@runtime_checkable
class SandboxBackend(Protocol):
    """Build worlds, run tests and commands in fresh containers from them, keep one open for an
    agent, remove a world's snapshot, sweep leftovers. Every run starts a fresh container."""

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def prepare(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> WorldRef:
        """Build (or find cached) the snapshot of one world. PatchError when G, s or T0's test
        patch does not apply."""
        ...

    async def run_tests(self, world: WorldRef, test_ids: Sequence[str],
                        files: dict[str, str] | None = None, timeout: float | None = 300,
                        isolate_harness: bool = False) -> TestRun:
        """One container and one test process for all ids, candidate files copied in."""
        ...

    async def run_official(self, task: Task, kind: WorldKind, trial: Trial | None = None) -> TestRun:
        """T0 through the task's own verifier flow (sandbox/official.py) in a fresh container
        from its verifier image; outcomes keyed by T0's ids as the benchmark writes them.
        (testjack_tui.sandbox.t0.run_t0 falls back to our runner on a backend without it.)"""
        ...

    async def exec(self, world: WorldRef, cmd: Command, timeout: float | None = 60,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   stdin: str | bytes | None = None) -> ExecResult: ...

    def open(self, world: WorldRef) -> contextlib.AbstractAsyncContextManager[LiveWorldHandle]: ...

    async def remove(self, world: WorldRef) -> bool:
        """Drop the world's snapshot (a cache: a later prepare rebuilds it). False when a
        running container still uses it."""
        ...

    async def sweep(self) -> list[str]:
        """Remove containers whose owning process is dead; their ids."""
        ...


class BackendFactory(Protocol):
    def __call__(self, *, listener: WorldListener | None = None,
                 session: str = "sandbox") -> SandboxBackend: ...


def make_backend(name: str = "local", *, listener: WorldListener | None = None,
                 session: str = "sandbox", ray_address: str | None = None,
                 concurrency: int | None = None) -> SandboxBackend:
    """The backend called `name` ("local" or "ray"), not yet entered."""
    if name == "local":
        from .core import Sandbox

        return Sandbox(listener=listener, session=session, concurrency=concurrency)
    if name == "ray":
        from .ray_backend import RayBackend

        return RayBackend(listener=listener, session=session, address=ray_address)
    raise ValueError(f"unknown sandbox backend {name!r} (backends: {', '.join(BACKENDS)})")
