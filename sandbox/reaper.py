"""A watchdog that outlives its owner by seconds, not forever.

A `kill -9` gives the owner no chance to remove its containers or stop its private podman
service. Each Sandbox therefore starts a small detached process that polls the owner's pid
(same pid namespace: it is the owner's child) and, once the owner is gone, removes every
container labelled with the owner's pid and stops the service the owner started. A clean exit
stops the reaper first. The start-up sweep stays as the second line of defence.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from .labels import L_PID, LEASE_RENEW, process_start_time
from .podman_conf import podman_env

POLL = 1.0  # seconds between looks at the owner

# Runs as `python3 -I -S -c REAPER owner_pid owner_start service_pid`, detached.
REAPER = r"""
import os, signal, subprocess, sys, time

owner, start, service, label, poll = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])

def alive():
    try:
        with open("/proc/%s/stat" % owner, "rb") as fh:
            fields = fh.read().decode(errors="replace").rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return not start or (len(fields) > 19 and fields[19] == start)

while alive():
    time.sleep(poll)
try:
    out = subprocess.run(["podman", "ps", "-aq", "--filter", "label=%s=%s" % (label, owner)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60).stdout.split()
    if out:
        subprocess.run(["podman", "rm", "-f", "-t", "0"] + [c.decode() for c in out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
except Exception:
    pass
if service > 0:
    try:
        os.killpg(service, signal.SIGTERM)
    except OSError:
        pass
"""


def start_reaper(service_pid: int | None) -> subprocess.Popen[bytes] | None:
    """Start the watchdog for this process (and its service, when it owns one)."""
    me = os.getpid()
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", REAPER, str(me), process_start_time(me),
             str(service_pid or 0), L_PID, str(POLL)],
            env=podman_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, cwd="/")
    except OSError:
        return None  # the start-up sweep still cleans up after a crash


def stop_reaper(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class Lease:
    """The file our containers' L_LEASE label names, touched every LEASE_RENEW seconds by a
    daemon thread (not the event loop, which a long blocking call could stall)."""

    def __init__(self, path: str):
        self.path = path
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._touch()
        self._thread = threading.Thread(target=self._renew, daemon=True, name="tj-lease")
        self._thread.start()

    def _touch(self) -> None:
        try:
            with open(self.path, "a"):
                pass
            os.utime(self.path)
        except OSError:
            pass

    def _renew(self) -> None:
        while not self._stop.wait(LEASE_RENEW):
            self._touch()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        try:
            os.unlink(self.path)
        except OSError:
            pass
