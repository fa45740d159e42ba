"""Our own containers.conf, so podman works on hosts with tight rlimits or cgroup v1.

Podman's default rlimits for root exceed the hard limits on some hosts and every start fails;
crun refuses cgroup v1 hybrid hosts. We keep a private config and pass it via CONTAINERS_CONF
to every podman process we start (CLI and service) instead of touching the system config.
"""
from __future__ import annotations

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


def choose_runtime() -> str:
    """crun where it works (cgroup v2), runc on v1/hybrid hosts where crun refuses to start."""
    forced = os.environ.get("TESTJACK_RUNTIME")
    if forced:
        return forced
    have_crun = shutil.which("crun") is not None
    have_runc = shutil.which("runc") is not None
    if _cgroup_v1() and have_runc:
        return "runc"
    if have_crun:
        return "crun"
    return "runc" if have_runc else "crun"


def conf_path() -> Path:
    return data_dir() / "containers.conf"


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
           timeout: float | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["podman", *args], env=podman_env(), check=check, input=input, timeout=timeout,
        stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE if capture else None,
    )
