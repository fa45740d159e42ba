"""Machine-wide locks by name (flock on a file under the system temp folder).

Two sessions (or two users' tools) preparing the same world snapshot at once would both build
it, leak an untagged image each time the loser's commit is replaced, and can trip podman
errors. The world snapshot's tag names the lock, so whoever comes second waits and then finds
the snapshot built. A lock held by a killed process is released by the kernel.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def lock_path(name: str) -> Path:
    folder = Path(tempfile.gettempdir()) / "testjack-locks"
    folder.mkdir(exist_ok=True)
    try:
        os.chmod(folder, 0o1777)  # shared by every user of the machine, like /tmp itself
    except OSError:
        pass
    return folder / (hashlib.sha256(name.encode()).hexdigest()[:32] + ".lock")


def try_acquire(name: str) -> int | None:
    """The lock's descriptor (pass it to release()), or None when someone else holds it. Never
    blocks, so a caller waiting in a loop can be cancelled without leaving a lock behind."""
    fd = os.open(lock_path(name), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def held(name: str) -> Iterator[None]:
    """Hold the lock for a block of blocking code (a worker thread), waiting in flock for as long
    as another process holds it. Image builds: whoever comes second finds the image built."""
    fd = os.open(lock_path(name), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        release(fd)
