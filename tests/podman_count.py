"""Counting the podman work of a test run (`TESTJACK_TEST_COUNT_PODMAN=FILE`, see tests/conftest.py):
the containers each test file had created — every test run, exec and prepare is one — so a change
that shares worlds or sessions between files states what it saved in counts, not seconds (the
machine is shared; seconds mean little there).

A `podman events` stream watches container creations while the tests run; a container counts
when the process that owns it (its `testjack.pid` label) is this pytest process or one of its
descendants (the CLI children the tests start), checked while that process is alive. Each is
charged to the test whose setup or call was running at the container's creation time (a module
fixture's audit goes to the first test that needed it, as in `--durations`). Containers owned by
processes that left the tree (a daemonised Ray node) are not seen: the counts are a floor.
"""
from __future__ import annotations

import bisect
import json
import os
import subprocess
import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path


def _ancestors(pid: int) -> set[int]:
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the command name: ppid
    return seen


class PodmanCounter:
    """Containers created by this process's tree, by test node id."""

    def __init__(self) -> None:
        self.me = os.getpid()
        self.starts: list[tuple[float, str]] = []  # (when a test began, its node id), in order
        self.created: list[tuple[float, str]] = []  # (creation time, testjack.session) of ours
        self._seen: set[str] = set()  # container ids counted: podman 4.3's file logger writes many creations twice
        self._proc: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._proc = subprocess.Popen(["podman", "events", "--filter", "type=container", "--filter",
                                       "event=create", "--format", "json"],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                event = json.loads(line)
                labels = event.get("Attributes") or {}
                pid = int(labels.get("testjack.pid", "0"))
            except ValueError:
                continue
            cid = str(event.get("ID") or "")
            if cid in self._seen:
                continue
            if pid and self.me in _ancestors(pid):
                self._seen.add(cid)
                self.created.append((_epoch(event.get("Time", "")), labels.get("testjack.session", "")))

    def test_started(self, nodeid: str) -> None:
        self.starts.append((time.time(), nodeid))

    def stop(self) -> dict[str, dict[str, int]]:
        """Containers per test node id, and per Sandbox session within it (stops the stream
        after the last events arrived)."""
        if self._proc is not None:
            time.sleep(3)  # the events log is tailed: let the last creations through
            self._proc.terminate()
            self._proc.wait(30)
        if self._thread is not None:
            self._thread.join(30)
        times = [t for t, _ in self.starts]
        counts: dict[str, Counter[str]] = {}
        for created, session in self.created:
            i = bisect.bisect_right(times, created) - 1
            test = self.starts[i][1] if i >= 0 else "(session start)"
            counts.setdefault(test, Counter())[_session_name(session)] += 1
        return {test: dict(by) for test, by in counts.items()}


def _epoch(stamp: str) -> float:
    # podman prints nanoseconds; Python reads microseconds.
    head, _, rest = stamp.partition(".")
    frac = "".join(ch for ch in rest if ch.isdigit())[:6]
    try:
        return datetime.fromisoformat(f"{head}.{frac or '0'}+00:00").timestamp()
    except ValueError:
        return time.time()


def _session_name(label: str) -> str:
    """A Sandbox session's label without its unique tail: `tj-demo-scripts-…` → `demo-scripts`;
    an audit's session (`tj-<date>-<time>-…`) → `audit`."""
    parts = label.removeprefix("tj-").split("-")
    if parts and parts[0].isdigit():
        return "audit"
    return "-".join(parts[:-1]) or label  # the last part is the session's random token


def by_file(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    files: Counter[str] = Counter()
    for nodeid, by in counts.items():
        files[nodeid.split("::", 1)[0]] += sum(by.values())
    return dict(files)
