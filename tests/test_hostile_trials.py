"""Hostile trials: each is contained and reported, the host stays responsive, the next world
works, and no container is left behind. Real podman, a tiny task built in the test."""
from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testjack_tui.sandbox import Limits, Sandbox
from testjack_tui.sandbox.labels import L_PID
from testjack_tui.sandbox.selftest import F2P, P2P, tiny_task, trial_for

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"


def hostile_source(name: str) -> str:
    """A committed hostile trial file (tests/fixtures/hostile/trials)."""
    return (HOSTILE / "trials" / name).read_text()

pytestmark = pytest.mark.podman

T0 = list(F2P + P2P)
HOSTILE_LIMITS = Limits(memory_mb=256, pids=128, cpus=1.0)


def calc_with(add_body: str) -> str:
    body = "\n".join("    " + line for line in add_body.strip("\n").splitlines())
    return f"def add(a, b):\n{body}\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module", autouse=True)
def nothing_left_behind():
    yield
    out = subprocess.run(["podman", "ps", "-aq", "--filter", f"label={L_PID}={os.getpid()}"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [], f"containers left behind: {out}"


class LoopTicks:
    """Counts the turns another coroutine gets while a hostile run goes on: a run that blocked
    the event loop would leave it none. (How late those turns come is measured by tests/perf.)"""

    def __init__(self):
        self.ticks = 0
        self._task = None

    async def _tick(self):
        while True:
            await asyncio.sleep(0.05)
            self.ticks += 1

    def __enter__(self):
        self._task = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(self, *exc):
        self._task.cancel()


def host_responds() -> bool:
    """A new process starts and ends on the host (the timeout is a hang guard)."""
    return subprocess.run([sys.executable, "-c", "pass"], timeout=120).returncode == 0


async def run_hostile(task, name: str, add_body: str, timeout: float = 20, **extra_files):
    trial = trial_for(task, name, {"calc/__init__.py": calc_with(add_body), **extra_files})
    async with Sandbox(session=f"hostile-{name}", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        with LoopTicks() as loop:
            run = await sb.run_tests(world, T0, timeout=timeout)
        assert loop.ticks >= 2, "the event loop was blocked while the hostile run went on"
        assert host_responds()
        # The next world works as if nothing happened.
        ref = await sb.prepare(task, "reference")
        after = await sb.run_tests(ref, T0)
        assert after.all_passed, {k: o.status for k, o in after.outcomes.items()}
    return world, run


async def test_fork_bomb_is_contained(task):
    world, run = await run_hostile(task, "forkbomb", """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
""", timeout=3)
    assert run.exec.timed_out
    assert run.status(F2P[0]) == "timed_out"


async def test_unbounded_allocation_is_killed_by_the_memory_limit(task):
    world, run = await run_hostile(task, "alloc", """
hog = []
while True:
    hog.append(bytearray(32 * 1024 * 1024))
""", timeout=60)
    assert not run.exec.timed_out
    assert run.exec.exit_code == 137  # OOM-killed inside the container
    assert run.status(F2P[0]) == "error" and "137" in run.outcomes[F2P[0]].message


async def test_infinite_loop_times_out(task):
    world, run = await run_hostile(task, "loop", "while True:\n    pass\n", timeout=3)
    assert run.exec.timed_out
    assert {run.status(i) for i in T0} == {"timed_out"}


async def test_printing_200_mb_is_capped(task):
    trial = trial_for(task, "print", {"calc/__init__.py": calc_with(
        "import os\nfor _ in range(200):\n    os.write(1, b'z' * (1024 * 1024))\nreturn a + b\n")})
    seen = []
    # Default limits (1 GiB): pytest reads captured output back into memory; under 256 MiB the
    # memory limit would kill it first (contained too, but this test is about output caps).
    async with Sandbox(listener=seen.append, session="hostile-print") as sb:
        world = await sb.prepare(task, "model", trial)
        res = await sb.exec(world, ["python3", "-c", "import calc; calc.add(1, 2)"], timeout=120)
        run = await sb.run_tests(world, T0, timeout=120)  # pytest captures it; the tests still pass
    assert res.exit_code == 0 and not res.timed_out
    assert len(res.stdout_head) == 64 * 1024 and len(res.stdout_tail) < 70 * 1024
    assert res.log_path.stat().st_size < 21 * 1024 * 1024
    streamed = sum(len(e.text) for e in seen if e.kind == "output")
    assert streamed < 3 * 1024 * 1024  # the listener is not flooded
    assert run.all_passed


async def test_network_is_unreachable(task):
    world, run = await run_hostile(task, "network", """
import socket
socket.create_connection(("1.1.1.1", 53), timeout=3).close()
return a + b
""")
    assert run.status(F2P[0]) == "failed"
    message = run.outcomes[F2P[0]].message.lower()
    assert "unreachable" in message or "errno" in message


async def test_writes_outside_the_repo_stay_in_that_container(task, tmp_path):
    host_target = tmp_path / "escaped.txt"
    world, run = await run_hostile(task, "writer", f"""
import os
for path in ("/etc/evil", "/tmp/evil", {str(host_target)!r}, "/app/../root/evil"):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write("owned")
    except OSError:
        pass
return a + b
""")
    assert run.all_passed  # the trial itself is correct, only badly behaved
    assert not host_target.exists()
    async with Sandbox(session="hostile-writer2") as sb:
        res = await sb.exec(world, "test -e /etc/evil || test -e /tmp/evil || test -e /root/evil")
    assert res.exit_code == 1  # a fresh container from the snapshot: nothing leaked


def probes(output: str) -> dict[str, str]:
    return dict(line.split(" ", 2)[1:] for line in output.splitlines()
                if line.startswith("HOSTILE-PROBE ") and line.count(" ") >= 2)


async def test_trial_code_runs_unprivileged_without_capabilities(task):
    """Tests and commands in a world run as an unprivileged user without capabilities: the
    trial writes its repo and /tmp only, cannot give files to root, become root, or reach
    the process that reports results; a correct trial still passes."""
    trial = trial_for(task, "escalator", {"calc/__init__.py": hostile_source("escalate.py")})
    async with Sandbox(session="hostile-escalate", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, T0)
        shell = await sb.exec(world, "id -u; touch /etc/hostile; touch /usr/hostile; "
                                     "touch calc/ok && echo repo-ok; chown 0 calc/ok || echo no-chown; "
                                     "grep CapEff /proc/self/status")
    assert run.all_passed and run.canaries == "ok", {k: o.status for k, o in run.outcomes.items()}
    seen = probes(run.exec.output)
    for name in ("write-etc", "write-usr", "write-root-home", "patch-pytest", "patch-runner",
                 "chown-to-root", "setuid-root", "signal-reporter", "read-reporter-env"):
        assert seen.get(name, "").startswith("refused:"), (name, seen)
    assert seen["write-repo"] == "done" and seen["write-tmp"] == "done"
    assert seen["uid"] != "0" and seen["CapEff"] == "0000000000000000" and seen["NoNewPrivs"] == "1"
    assert world.user and world.user.split(":")[0] == seen["uid"]
    out = shell.output
    assert out.splitlines()[0] == seen["uid"]
    assert "Permission denied" in out and "repo-ok" in out and "no-chown" in out
    assert "CapEff:\t0000000000000000" in out


async def test_deleting_the_tests_is_reported_and_undone_for_witness_runs(task):
    trial = trial_for(task, "deleter", {"calc/__init__.py": calc_with("return a + b"),
                                        "tests/test_sub.py": None})
    async with Sandbox(session="hostile-deleter", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        plain = await sb.run_tests(world, T0)
        isolated = await sb.run_tests(world, T0, isolate_harness=True)
    assert world.tampered == ("tests/test_sub.py",)
    assert plain.status(P2P[0]) == "not_found"
    assert isolated.status(P2P[0]) == "passed" and isolated.neutralised == ["tests/test_sub.py"]


async def test_conftest_hook_passing_everything_is_caught(task):
    trial = trial_for(task, "hooker", {"calc/__init__.py": calc_with("return 42"),
                                       "conftest.py": hostile_source("conftest_pass_all.py")})
    async with Sandbox(session="hostile-hook", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        official = await sb.run_tests(world, T0)
        witness = await sb.run_tests(world, list(F2P), isolate_harness=True)
    assert world.tampered == ("conftest.py",)
    # T0 as the benchmark runs it would be fooled; the canaries prove the tampering and void it.
    assert official.canaries == "tampered" and not official.all_passed
    assert {official.status(i) for i in T0} == {"unverifiable"}
    assert any("must fail was reported passed" in p for p in official.tampering)
    # With the harness restored, the witness run is clean and the failure is real.
    assert witness.canaries == "ok"
    assert {witness.status(i) for i in F2P} == {"failed"} and witness.neutralised == ["conftest.py"]


WITNESS = {"tests/test_witness_add.py": "from calc import add\n\n\ndef test_add_sums():\n"
                                        "    assert add(20, 22) == 42\n"}


async def test_forged_trailer_and_rewritten_report_are_never_certified(task):
    """The trial hunts for the report trailer's mark (parent environ and memory, every process,
    its own objects) and rewrites the JUnit report at exit: the mark is out of its reach and the
    canaries catch the rewritten report."""
    trial = trial_for(task, "forger", {"calc/__init__.py": hostile_source("forged_trailer.py")})
    async with Sandbox(session="hostile-forger", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        official = await sb.run_tests(world, T0)
        witness = await sb.run_tests(world, list(WITNESS), files=WITNESS, isolate_harness=True)
    assert "HOSTILE-MARKS-FOUND 0" in official.exec.output
    for run in (official, witness):
        assert run.canaries == "tampered", run.tampering
        assert not any(o.status == "passed" for o in run.outcomes.values())
    # Reported under the name its author gave it.
    assert "tests/test_witness_add.py" in witness.outcomes
    assert all(k.startswith("tests/test_witness_add.py") for k in witness.outcomes)
    assert "tests/test_witness_add.py" not in witness.exec.output  # ran under a random name


SNIFFED = {"tests/test_witness_add.py": "from calc import add\n\n\nclass TestAddWitness:\n"
                                         "    def test_add_sums(self):\n"
                                         "        assert add(40, 3) == 43\n"}


async def test_a_trial_cannot_single_out_a_witness_by_its_names(task):
    """The trial computes correctly only when called from a test named like the witness (file,
    function, PYTEST_CURRENT_TEST): the witness runs under random file, class and function names,
    so it refutes the trial, and is reported under the names its author gave it."""
    trial = trial_for(task, "sniffer", {"calc/__init__.py": hostile_source("name_sniffer.py")})
    witness_id = "tests/test_witness_add.py::TestAddWitness::test_add_sums"
    async with Sandbox(session="hostile-sniffer", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, [witness_id], files=SNIFFED, isolate_harness=True)
    assert run.canaries == "ok" and run.status(witness_id) == "failed", run.outcomes
    assert "test_add_sums" in run.outcomes[witness_id].message  # mapped back for the reader
    assert "TestAddWitness" not in run.exec.output and "test_add_sums" not in run.exec.output


async def test_library_level_pytest_patch_is_never_certified(task):
    """Library code (not a harness file, nothing to restore) patches pytest's reports with the
    module name built from chr(): the witness run is void, never a pass."""
    trial = trial_for(task, "patcher", {"calc/__init__.py": hostile_source("pytest_patch_chr.py")})
    async with Sandbox(session="hostile-patcher", limits=HOSTILE_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        witness = await sb.run_tests(world, list(WITNESS), files=WITNESS, isolate_harness=True)
    assert world.tampered == ()
    assert witness.canaries == "tampered"
    assert witness.status("tests/test_witness_add.py") == "unverifiable"
    assert "proven tampering" in witness.outcomes["tests/test_witness_add.py"].message


DISK_LIMITS = Limits(memory_mb=384, pids=128, cpus=1.0, disk_mb=64, file_mb=48, read_only=True)


async def test_disk_fill_stops_at_the_writable_tmpfs_quota(task):
    """The root filesystem is read-only; the repo and /tmp are tmpfs mounts of disk_mb each, so
    a fill gets ENOSPC there and EROFS everywhere else, and nothing reaches the host's disk; one
    file cannot pass file_mb (RLIMIT_FSIZE)."""
    trial = trial_for(task, "filler", {"calc/__init__.py": hostile_source("disk_fill.py")})
    async with Sandbox(session="hostile-disk", limits=DISK_LIMITS) as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, list(F2P), timeout=120)
        big = await sb.exec(world, ["python3", "-c", "open('/tmp/big', 'wb').write(bytes(100 << 20))"])
    assert not run.exec.timed_out and run.status(F2P[0]) == "failed"
    filled = {line.split()[1]: line.split()[2:] for line in run.exec.output.splitlines()
              if line.startswith("HOSTILE-FILLED ")}
    assert set(filled) == {"/tmp", "/app", "/var/tmp", "/"}, run.exec.output[-2000:]
    for folder in ("/tmp", "/app"):
        mib, error = filled[folder]
        assert int(mib) <= 64 and error == "No-space-left-on-device", (folder, mib, error)
    assert filled["/var/tmp"] == ["0", "Read-only-file-system"] == filled["/"]
    assert big.exit_code != 0 and "File too large" in big.output  # the file-size limit


async def test_task_memory_request_is_capped_by_the_ceiling(task):
    """A task asking for memory_mb = 3000 gets at most the configured ceiling."""
    hungry = dataclasses.replace(task, environment=dataclasses.replace(task.environment, memory_mb=3000))
    trial = trial_for(hungry, "hog", {"calc/__init__.py": hostile_source("memory_hog.py")})
    limits = dataclasses.replace(HOSTILE_LIMITS, max_memory_mb=384)
    async with Sandbox(session="hostile-memory", limits=limits) as sb:
        world = await sb.prepare(hungry, "model", trial)
        run = await sb.run_tests(world, list(F2P), timeout=60)
    assert world.memory_mb == 3000
    assert run.exec.exit_code == 137 and run.status(F2P[0]) != "passed"


async def test_cpu_hog_is_stopped_by_its_cpu_time_limit(task):
    """A run's test process gets a CPU-time limit (a share of its timeout): a busy loop frees its
    slot long before the wall-clock timeout."""
    trial = trial_for(task, "cpuhog", {"calc/__init__.py": calc_with("while True:\n    pass\n")})
    limits = dataclasses.replace(HOSTILE_LIMITS, cpu_share=0.01, min_cpu_seconds=1)
    async with Sandbox(session="hostile-cpu", limits=limits) as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, list(F2P), timeout=120)
    # Stopped by its 1.2 CPU seconds, not by the 120 s timeout (wall time depends on the load).
    assert not run.exec.timed_out and run.exec.exit_code == 152  # SIGXCPU
    assert run.status(F2P[0]) != "passed"


OWNER = """
import asyncio, os, sys
from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.selftest import tiny_task
from pathlib import Path

async def main():
    task = tiny_task(Path(sys.argv[1]))
    async with Sandbox(session="hostile-killed") as sb:
        world = await sb.prepare(task, "reference")
        async with sb.open(world):
            print("READY", sb.service.owned_pid(), flush=True)
            await asyncio.sleep(600)

asyncio.run(main())
"""


def test_kill_9_leaves_no_container_and_no_service_for_long(tmp_path, own_podman_service):
    """After a kill -9 of its owner, the reaper removes the owner's keep-alive container and
    stops its private podman service within seconds (not at the next start-up)."""
    import signal

    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path)], stdout=subprocess.PIPE,
                             text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        line = ""
        deadline = time.monotonic() + 300
        while not line.startswith("READY") and time.monotonic() < deadline:
            line = owner.stdout.readline()
            assert line or owner.poll() is None, "the owner died before it was ready"
        service = int(line.split()[1])
        mine = ["podman", "ps", "-aq", "--filter", f"label={L_PID}={owner.pid}"]
        assert subprocess.run(mine, capture_output=True, text=True).stdout.split()
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = subprocess.run(mine, capture_output=True, text=True).stdout.split()
            service_alive = os.path.exists(f"/proc/{service}")
            if not left and not service_alive:
                break
            time.sleep(1)
        assert not left and not service_alive, (left, service_alive)
    finally:
        if owner.poll() is None:
            owner.kill()


def new_file_patch(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}")


async def test_disk_fill_in_the_benchmarks_own_flow_is_killed_at_the_disk_limit():
    """The benchmark's test.sh runs on a writable root (as the benchmark runs it): a trial's
    conftest.py filling the disk there is measured and killed past disk_mb."""
    from testjack_tui.benchmarks import load_benchmark

    bench = load_benchmark(Path(__file__).parent / "fixtures" / "deepswe")
    task = bench.tasks[next(t for t in bench.tasks if t.endswith("fees-compound"))]
    filler = hostile_source("disk_fill.py") + "\n\nadd(1, 2)\n"
    trial = dataclasses.replace(bench.trials_of(task.id)[0], id="fees-compound__filler",
                                patch=new_file_patch("conftest.py", filler))
    limits = Limits(memory_mb=512, pids=128, cpus=1.0, disk_mb=64, file_mb=16)
    async with Sandbox(session="hostile-official-disk", limits=limits) as sb:
        run = await sb.run_official(task, "model", trial)
    assert run.exec.limit_hit == "disk" and not run.exec.timed_out, run.exec.output[-1500:]
    assert run.reward != 1.0 and not any(o.status == "passed" for o in run.outcomes.values())
