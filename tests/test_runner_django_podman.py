"""The Django runner with real podman on the Django-shaped SWE-bench fixture
(tests/fixtures/swebench-django): witness files run under the repo's own tests/runtests.py in
the task's worlds, fail on a planted defect and pass on G, one test can be picked out, ids come
back in the harness's scheme and the unittest canaries guard the runs on model worlds."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.model import Trial

pytestmark = [pytest.mark.podman, pytest.mark.timeout(300)]

FIXTURE = Path(__file__).parent / "fixtures" / "swebench-django"
PATH = "tests/greetings/test_tj_full_name.py"
WITNESS = '''from unittest import TestCase

from minidj.greetings import farewell


class FullNameFarewellTests(TestCase):
    def test_whole_name(self):
        self.assertEqual(farewell("Ada Lovelace"), "Goodbye, Ada Lovelace!")

    def test_comma_and_bang(self):
        self.assertEqual(farewell("Bo"), "Goodbye, Bo!")
'''
# Passes T0 (farewell("Ada") is right) but drops every name after the first.
PLANTED = '''diff --git a/minidj/greetings.py b/minidj/greetings.py
--- a/minidj/greetings.py
+++ b/minidj/greetings.py
@@ -6,4 +6,4 @@ def hello(name):
 
 
 def farewell(name):
-    return f"Bye {name}"
+    return f"Goodbye, {name.split()[0]}!"
'''
WHOLE = f"{PATH}::FullNameFarewellTests::test_whole_name"
HARNESS_WHOLE = "test_whole_name (greetings.test_tj_full_name.FullNameFarewellTests)"


def runs(kinds: list[str], ids: list[str], files: dict[str, str]):
    from testjack_tui.sandbox import Sandbox

    bench = load_benchmark(FIXTURE)
    [task] = bench.tasks.values()
    planted = Trial(id="planted", task_id=task.id, agent="tj", model="planted", patch=PLANTED,
                    official_pass=True)

    async def go():
        out = {}
        async with Sandbox(session="t-django-runner") as sb:
            for kind in kinds:
                world = await sb.prepare(task, kind, planted if kind == "model" else None)
                start = time.monotonic()
                out[kind] = (await sb.run_tests(world, ids, files=files, timeout=120),
                             time.monotonic() - start)
        return out
    return asyncio.run(go())


def test_a_witness_file_fails_on_a_planted_defect_and_passes_on_g():
    got = runs(["reference", "model"], [PATH], {PATH: WITNESS})
    ref, _ = got["reference"]
    model, seconds = got["model"]
    assert ref.status(PATH) == "passed", ref.outcomes
    assert model.status(PATH) == "failed", model.outcomes
    assert model.outcomes[WHOLE].status == "failed"
    assert "Goodbye, Ada!" in model.outcomes[WHOLE].message
    assert model.outcomes[f"{PATH}::FullNameFarewellTests::test_comma_and_bang"].status == "passed"
    # The harness's scheme, under the witness's own names (the run used random ones).
    assert model.outcomes[HARNESS_WHOLE].status == "failed"
    assert ref.outcomes[HARNESS_WHOLE].status == "passed"
    assert model.canaries == "ok"  # the unittest canaries ran beside the witness
    assert seconds < 30


def test_one_test_is_picked_out_and_t0_ids_run_in_the_harness_scheme():
    t0 = "test_farewell (greetings.tests.FarewellTests)"
    run, _ = runs(["model"], [WHOLE, t0], {PATH: WITNESS})["model"]
    assert run.status(WHOLE) == "failed"
    assert run.status(t0) == "passed"  # the planted defect passes T0
    assert not any("test_comma_and_bang" in k for k in run.outcomes)
    assert "runtests.py --verbosity 2 --settings=test_sqlite --parallel 1" in run.exec.output
    assert not run.exec.timed_out
