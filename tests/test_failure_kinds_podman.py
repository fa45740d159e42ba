"""Resource trials under a witness only (issue 27.4), real podman: each passes T0's inputs and
hangs, fork-bombs, exhausts memory, prints endlessly or fills the disk on the witness's input.
Each comes out refuted INCORRECT_DESPITE_PASS with the resource named, a wrong-value trial fails
the assertion, and the sound control passes. One sandbox, one world per trial, one witness run
each, side by side (module-scoped)."""
from __future__ import annotations

import asyncio

import pytest

from testjack_tui.engine import failure_kinds as fk
from testjack_tui.engine.ambiguity import WitnessFacts, classify_witness, refutations
from testjack_tui.engine.runner import run_result
from testjack_tui.engine.verdicts import INCORRECT_DESPITE_PASS, FindingInput, WitnessRun, judge_trial
from testjack_tui.model import Trial
from testjack_tui.sandbox import Limits, Sandbox
from testjack_tui.sandbox.selftest import tiny_task, trial_for

pytestmark = pytest.mark.podman

PATH = "tests/test_witness_big.py"
WITNESS = {PATH: "from calc import add\n\n\ndef test_add_big():\n    assert add(1000003, 1) == 1000004\n"}
# 3 CPU seconds a run (60 * 0.05): the spinning trials are stopped there; pytest on the tiny repo
# needs well under one.
LIMITS = Limits(memory_mb=256, pids=128, cpus=1.0, disk_mb=64, file_mb=48, read_only=True,
                cpu_share=0.05, min_cpu_seconds=3)
# A hang guard for the runs, not a measurement: the controls and the trials that must reach one
# kind (memory, disk) run side by side with the spinning ones on a machine at load 20 (the sound
# control's run took 2 s of the 12 it had, at load 6). The spinning trial keeps 12: either of its
# kinds is right, and with time left our own run would spin it for its CPU seconds again.
TIMEOUT = 60.0
HANG_TIMEOUT = 12.0


def calc_with(on_witness: str) -> str:
    """add() right on T0's inputs, and `on_witness` on the witness's input only."""
    body = "\n".join("        " + line for line in on_witness.strip("\n").splitlines())
    return (f"def add(a, b):\n    if a == 1000003:\n{body}\n    return a + b\n\n\n"
            "def sub(a, b):\n    return a - b\n")


TRIALS = {
    "hang": "while True:\n    pass",
    "forkbomb": "import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(3)\n        os._exit(0)",
    "memory": "hog = []\nwhile True:\n    hog.append(bytearray(32 * 1024 * 1024))",
    "printer": "import os\nwhile True:\n    os.write(1, b'z' * 65536)",
    "diskfill": "with open('/tmp/fill.bin', 'wb') as out:\n    while True:\n        out.write(bytes(1 << 20))\n        out.flush()",
    "wrong": "return a + b + 1",  # an assertion failure: a statement about behaviour
    "sound": "return a + b",
}
RESOURCE = ("hang", "forkbomb", "memory", "printer", "diskfill")
# The pids limit stops the fork bomb within milliseconds (EAGAIN); its children hold the run's
# output open for their 3 s, or until the timeout kills them on a loaded machine.
EXPECTED = {"hang": (fk.TIMED_OUT, fk.KILLED_CPU), "forkbomb": (fk.KILLED_PIDS, fk.TIMED_OUT),
            "memory": (fk.KILLED_MEMORY,), "diskfill": (fk.KILLED_DISK,),
            "printer": fk.RESOURCE_KINDS}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    task = tiny_task(tmp_path_factory.mktemp("kinds"))

    async def main():
        out = {}
        async with Sandbox(session="failure-kinds", limits=LIMITS, concurrency=4) as sb:
            async def reference():
                ref = await sb.prepare(task, "reference")
                out["reference"] = run_result("ref", ref.name, None, [PATH], await sb.run_tests(
                    ref, [PATH], files=WITNESS, timeout=TIMEOUT))

            async def one(name: str, code: str):
                trial = trial_for(task, name, {"calc/__init__.py": calc_with(code)}, model=f"model-{name}")
                world = await sb.prepare(task, "model", trial)
                run = await sb.run_tests(world, [PATH], files=WITNESS, isolate_harness=True,
                                         timeout=HANG_TIMEOUT if name == "hang" else TIMEOUT)
                out[name] = run_result(name, world.name, name, [PATH], run)
            # Side by side: the spinning and sleeping trials wait out their limits together, not
            # one after another (each container has its own limits; the kinds do not change).
            await asyncio.gather(reference(), *(one(name, code) for name, code in TRIALS.items()))
        return out

    return asyncio.run(main())


def test_the_reference_passes_the_witness(runs):
    assert runs["reference"].status_of(PATH) == "passed"


@pytest.mark.parametrize("name", RESOURCE)
def test_each_resource_trial_fails_with_its_kind_and_cause(runs, name):
    run = runs[name]
    kind = run.status_of(PATH)
    assert kind in EXPECTED[name], (kind, run.output[-1500:])
    assert fk.never_a_reading(kind)


def test_a_wrong_value_is_an_assertion_failure_and_the_control_passes(runs):
    assert runs["wrong"].status_of(PATH) == "failed"
    assert runs["sound"].status_of(PATH) == "passed"


def test_resource_trials_are_refuted_with_the_resource_named(runs):
    trials = [*RESOURCE, "wrong", "sound"]
    outcomes = {t: runs[t].status_of(PATH) for t in trials}
    models = {t: f"model-{t}" for t in trials}
    klass = classify_witness(WitnessFacts("w1", "add sums big numbers", False, "", outcomes), models, "P")
    # Before: five of seven models "failed" it, rho = 5/7 and the witness was ambiguous (SOUND).
    assert klass.rho == pytest.approx(1 / 7) and klass.refutes
    assert set(refutations({"w1": klass})) == {*RESOURCE, "wrong"}
    for name in RESOURCE:
        run = runs[name]
        status = run.status_of(PATH)
        f = FindingInput("w1", PATH, WITNESS[PATH], "add sums big numbers", False, WitnessRun("passed"),
                         WitnessRun(status, run.failure_cause(PATH)), klass="implicit_necessary",
                         rho=klass.rho)
        v = judge_trial(Trial(name, "tiny", "agent", f"model-{name}", "", True), findings=[f], audited=True)
        assert v.label == INCORRECT_DESPITE_PASS, (name, v.justification)
        assert fk.label(status) in v.justification, v.justification
