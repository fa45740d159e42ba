"""Output of a command: head and tail in memory under a cap, the full text on disk (capped too).

A trial that prints 200 MB must neither fill memory nor the disk, and the UI must not drown:
the listener gets at most `stream_cap` bytes, then one note that the rest is not shown.
"""
from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Callable, Protocol

from testjack_tui.paths import cache_dir

from .labels import slug

HEAD_CAP = 64 * 1024
TAIL_CAP = 64 * 1024
DISK_CAP = 20 * 1024 * 1024
STREAM_CAP = 1024 * 1024


class HeadTail:
    """The first and last bytes of a stream."""

    def __init__(self, head_cap: int = HEAD_CAP, tail_cap: int = TAIL_CAP):
        self.head_cap, self.tail_cap = head_cap, tail_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def texts(self) -> tuple[str, str]:
        head = bytes(self.head).decode(errors="replace")
        tail = bytes(self.tail).decode(errors="replace")
        if tail and self.total > self.head_cap + self.tail_cap:
            tail = f"[{self.total - self.head_cap - self.tail_cap} bytes not kept]\n" + tail
        return head, tail


class Collector(Protocol):
    """Where an exec's output goes (OutputCollector, or a TrailerSplitter in front of one)."""

    @property
    def stdout(self) -> HeadTail: ...

    @property
    def stderr(self) -> HeadTail: ...

    @property
    def log_path(self) -> Path | None: ...

    def add(self, stdout: bytes | None, stderr: bytes | None) -> None: ...

    def close(self) -> None: ...


class OutputCollector:
    """Collects stdout/stderr chunks of one command."""

    def __init__(self, label: str, on_text: Callable[[str], None] | None = None,
                 disk_cap: int = DISK_CAP, stream_cap: int = STREAM_CAP, keep_log: bool = True):
        self.stdout = HeadTail()
        self.stderr = HeadTail()
        self.on_text = on_text
        self.disk_cap = disk_cap
        self.stream_cap = stream_cap
        self.streamed = 0
        self.written = 0
        self.log_path: Path | None = None
        self._fh = None
        if keep_log:
            logs = cache_dir() / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            name = f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(label, 60)}-{secrets.token_hex(3)}.log"
            self.log_path = logs / name
            self._fh = open(self.log_path, "wb")

    def add(self, stdout: bytes | None, stderr: bytes | None) -> None:
        for data, buf in ((stdout, self.stdout), (stderr, self.stderr)):
            if not data:
                continue
            buf.add(data)
            self._write(data)
            self._stream(data)

    def _write(self, data: bytes) -> None:
        if self._fh is None or self.written >= self.disk_cap:
            return
        room = self.disk_cap - self.written
        self._fh.write(data[:room])
        self.written += min(room, len(data))
        if self.written >= self.disk_cap:
            self._fh.write(f"\n[log cut at {self.disk_cap} bytes]\n".encode())
            self._fh.flush()

    def _stream(self, data: bytes) -> None:
        if self.on_text is None or self.streamed >= self.stream_cap:
            return
        room = self.stream_cap - self.streamed
        self.streamed += min(room, len(data))
        text = data[:room].decode(errors="replace")
        if self.streamed >= self.stream_cap:
            text += "\n[output continues; the rest is in the log]\n"
        self.on_text(text)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


LOG_MAX_AGE_DAYS = 14
LOG_MAX_BYTES = 2 * 1024 * 1024 * 1024


def prune_logs(max_age_days: float = LOG_MAX_AGE_DAYS, max_bytes: int = LOG_MAX_BYTES) -> int:
    """Remove exec logs older than max_age_days, then the oldest until the folder holds at most
    max_bytes (each log is capped, but thousands of runs add up). Returns how many went."""
    folder = cache_dir() / "logs"
    try:
        entries = [(e.stat().st_mtime, e.stat().st_size, e.path) for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return 0
    cutoff = time.time() - max_age_days * 86400
    entries.sort()
    total = sum(size for _, size, _ in entries)
    removed = 0
    for mtime, size, path in entries:
        if mtime >= cutoff and total <= max_bytes:
            break
        try:
            os.unlink(path)
            removed += 1
            total -= size
        except OSError:
            pass
    return removed
