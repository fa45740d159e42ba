"""Our own containers.conf, so podman works on hosts with tight rlimits or cgroup v1.

Podman's default rlimits for root exceed the hard limits on some hosts and every start fails;
crun refuses cgroup v1 hybrid hosts. We keep a private config and pass it via CONTAINERS_CONF
to every podman process we start (CLI and service) instead of touching the system config.

Podman's event log is off (`events_logger = "none"`): nothing of ours reads it, and writing it
costs the service and every container's exit (podman's cleanup process) a locked append per
event, about 10 ms of podman's ~200 ms CPU per container. TESTJACK_PODMAN_EVENTS names a
logger to keep it (e.g. "file": the test suite's container counter, tests/podman_count.py,
reads it).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from testjack_tui.paths import data_dir

ULIMITS = ("nofile=1024:1024", "nproc=1024:1024")


def _cgroup_v1() -> bool:
    # cgroup2 mounted at /sys/fs/cgroup means unified; anything else is v1 or hybrid.
    try:
        return Path("/sys/fs/cgroup/cgroup.controllers").exists() is False
    except OSError:
        return True


def _heuristic_runtime() -> str:
    have_crun = shutil.which("crun") is not None
    have_runc = shutil.which("runc") is not None
    if _cgroup_v1() and have_runc:
        return "runc"
    if have_crun:
        return "crun"
    return "runc" if have_runc else "crun"


def _probe_file() -> Path:
    return data_dir() / "runtime.json"


def _host_key() -> str:
    # A probe result is valid for this cgroup layout and these runtime binaries.
    parts = ["v1" if _cgroup_v1() else "v2"]
    for name in ("crun", "runc"):
        path = shutil.which(name)
        parts.append(f"{name}={path}:{os.stat(path).st_mtime_ns if path else ''}")
    return "|".join(parts)


def choose_runtime() -> str:
    """The OCI runtime for our service: a probed result when we have one, else a guess
    (crun where it works, runc on cgroup v1/hybrid hosts where crun refuses to start)."""
    forced = os.environ.get("TESTJACK_RUNTIME")
    if forced:
        return forced
    try:
        probed = json.loads(_probe_file().read_text())
        if probed.get("key") == _host_key() and probed.get("runtime"):
            return str(probed["runtime"])
    except (OSError, ValueError):
        pass
    return _heuristic_runtime()


def probe_runtime(image: str, timeout: float = 60) -> tuple[str | None, dict[str, str]]:
    """Start a container with each installed runtime; remember the first that works.

    Returns (runtime or None, {runtime: error text}).
    """
    preferred = _heuristic_runtime()
    order = [preferred] + [r for r in ("crun", "runc") if r != preferred]
    errors: dict[str, str] = {}
    for runtime in order:
        if shutil.which(runtime) is None:
            errors[runtime] = "not installed"
            continue
        args = ["--runtime", runtime, "run", "--rm", "--network=none", "--label",
                "testjack.app=testjack-tui", *[a for u in ULIMITS for a in ("--ulimit", u)],
                image, "true"]
        try:
            res = podman(*args, check=False, timeout=timeout)
        except subprocess.TimeoutExpired:
            errors[runtime] = "timed out"
            continue
        if res.returncode == 0:
            path = _probe_file()
            path.write_text(json.dumps({"runtime": runtime, "key": _host_key()}))
            return runtime, errors
        errors[runtime] = (res.stderr or b"").decode(errors="replace").strip()[-300:]
    return None, errors


def conf_path() -> Path:
    return data_dir() / "containers.conf"


def events_logger() -> str:
    return os.environ.get("TESTJACK_PODMAN_EVENTS") or "none"


def write_conf() -> Path:
    path = conf_path()
    runtime = choose_runtime()
    text = (
        "# Written by testjack-tui; used only by the podman processes it starts.\n"
        "[containers]\n"
        f"default_ulimits = [{', '.join(repr(u).replace(chr(39), chr(34)) for u in ULIMITS)}]\n"
        "[engine]\n"
        f'runtime = "{runtime}"\n'
        "exit_command_delay = 10\n"
        f'events_logger = "{events_logger()}"\n'
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def podman_env() -> dict[str, str]:
    """Environment for podman child processes."""
    env = dict(os.environ)
    if "CONTAINERS_CONF" not in os.environ or os.environ.get("TESTJACK_OWN_CONF", "1") == "1":
        env["CONTAINERS_CONF"] = str(write_conf())
    return env


def podman(*args: str, check: bool = True, capture: bool = True, input: bytes | None = None,
           timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["podman", *args], env=podman_env(), check=check, input=input, timeout=timeout,
        stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE if capture else None,
    )
