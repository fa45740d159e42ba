"""Labels on every container and image we create, and who owns them.

A container is owned by a session whose process renews a lease file (older containers: by a
pid + its start time). A sweep removes containers whose owner is gone: leftovers of a crash.
Live containers of another concurrent process are left alone, also when that process lives in
another pid namespace (the lease is a file, not a pid).
"""
from __future__ import annotations

import os
import re
import secrets
import tempfile
import time

APP = "testjack-tui"
L_APP = "testjack.app"
L_SESSION = "testjack.session"
L_TASK = "testjack.task"
L_TRIAL = "testjack.trial"
L_WORLD = "testjack.world"
L_PID = "testjack.pid"
L_PIDSTART = "testjack.pidstart"
L_LEASE = "testjack.lease"  # a file its owner touches while alive (see lease_alive)

LEASE_TTL = 90.0  # seconds without a renewal after which a lease's owner counts as gone
LEASE_RENEW = 10.0

APP_FILTER = f"label={L_APP}={APP}"


def process_start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot), "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode(errors="replace")
    except OSError:
        return ""
    # The command name is in parentheses and may contain spaces: split after the last ')'.
    fields = data.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def process_alive(pid: int, start: str = "") -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if start:
        current = process_start_time(pid)
        if current and current != start:
            return False  # the pid was reused by another process
    return True


def new_session_id(prefix: str = "sb") -> str:
    return f"{slug(prefix, 24)}-{secrets.token_hex(4)}"


def lease_path(session: str) -> str:
    folder = os.path.join(tempfile.gettempdir(), "testjack-leases")
    os.makedirs(folder, exist_ok=True)
    try:
        os.chmod(folder, 0o1777)
    except OSError:
        pass
    return os.path.join(folder, f"{slug(session, 64)}.lease")


def lease_alive(path: str) -> bool:
    """A lease is alive while its owner renews it (testjack_tui.sandbox.core renews it every LEASE_RENEW s).
    Unlike a pid, it reads the same from any pid namespace that shares the temp folder."""
    try:
        return time.time() - os.stat(path).st_mtime < LEASE_TTL
    except OSError:
        return False


def owner_labels(session: str) -> dict[str, str]:
    pid = os.getpid()
    return {L_APP: APP, L_SESSION: session, L_PID: str(pid), L_PIDSTART: process_start_time(pid),
            L_LEASE: lease_path(session)}


def owner_dead(labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    lease = labels.get(L_LEASE)
    if lease and os.path.exists(lease):  # (no file: a process outside a Sandbox, e.g. doctor)
        return not lease_alive(lease)
    try:
        pid = int(labels.get(L_PID, "0"))
    except ValueError:
        return True
    return not process_alive(pid, labels.get(L_PIDSTART, ""))


def slug(text: str, limit: int = 40) -> str:
    """Lower-case [a-z0-9_.-] text usable in image tags and names."""
    value = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.") or "x"
    return value[:limit].rstrip("-.") or "x"
