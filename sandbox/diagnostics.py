"""Container checks for `testjack-tui doctor`: podman, runtime, service, limits, base image, disk.

Each check returns a Check with a fix hint. Blocking code; runs real containers.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

from testjack_tui.paths import cache_dir

from . import base_image, cleanup
from .containers import Limits, init_pid, remove_container, start_container
from .execs import ExecHandle, run_exec
from .labels import new_session_id, owner_labels
from .output import OutputCollector
from .podman_conf import choose_runtime, podman, probe_runtime
from .service import PodmanService


@dataclass
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail" | "skip"
    detail: str
    hint: str = ""


def check_podman() -> Check:
    if shutil.which("podman") is None:
        return Check("podman", "fail", "podman is not installed",
                     "install it: apt-get install -y podman runc (or your distribution's package)")
    try:
        res = podman("--version", check=False, timeout=30)
    except subprocess.TimeoutExpired:
        return Check("podman", "fail", "`podman --version` hangs", "check the podman installation")
    version = (res.stdout or b"").decode().strip()
    return Check("podman", "ok" if res.returncode == 0 else "fail", version or "podman does not run",
                 "" if res.returncode == 0 else "check the podman installation")


def check_base_image(fix: bool, log: Callable[[str], None]) -> Check:
    if base_image.base_image_ready():
        return Check("base image", "ok", base_image.BASE_IMAGE)
    if not fix:
        return Check("base image", "fail", f"{base_image.BASE_IMAGE} is missing or outdated",
                     "build it: testjack-tui doctor --fix (debootstrap, about a minute)")
    try:
        base_image.build_base_image(log=log)
    except Exception as exc:  # debootstrap missing, no mirror, podman failure
        return Check("base image", "fail", f"building {base_image.BASE_IMAGE} failed: {exc}",
                     "apt-get install -y debootstrap, check the Debian mirror, then doctor --fix")
    return Check("base image", "ok", f"{base_image.BASE_IMAGE} (built now)")


def check_runtime(have_image: bool) -> Check:
    if not have_image:
        return Check("runtime", "skip", f"{choose_runtime()} (guessed; not probed without the base image)")
    runtime, errors = probe_runtime(base_image.BASE_IMAGE)
    if runtime:
        tried = "; ".join(f"{k}: {v.splitlines()[-1] if v else '?'}" for k, v in errors.items())
        return Check("runtime", "ok", f"{runtime} starts containers" + (f" (not: {tried})" if tried else ""))
    detail = "; ".join(f"{k}: {v.strip().splitlines()[-1] if v.strip() else 'failed'}" for k, v in errors.items())
    return Check("runtime", "fail", f"no OCI runtime starts a container: {detail}",
                 "install runc (apt-get install -y runc); on cgroup v1 hosts crun does not work")


def check_service() -> tuple[Check, PodmanService | None]:
    service = PodmanService()
    started = time.monotonic()
    try:
        service.start()
    except Exception as exc:
        return Check("service", "fail", f"the podman API service did not start: {exc}",
                     "run `podman system service --time=0 unix:///tmp/x.sock` by hand to see why"), None
    how = "our own child service" if service.owned else f"configured service {service.url}"
    return Check("service", "ok", f"{how} answered in {time.monotonic() - started:.2f}s"), service


LIMITS_SCRIPT = r'''
mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max 2>/dev/null)
pids=$(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max 2>/dev/null)
echo "mem=$mem"; echo "pids=$pids"; echo "nofile=$(ulimit -n)"
echo "net=$(ls /sys/class/net | tr '\n' ' ')"
'''


def check_container_and_limits(service: PodmanService) -> list[Check]:
    client = service.client()
    limits = Limits(memory_mb=64, pids=64, cpus=0.5)
    try:
        container = start_container(client, base_image.BASE_IMAGE,
                                    owner_labels(new_session_id("doctor")), limits)
    except Exception as exc:
        return [Check("container", "fail", f"starting a container failed: {exc}",
                      "see podman-notes: runtime (runc on cgroup v1) and ulimits (nofile+nproc)")]
    checks = [Check("container", "ok", "a container starts with limits, init and network none")]
    try:
        handle = ExecHandle(service.client, container.id, init_pid(container))
        res = run_exec(handle, ["sh", "-c", LIMITS_SCRIPT], cwd="/", env={}, timeout=30,
                       collector=OutputCollector("doctor", keep_log=False))
        values = dict(line.split("=", 1) for line in res.stdout_head.splitlines() if "=" in line)
        problems = []
        if values.get("mem", "").strip() not in (str(64 * 1024 * 1024),):
            problems.append(f"memory limit reads {values.get('mem', '?')!r}")
        if values.get("pids", "").strip() != "64":
            problems.append(f"pids limit reads {values.get('pids', '?')!r}")
        if values.get("nofile", "").strip() != "1024":
            problems.append(f"nofile reads {values.get('nofile', '?')!r}")
        if values.get("net", "").split() not in (["lo"], []):
            problems.append(f"network interfaces: {values.get('net')}")
        if problems:
            checks.append(Check("limits", "fail", "; ".join(problems),
                                "the cgroup controllers (memory, pids) must be available to podman"))
        else:
            checks.append(Check("limits", "ok", "memory, pids, nofile enforced; only loopback network"))
        started = time.monotonic()
        handle = ExecHandle(service.client, container.id, init_pid(container))
        res = run_exec(handle, ["sh", "-c", "sleep 60 & sleep 60"], cwd="/", env={}, timeout=1,
                       collector=OutputCollector("doctor", keep_log=False))
        took = time.monotonic() - started
        if res.timed_out and took < 6:
            checks.append(Check("exec timeout", "ok", f"a hung command is killed after its timeout ({took:.1f}s)"))
        else:
            checks.append(Check("exec timeout", "fail", f"a 1 s timeout took {took:.1f}s",
                                "the exec's host pid must be visible (same pid namespace as podman)"))
    finally:
        remove_container(client, container.id)
    return checks


def check_leftovers(service: PodmanService, fix: bool) -> Check:
    client = service.client()
    from .labels import owner_dead
    dead = [c for c in cleanup.list_ours(client) if owner_dead(c.attrs.get("Labels") or {})]
    if not dead:
        return Check("leftovers", "ok", "no containers left behind by earlier runs")
    if fix:
        removed = cleanup.sweep(client)
        return Check("leftovers", "ok", f"removed {len(removed)} container(s) left by crashed runs")
    return Check("leftovers", "warn", f"{len(dead)} container(s) left by crashed runs",
                 "testjack-tui doctor --fix removes them (any run also sweeps them at start)")


def check_disk() -> Check:
    places = {"cache": str(cache_dir())}
    try:
        res = podman("info", "--format", "{{.Store.GraphRoot}}", check=False, timeout=30)
        root = (res.stdout or b"").decode().strip()
        if res.returncode == 0 and root:
            places["image storage"] = root
    except (subprocess.TimeoutExpired, OSError):  # podman missing or hung: the cache still counts
        pass
    worst = None
    for what, path in places.items():
        try:
            free = shutil.disk_usage(path).free
        except OSError:
            continue
        if worst is None or free < worst[1]:
            worst = (what, free, path)
    if worst is None:
        return Check("disk", "warn", "could not read free disk space")
    what, free, path = worst
    gib = free / 2**30
    if gib < 1:
        return Check("disk", "fail", f"{gib:.1f} GiB free for {what} ({path})",
                     "free space: `testjack-tui doctor --prune all` removes cached world snapshots")
    if gib < 5:
        return Check("disk", "warn", f"{gib:.1f} GiB free for {what} ({path})",
                     "worlds are image snapshots; podman image prune frees space")
    return Check("disk", "ok", f"{gib:.0f} GiB free for {what}")


def run_checks(fix: bool = False, log: Callable[[str], None] = lambda m: None) -> list[Check]:
    checks = [check_podman()]
    if checks[0].status == "fail":
        return checks + [check_disk()]
    image = check_base_image(fix, log)
    runtime = check_runtime(image.status == "ok")
    checks += [runtime]
    service_check, service = check_service()
    checks.append(service_check)
    checks.append(image)
    if service is not None:
        try:
            if image.status == "ok" and runtime.status != "fail":
                checks += check_container_and_limits(service)
            checks.append(check_leftovers(service, fix))
        finally:
            service.stop()
    checks.append(check_disk())
    return checks
