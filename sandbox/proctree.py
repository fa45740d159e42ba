"""Killing process trees from the host.

The API has no exec timeout and a client-side timeout leaves the process running. The exec's
host pid (from GET /exec/{id}/json) leads its own process group; we kill that group and every
descendant we find in /proc, repeating until none is left (a fork bomb keeps forking while we
kill). Processes that escaped the tree (double fork, reparented to the container's init) are
reached through the container's init pid when the stream still does not end.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            data = Path(f"/proc/{entry.name}/stat").read_bytes().decode(errors="replace")
        except OSError:
            continue
        fields = data.rsplit(")", 1)[-1].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    tree = _children_map()
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _state(pid: int) -> str:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes().decode(errors="replace")
    except OSError:
        return ""
    fields = data.rsplit(")", 1)[-1].split()
    return fields[0] if fields else ""


def visible(pid: int | None) -> bool:
    return bool(pid) and Path(f"/proc/{pid}").exists()


def kill_tree(pid: int, include_root: bool = True, rounds: int = 20) -> bool:
    """SIGKILL pid's process group and all its descendants. False when pid is not visible."""
    if not visible(pid):
        return False
    for _ in range(rounds):
        targets = descendants(pid)
        if include_root:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            targets.append(pid)
        if not targets:
            break
        alive = 0
        for target in targets:
            if _state(target) in ("", "Z", "X"):
                continue  # gone, or a zombie waiting for its parent to reap it
            try:
                os.kill(target, signal.SIGKILL)
                alive += 1
            except OSError:
                pass
        if not alive:
            break
    return True


def start_ticks(pid: int) -> int:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes().decode(errors="replace")
        return int(data.rsplit(")", 1)[-1].split()[19])
    except (OSError, ValueError, IndexError):
        return -1


def kill_born_since(init_pid: int, since_ticks: int) -> None:
    """Kill the container's processes started at or after since_ticks (escaped an exec tree)."""
    if not visible(init_pid) or since_ticks < 0:
        return
    for _ in range(5):
        late = [p for p in descendants(init_pid) if start_ticks(p) >= since_ticks
                and _state(p) not in ("", "Z", "X")]
        if not late:
            return
        for pid in late:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
