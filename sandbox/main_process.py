"""A command run as a fresh container's main process (blocking; called from worker threads).

A test run in a fresh container used to start a keep-alive process and exec the command into
it. The exec costs a `runc exec` and a conmon of its own: about a third of podman's CPU for
the container (measured on 2 cores: 0.35-0.42 CPU-s per container with one exec, 0.28 with the
command as the main process). Here the command is the container's own process. The container
is created, attached and started ahead of its turn, and its wrapper waits at a gate (SIGUSR1)
so that no more runs work at once than there are slots; the turn opens the gate. Output
arrives on the attach stream, the exit code from `wait`, and a timeout or a kill stops the
whole container (nothing of the run outlives it).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from podman import PodmanClient

from .api import ExecResult
from .containers import pid_in, upper_dir_in
from .execs import follow, read_frame, result_of
from .output import Collector


@dataclass
class ContainerHandle:
    """The run of a container's main process; kill() (any thread) kills the container."""

    client_factory: Callable[[], PodmanClient]
    container_id: str
    killed: bool = False
    timed_out: bool = False
    init_pid: int | None = None  # host pid of the container's init, seen while it waits at its gate
    upper_dir: str | None = None  # host path of its writable layer (sandbox/containers.upper_dir)
    _response: Any = None  # the attach stream
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def kill(self) -> None:
        with self._lock:
            self.killed = True
        try:
            self.client_factory().api.post(f"/containers/{self.container_id}/kill",
                                           params={"signal": "SIGKILL"})
        except Exception:
            pass  # not running (never started, or already over)

    def close_stream(self) -> None:
        close = getattr(self._response, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                pass


GATE_ENV = "TJ_GATE"  # set: the wrapper waits at its gate (sandbox/runners/run_wrapper.WRAPPER)
GATE_OPEN = b"\x1eTJ-GATE\n"  # what it writes first, before any code of the repo runs
GATE_PATIENCE = 120.0  # seconds a started container may take to reach its gate


class GateNotReached(Exception):
    """The main process ended (or stalled) before its gate; its output says why."""


def attach_and_start(handle: ContainerHandle) -> str:
    """Attach to the created container, then start it: "" once started, else why not."""
    client = handle.client_factory()
    cid = handle.container_id
    # Attached before the start: not a byte of the output is missed.
    stream = client.api.post(f"/containers/{cid}/attach",
                             params={"stream": True, "stdout": True, "stderr": True}, stream=True)
    if stream.status_code in (409, 500):  # e.g. a working directory that is not there
        return stream.text[-300:] or f"HTTP {stream.status_code}"
    stream.raise_for_status()
    handle._response = stream
    started = client.api.post(f"/containers/{cid}/start")
    return "" if started.ok else (started.text[-300:] or f"HTTP {started.status_code}")


def start_gated(handle: ContainerHandle) -> None:
    """Attach to the created container and start it; return once its main process waits at
    the gate. Started this way ahead of its turn, a run costs its start no time on the turn,
    and nothing of it runs before then."""
    client = handle.client_factory()
    started = attach_and_start(handle)
    if started:  # e.g. the image has no python3 for the wrapper
        raise GateNotReached(started)
    stream = handle._response
    seen = b""
    timer = threading.Timer(GATE_PATIENCE, handle.close_stream)
    timer.daemon = True
    timer.start()
    try:
        while GATE_OPEN not in seen:
            try:
                frame = read_frame(stream.raw)
            except Exception as exc:  # the stream closed under the read (patience ran out)
                raise GateNotReached(f"{type(exc).__name__}: {seen.decode(errors='replace')[-300:]}") from exc
            if frame is None:
                raise GateNotReached(seen.decode(errors="replace")[-300:])
            seen += frame[1]
    finally:
        timer.cancel()
    _inspect(handle, client)


def _inspect(handle: ContainerHandle, client: PodmanClient) -> None:
    """The init's host pid and the writable layer of a container waiting at its gate (one
    inspect, off the run's turn). Nothing is lost without them: the gate then opens through the
    API and the disk guard asks for the layer itself."""
    try:
        resp = client.api.get(f"/containers/{handle.container_id}/json")
        if not resp.ok:
            return
        info = resp.json()
        handle.init_pid, handle.upper_dir = pid_in(info), upper_dir_in(info)
    except Exception:
        pass


def _signal_init(handle: ContainerHandle, sig: signal.Signals) -> bool:
    """Send `sig` to the container's init straight from this host. True when sent; False when
    its pid is unknown, not visible here, or not (any more) a process of this container (a pid
    is checked through a pidfd: a reused pid never gets the signal)."""
    pid = handle.init_pid
    if not pid:
        return False
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return False
    try:
        # The container's cgroup names its id (cgroupfs: libpod-ID, systemd: libpod-ID.scope).
        with open(f"/proc/{pid}/cgroup") as fh:
            if handle.container_id not in fh.read():
                return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def run_main(handle: ContainerHandle, argv: list[str], *, timeout: float | None,
             collector: Collector, reported_exit: Callable[[], int | None] = lambda: None,
             gated: bool = True) -> ExecResult:
    """Open the gate of a container started with start_gated (`gated`; else one just started
    with attach_and_start) and follow its main process to the end. `argv` is what the result
    names as the command; `reported_exit`, asked once the output is in, is the exit code the
    process reported itself (its trailer), if any: podman's `wait` costs the slot another
    0.1-0.3 s on busy cores."""
    client = handle.client_factory()
    started = time.monotonic()
    cid = handle.container_id
    try:
        if gated and not handle.killed and not _signal_init(handle, signal.SIGUSR1):
            client.api.post(f"/containers/{cid}/kill", params={"signal": "SIGUSR1"}).raise_for_status()
    except Exception:
        if not handle.killed:  # (killed meanwhile: follow() below closes up)
            handle.close_stream()
            collector.close()
            raise
    follow(handle, handle._response, collector, timeout, [handle.kill, handle.close_stream])
    exit_code = None
    if handle.timed_out:
        # Stopped for good before anyone copies its reports out: podman's cleanup after a kill
        # unmounts the container while it runs.
        _exit_code(client, cid)
    else:
        exit_code = reported_exit()
        if exit_code is None:
            exit_code = _exit_code(client, cid)
    return result_of(argv, exit_code, handle.timed_out, collector, started)


def _exit_code(client: PodmanClient, container_id: str) -> int | None:
    try:
        # The default poll interval (250 ms) would idle the slot that long after every run.
        resp = client.api.post(f"/containers/{container_id}/wait", params={"interval": "10ms"})
        if resp.ok:
            body = resp.json()
            code = body.get("StatusCode") if isinstance(body, dict) else body
            return int(code) if code is not None else None
    except Exception:
        pass
    return None
