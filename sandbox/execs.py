"""One command in a running container: streamed output, exit code, timeout that really kills.

Uses the low-level exec API (create, start streamed, inspect) because `exec_run(stream=True)`
gives no exit code. Runs in a worker thread; `ExecHandle.kill()` may be called from any thread.
"""
from __future__ import annotations

import json
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from podman import PodmanClient

from .api import ExecResult
from .output import Collector
from .proctree import kill_born_since, kill_tree, start_ticks, visible

GRACE = 2.0  # seconds to wait for the stream to end after killing the exec tree

# Runs a command as an unprivileged user: started as root, it changes uid and gid and then execs
# the command. Podman hands the container's added capabilities to a non-root exec user as
# ambient ones; a uid change from root clears them all, so the command holds none.
AS_USER = r"""
import os, sys
uid, gid = (int(x) for x in sys.argv[1].split(":"))
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
os.environ["HOME"] = sys.argv[2]
os.environ["USER"] = os.environ["LOGNAME"] = sys.argv[3]
try:
    os.execvp(sys.argv[4], sys.argv[4:])
except OSError as exc:
    sys.stderr.write("%s: %s\n" % (sys.argv[4], exc.strerror))
    sys.exit(127)
"""


def as_user(argv: list[str], user: str, home: str, name: str) -> list[str]:
    """argv that runs `argv` as `user` ("uid:gid") with no capabilities; exec it as root."""
    return ["python3", "-I", "-S", "-c", AS_USER, user, home, name, *argv]


class Killable(Protocol):
    """A running command (an exec, or a container's main process) another thread may kill."""

    def kill(self) -> None: ...


class _Closable(Protocol):
    def close(self) -> None: ...


class _Readable(Protocol):
    def read(self, size: int) -> bytes: ...


@dataclass
class ExecHandle:
    """A running exec; lets another thread (timeout timer, cancellation) kill it."""

    client_factory: Callable[[], PodmanClient]
    container_id: str
    init_pid: int | None = None  # host pid of the container's init, for the escaped-process sweep
    exec_id: str | None = None
    pid: int | None = None
    pid_ticks: int = -1  # the exec's start time, to find processes that left its tree
    killed: bool = False
    timed_out: bool = False
    _response: _Closable | None = None  # the exec's output stream while it runs
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def container_init_pid(self) -> int | None:
        """Host pid of the container's init, looked up only when a kill needs it."""
        if self.init_pid is None:
            try:
                info = self.client_factory().api.get(f"/containers/{self.container_id}/json").json()
                self.init_pid = int(info.get("State", {}).get("Pid") or 0) or None
            except Exception:
                return None
        return self.init_pid

    def kill(self) -> None:
        with self._lock:
            self.killed = True
            pid = self.pid
        if pid is None and self.exec_id:
            # Looked up only when a kill needs it (one service round trip less per exec); the
            # exec's process is still the one that started with it.
            pid = self.pid = _exec_pid(self.client_factory(), self.exec_id)
            if pid:
                self.pid_ticks = start_ticks(pid)
        if pid and kill_tree(pid):
            init = self.container_init_pid()
            if init:
                kill_born_since(init, self.pid_ticks)
            return
        # The exec's pid is not visible from here (remote service): kill from inside.
        _kill_inside(self.client_factory(), self.container_id)

    def kill_escaped(self) -> None:
        """Kill everything in the container except its init (processes that left the tree)."""
        init = self.container_init_pid()
        if init and visible(init):
            kill_tree(init, include_root=False)
        else:
            _kill_inside(self.client_factory(), self.container_id)

    def close_stream(self) -> None:
        resp = self._response
        if resp is not None:
            try:
                resp.close()
            except Exception:
                pass


def _exec_pid(client: PodmanClient, exec_id: str) -> int | None:
    try:
        resp = client.api.get(f"/exec/{exec_id}/json")
        if resp.ok:
            return int(resp.json().get("Pid") or 0) or None
    except Exception:
        pass
    return None


def _kill_inside(client: PodmanClient, container_id: str) -> None:
    # kill(-1) from inside a pid namespace signals every process but init and the caller.
    try:
        body = {"Cmd": ["kill", "-9", "-1"], "AttachStdout": False, "AttachStderr": False}
        resp = client.api.post(f"/containers/{container_id}/exec", data=json.dumps(body))
        if resp.ok:
            eid = resp.json()["Id"]
            client.api.post(f"/exec/{eid}/start", data=json.dumps({"Detach": True, "Tty": False}))
    except Exception:
        pass


def _read_exact(raw: _Readable, size: int) -> bytes:
    buf = b""
    while len(buf) < size:
        chunk = raw.read(size - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


def read_frame(raw: _Readable) -> tuple[int, bytes] | None:
    """The next frame of a multiplexed attach stream (8-byte header: 1 stdout, 2 stderr), or
    None at its end."""
    while True:
        header = _read_exact(raw, 8)
        if len(header) < 8:
            return None
        kind, length = struct.unpack_from(">BxxxL", header)
        if length:
            return kind, _read_exact(raw, length)


def pump_frames(raw: _Readable, collector: Collector) -> None:
    """Copy a multiplexed attach stream into the collector until it ends."""
    while (frame := read_frame(raw)) is not None:
        kind, data = frame
        if kind == 2:
            collector.add(None, data)
        else:
            collector.add(data, None)


def run_exec(handle: ExecHandle, argv: list[str], *, cwd: str | None, env: dict[str, str] | None,
             timeout: float | None, collector: Collector, user: str | None = None) -> ExecResult:
    """Run argv in the handle's container, blocking until it ends, times out or is killed.
    `user` ("uid:gid") runs it as that user instead of the container's."""
    client = handle.client_factory()
    started = time.monotonic()
    body = {
        "AttachStdout": True, "AttachStderr": True, "AttachStdin": False, "Tty": False,
        "Cmd": argv, "Env": [f"{k}={v}" for k, v in (env or {}).items()],
    }
    if cwd:
        body["WorkingDir"] = cwd
    if user:
        body["User"] = user
    resp = client.api.post(f"/containers/{handle.container_id}/exec", data=json.dumps(body))
    resp.raise_for_status()
    handle.exec_id = resp.json()["Id"]
    stream = client.api.post(f"/exec/{handle.exec_id}/start",
                             data=json.dumps({"Detach": False, "Tty": False}), stream=True)
    stream.raise_for_status()
    handle._response = stream
    if handle.killed:  # cancelled while starting
        handle.kill()

    follow(handle, stream, collector, timeout, [handle.kill, handle.kill_escaped, handle.close_stream])
    exit_code = None
    if not handle.timed_out:
        exit_code = _wait_exit_code(client, handle.exec_id)
    return result_of(argv, exit_code, handle.timed_out, collector, started)


class _Followed(Protocol):
    killed: bool
    timed_out: bool


def follow(handle: _Followed, stream: Any, collector: Collector, timeout: float | None,
           escalation: list[Callable[[], None]]) -> None:
    """Copy the stream into the collector until it ends. Past `timeout` the handle is marked
    timed out and the escalation steps run one GRACE apart until the stream has ended (kill,
    then whatever else may hold the output open). The stream is closed at the end."""
    done = threading.Event()
    if timeout is not None:
        def on_timeout() -> None:
            if done.wait(timeout):
                return
            handle.timed_out = True
            for step in escalation:
                step()
                if done.wait(GRACE):
                    return
        threading.Thread(target=on_timeout, daemon=True, name="tj-timeout").start()
    try:
        if not handle.killed:
            pump_frames(stream.raw, collector)
    except Exception:
        if not (handle.killed or handle.timed_out):
            raise
    finally:
        done.set()
        try:
            stream.close()
        except Exception:
            pass
        collector.close()


def result_of(argv: list[str], exit_code: int | None, timed_out: bool, collector: Collector,
              started: float) -> ExecResult:
    out_head, out_tail = collector.stdout.texts()
    err_head, err_tail = collector.stderr.texts()
    return ExecResult(
        argv=list(argv), exit_code=exit_code, timed_out=timed_out,
        stdout_head=out_head, stdout_tail=out_tail, stderr_head=err_head, stderr_tail=err_tail,
        log_path=collector.log_path, duration=time.monotonic() - started,
    )


def _wait_exit_code(client: PodmanClient, exec_id: str, patience: float = 5.0) -> int | None:
    deadline = time.monotonic() + patience
    while True:
        try:
            info = client.api.get(f"/exec/{exec_id}/json").json()
        except Exception:
            return None
        if not info.get("Running") or time.monotonic() > deadline:
            code = info.get("ExitCode")
            return int(code) if code is not None else None
        time.sleep(0.02)
