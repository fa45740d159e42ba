"""Where the CPU of one whole demo audit goes, as the shared fixture runs it
(`python -m tests.perf.audit_cpu [OUT] [-- extra audit args]`; not in the table: minutes, no
baseline). Prints one JSON object: CPU seconds of the CLI process, of the podman service (and the
runc calls it waits for), of conmon, runc and the containers' processes (collected as a child
subreaper, as tests/perf/lifecycle_cpu.py does), of the containers alone (their cpuacct cgroups,
sampled while they live: cgroup v1 with podman's cgroupfs manager; 0 where that is not what this
host has), the containers by what they ran, and the podman API requests by endpoint.

The CLI runs in a child that counts its requests to the service (requests.Session.send, wrapped
only to count) and writes them out at exit. The machine is shared: CPU seconds are the figures
to compare, wall seconds and load are context.

The lightweight demo audit (2026-12-04, load 6 on 2 cores, worlds already built): 255 containers
(169 runs as their main process, 71 kept alive for one exec: 54 T0 runs through the benchmark's
verifier and 17 fresh execs, 15 agents' live worlds), 1,863 API requests, 255 CPU seconds: 176 in
the containers' own processes, 34 in conmon, runc and podman's cleanup, 36 in the service, 8 in
the CLI. Since the gate opens with a signal from the host and one-off commands are main processes
too (2026-12-04 evening, load 11-21): 1,609 requests (6.3 per container: 5 per gated run), 239 of
the 255 containers run as the main process, 70 execs (the live worlds' own).
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from .lifecycle_cpu import PR_SET_CHILD_SUBREAPER, SETTLE, _proc_cpu, _reap

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "benchmarks" / "demo"
CGROUPS = Path("/sys/fs/cgroup/cpuacct/libpod_parent")

# Runs in the CLI child: counts each request by method and endpoint (ids cut out) and notes
# every container it creates with what it runs and each exec's command.
COUNTING = r"""
import atexit, json, os, re, runpy, sys, time, collections, requests
counts, made, execs = collections.Counter(), [], []
send = requests.Session.send
def counted(self, request, **kw):
    path = re.sub(r"^.*?/libpod", "", request.url.split("?", 1)[0])
    path = re.sub(r"/(containers|exec|images)/(?!(?:create|json)$)[^/]+(?=/|$)", r"/\1/X", path)
    resp = send(self, request, **kw)
    counts[f"{request.method} {path}"] += 1
    if resp.ok and path in ("/containers/create", "/containers/X/exec"):
        body = json.loads(request.body or b"{}")
        if path == "/containers/create":
            made.append({"id": resp.json()["Id"], "command": " ".join(map(str, body.get("command") or []))[:80]})
        else:
            execs.append(request.url.split("/containers/")[1].split("/")[0])
    return resp
requests.Session.send = counted
atexit.register(lambda: open(os.environ["TJ_PERF_REQUESTS"], "w").write(
    json.dumps({"requests": counts, "containers": made, "execs": execs})))
sys.argv = ["testjack-tui", *sys.argv[1:]]
runpy.run_module("testjack_tui.cli", run_name="__main__")
"""


class CgroupSampler(threading.Thread):
    """The highest cpuacct.usage seen of each container's cgroup (gone once it is removed)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[str, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                names = [n for n in os.listdir(CGROUPS) if n.startswith("libpod-")]
            except OSError:
                return
            for name in names:
                try:
                    used = int((CGROUPS / name / "cpuacct.usage").read_text())
                except (OSError, ValueError):
                    continue
                cid = name[len("libpod-"):].split(".")[0]
                self.seen[cid] = max(used, self.seen.get(cid, 0))


def _kind(container: dict, execs: Counter[str]) -> str:
    if not container["command"].startswith("sleep"):
        return "run as the main process"
    n = execs[container["id"][:12]] + execs[container["id"]]
    return {0: "kept alive, no exec", 1: "kept alive, one exec"}.get(n, "kept alive, several execs (live world)")


def measure(out: Path, extra: list[str]) -> dict:
    from testjack_tui.sandbox.service import PodmanService

    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.environ["TESTJACK_HOME"] = str(out / "service-home")
    service = PodmanService().start()
    spid = service.owned_pid()
    assert spid is not None
    keep = {spid}
    _reap(keep, 1.0)
    sampler = CgroupSampler()
    sampler.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    service0, load0, t0 = _proc_cpu(spid), os.getloadavg()[0], time.monotonic()
    env = dict(os.environ, TESTJACK_HOME=str(out / "home"), TESTJACK_PODMAN_SOCKET=service.url or "",
               TJ_PERF_REQUESTS=str(out / "requests.json"))
    cli = subprocess.Popen([sys.executable, "-c", COUNTING, "audit", str(DEMO), "--headless", "--auto-approve",
                            "--seed", "0", *extra, "--out", str(out / "audit")],
                           cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    keep.add(cli.pid)
    reaping = threading.Event()

    def reap_orphans() -> None:  # conmon and podman's cleanup processes land here
        while not reaping.wait(1.0):
            _reap(keep, 0.0)
    threading.Thread(target=reap_orphans, daemon=True).start()
    assert cli.stdout is not None
    output = cli.stdout.read().decode(errors="replace")
    _, status, cli_usage = os.wait4(cli.pid, 0)  # not Popen.wait: its rusage is the CLI's own CPU
    code = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    service_cpu = _proc_cpu(spid) - service0
    reaping.set()
    _reap(keep - {cli.pid}, SETTLE)
    sampler.stop.set()
    sampler.join()
    service_total = _proc_cpu(spid)  # what its reaping adds to this process's children
    service.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (out / "audit.log").write_text(output)
    assert code == 0, output[-3000:]
    counted = json.loads((out / "requests.json").read_text())
    cli_cpu = cli_usage.ru_utime + cli_usage.ru_stime
    children = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    execs = Counter(c[:12] for c in counted["execs"])
    by_kind: Counter[str] = Counter()
    cpu_by_kind: Counter[str] = Counter()
    for container in counted["containers"]:
        kind = _kind(container, execs)
        by_kind[kind] += 1
        cpu_by_kind[kind] += sampler.seen.get(container["id"], 0) / 1e9
    containers_cpu = sum(cpu_by_kind.values())
    requests = Counter(counted["requests"])
    return {
        "wall_s": round(wall, 1), "load_at_start": round(load0, 1), "cores": os.cpu_count(),
        "cli_cpu_s": round(cli_cpu, 2),
        "service_cpu_s": round(service_cpu, 2),
        # Reaped here: the CLI and the service (counted above), conmon, runc, the containers.
        "conmon_runc_and_containers_cpu_s": round(children - cli_cpu - service_total, 2),
        "containers_cpu_s": round(containers_cpu, 2),
        "containers": len(counted["containers"]),
        "containers_by_kind": {k: {"count": n, "cpu_s": round(cpu_by_kind[k], 1)} for k, n in by_kind.most_common()},
        "requests": sum(requests.values()),
        "requests_by_endpoint": dict(requests.most_common()),
    }


def main() -> None:
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    out = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="tj-audit-cpu-"))
    out.mkdir(parents=True, exist_ok=True)
    result = measure(out, extra)
    print(json.dumps(result, indent=1))
    (out / "audit_cpu.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
