"""CPU seconds podman spends on one fresh container whose command is its main process (the
least a fresh container per run costs): create, attach, start, follow the output to the end,
remove.

Runs in a child process of its own (`python -m tests.perf.lifecycle_cpu IMAGE COUNT WIDTH`)
that makes itself a child subreaper: conmon double-forks away from the podman service, so
only a subreaper collects the CPU of conmon, runc and podman's cleanup processes (their
rusage arrives when it reaps them). The service is this child's own, started by its Sandbox,
and its CPU is read from /proc. Prints one JSON line: {"cpu_per_container": s, "count": n}.
"""
from __future__ import annotations

import asyncio
import ctypes
import json
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor

PR_SET_CHILD_SUBREAPER = 36
TICKS = os.sysconf("SC_CLK_TCK")
SETTLE = 15.0  # seconds to wait for conmon and podman's cleanup processes to exit


def _proc_cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime


def _children(keep: set[int]) -> tuple[list[int], list[int]]:
    """(zombie children, live children) of this process, `keep` left out."""
    me, zombies, alive = os.getpid(), [], []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in keep:
            continue
        try:
            state, ppid = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if int(ppid) == me:
            (zombies if state == "Z" else alive).append(int(name))
    return zombies, alive


def _reap(keep: set[int], wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        zombies, alive = _children(keep)
        for pid in zombies:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not alive or time.monotonic() > deadline:
            return
        time.sleep(0.2)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


async def measure(image: str, count: int, width: int) -> float:
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.containers import create_container, remove_container
    from testjack_tui.sandbox.execs import pump_frames
    from testjack_tui.sandbox.output import OutputCollector

    async with Sandbox(session="perf-lifecycle") as sb:
        client = sb.service.client()
        service = sb.service.owned_pid()
        keep = {pid for pid in (service, getattr(sb._reaper, "pid", None)) if pid}

        def cycle(_: int) -> None:
            container = create_container(client, image, sb._labels("perf-lifecycle"), sb.limits,
                                         command=["true"])
            try:
                stream = client.api.post(f"/containers/{container.id}/attach",
                                         params={"stream": True, "stdout": True, "stderr": True},
                                         stream=True)
                client.api.post(f"/containers/{container.id}/start").raise_for_status()
                pump_frames(stream.raw, OutputCollector("lifecycle", keep_log=False))
                stream.close()
            finally:
                remove_container(client, container.id)

        _reap(keep, 1.0)
        cpu0, service0 = _children_cpu(), _proc_cpu(service) if service else 0.0
        with ThreadPoolExecutor(max_workers=width) as pool:
            list(pool.map(cycle, range(count)))
        _reap(keep, SETTLE)
        used = _children_cpu() - cpu0 + ((_proc_cpu(service) - service0) if service else 0.0)
    return used / count


def main() -> None:
    image, count, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    per = asyncio.run(measure(image, count, width))
    print(json.dumps({"cpu_per_container": per, "count": count}))


if __name__ == "__main__":
    main()
