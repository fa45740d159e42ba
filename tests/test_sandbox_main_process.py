"""Test runs as the main process of their fresh container (sandbox/main_process.py): no exec,
a gate that holds pre-started runs until their turn, and everything a run owes its caller
(outcomes, canaries, timeouts, the disk limit) as with an exec. Real podman, a tiny task."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from testjack_tui.sandbox import Limits, Sandbox
from testjack_tui.sandbox.selftest import F2P, FIXED_CALC, tiny_task, trial_for

pytestmark = pytest.mark.podman

SIGNALS = {"tests/test_tj_signals.py": (
    "import os, signal\n\n"
    "def test_no_signal_is_blocked_and_sigusr1_is_ours():\n"
    "    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()\n"
    "    for sig in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGUSR1, signal.SIGTERM):\n"
    "        assert signal.getsignal(sig) == signal.SIG_DFL, sig\n"
    "    got = []\n"
    "    signal.signal(signal.SIGUSR1, lambda *a: got.append(1))\n"
    "    os.kill(os.getpid(), signal.SIGUSR1)\n"
    "    assert got == [1]\n"
    "    assert not [k for k in os.environ if k.startswith('TJ_')]\n")}


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("main-process"))


def no_exec(monkeypatch):
    """Make every exec fail: a run that still answers used none."""
    import testjack_tui.sandbox.core as core
    import testjack_tui.sandbox.testruns as testruns

    def refuse(*args, **kwargs):
        raise AssertionError("an exec was used")
    monkeypatch.setattr(testruns, "run_exec", refuse)
    monkeypatch.setattr(core, "run_exec", refuse)


async def test_a_witness_run_on_a_trial_needs_no_exec_and_leaves_the_tests_nothing_of_ours(
        task, monkeypatch, podman_requests):
    import testjack_tui.sandbox.main_process as main_process

    no_exec(monkeypatch)
    waits = []
    real_wait = main_process._exit_code
    monkeypatch.setattr(main_process, "_exit_code", lambda *a: (waits.append(1), real_wait(*a))[1])
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    events = []
    async with Sandbox(listener=events.append, session="t-main") as sb:
        world = await sb.prepare(task, "model", trial)
        assert world.user  # trial code runs as the trial user: the case this path is for
        events.clear()  # the run's container only, whether or not the world was cached
        before = len(podman_requests)
        run = await sb.run_tests(world, [*F2P, *SIGNALS], files=SIGNALS, isolate_harness=True)
    assert run.canaries == "ok", run.tampering
    assert all(run.status(i) == "passed" for i in F2P), run.exec.output[-1500:]
    assert run.status("tests/test_tj_signals.py::test_no_signal_is_blocked_and_sigusr1_is_ours") == "passed", \
        run.exec.output[-1500:]
    # pytest's own exit code (1: the canaries include tests that must fail), no word of ours.
    assert run.exec.exit_code == 1 and "TJ-GATE" not in run.exec.output and "TJ-REPORT" not in run.exec.output
    assert waits == []  # the exit status came with the trailer: no `wait` round trip to podman
    # a cached world's build may still be removing its container: only the run's containers
    ours = {e.container for e in events if e.kind == "created" and e.world == world.name}
    kinds = [e.kind for e in events if e.container in ours]
    assert kinds[0] == "created" and "running" in kinds and "exited" in kinds
    assert kinds.index("running") < kinds.index("exited") < kinds.index("removed")
    # Five requests to podman for the run: create, attach, start, one inspect while it waits at
    # its gate (the gate opens with a signal from this host, not the API's kill), the removal.
    (cid,) = ours
    run_requests = [r for r in podman_requests[before:] if r.endswith("/containers/create") or f"/{cid}" in r]
    assert sorted(r.split(" ")[0] + " " + r.rsplit("/", 1)[-1] for r in run_requests
                  if not r.startswith("DELETE")) == ["GET json", "POST attach", "POST create", "POST start"], run_requests
    assert len(run_requests) == 5 and run_requests[-1].startswith("DELETE"), run_requests


async def test_a_hung_run_times_out_and_a_disk_filler_is_killed_at_the_limit(task, monkeypatch):
    no_exec(monkeypatch)
    hang = {"tests/test_tj_hang.py": "import time\n\ndef test_hang():\n    time.sleep(600)\n"}
    fill = {"tests/test_tj_fill.py": ("def test_fill():\n    block = b'x' * (1 << 20)\n"
                                      "    with open('fill.bin', 'wb') as fh:\n"
                                      "        for _ in range(400):\n            fh.write(block)\n"
                                      "            fh.flush()\n"
                                      "    __import__('time').sleep(600)\n")}
    limits = Limits(memory_mb=512, pids=128, cpus=1.0, disk_mb=64, file_mb=512)
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    async with Sandbox(session="t-main-limits", limits=limits, concurrency=2) as sb:
        world = await sb.prepare(task, "model", trial)
        # The disk filler runs while the hung run waits for its timeout (a container each).
        hung, filled = await asyncio.gather(sb.run_tests(world, list(hang), files=hang, timeout=8),
                                            sb.run_tests(world, list(fill), files=fill, timeout=300))
    assert hung.exec.timed_out and hung.status("tests/test_tj_hang.py::test_hang") == "timed_out"
    assert hung.exec.exit_code is None  # killed at its timeout, not ended by itself
    assert filled.exec.exit_code is not None  # no trailer from a killed wrapper: podman's `wait` says
    assert filled.exec.limit_hit == "disk" and not filled.exec.timed_out, filled.exec.output[-800:]
    assert filled.status("tests/test_tj_fill.py::test_fill") != "passed"


async def test_a_run_whose_wrapper_never_reaches_its_gate_is_run_with_an_exec(task, monkeypatch):
    """An image whose wrapper cannot start as the main process (here: the gate is never asked
    for, so the wrapper runs straight through) loses nothing: the run is made again as an exec."""
    import testjack_tui.sandbox.core as core
    import testjack_tui.sandbox.testruns as testruns

    monkeypatch.setattr(core, "GATE_ENV", "TJ_NO_SUCH_GATE")
    execs = []
    real = testruns.run_exec
    monkeypatch.setattr(testruns, "run_exec", lambda *a, **k: (execs.append(1), real(*a, **k))[1])
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    async with Sandbox(session="t-main-fallback") as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, list(F2P))
    assert execs == [1]
    assert run.canaries == "ok" and all(run.status(i) == "passed" for i in F2P), run.exec.output[-1500:]


async def test_read_only_worlds_keep_the_exec_path(task, monkeypatch):
    """A read-only root's repo mount belongs to the container's user: those runs stay execs."""
    import testjack_tui.sandbox.testruns as testruns

    execs = []
    real = testruns.run_exec
    monkeypatch.setattr(testruns, "run_exec", lambda *a, **k: (execs.append(1), real(*a, **k))[1])
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    limits = dataclasses.replace(Limits(), read_only=True)
    async with Sandbox(session="t-main-ro", limits=limits) as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, list(F2P))
    assert execs == [1]
    assert run.canaries == "ok" and all(run.status(i) == "passed" for i in F2P), run.exec.output[-1500:]


async def test_a_copy_podman_drops_once_is_made_again_and_one_it_always_drops_is_named(task, refuse_copies):
    from testjack_tui.errors import SandboxError

    events = []
    async with Sandbox(listener=events.append, session="t-copy") as sb:
        world = await sb.prepare(task, "null")
        events.clear()
        asked = refuse_copies(1)
        result = await sb.exec(world, ["cat"], stdin="the candidate's source\n")
        assert (result.exit_code, result.output) == (0, "the candidate's source\n")
        assert len(asked) == 2  # the dropped copy and the one that went in

        asked = refuse_copies(99)
        with pytest.raises(SandboxError, match=r"could not copy .* into container \w+: passing bulk input "
                                               r"to subprocess: write \|1: broken pipe$"):
            await sb.exec(world, ["cat"], stdin="x")
        assert len(asked) == 3  # bounded: three tries, then podman's own word
    made = [e.container for e in events if e.kind == "created"]
    assert len(made) == 2 and made == [e.container for e in events if e.kind == "removed"]
