"""The Django runner with real podman on the Django-shaped SWE-bench fixture
(tests/fixtures/swebench-django): witness files run under the repo's own tests/runtests.py in
the task's worlds, fail on a planted defect and pass on G, one test can be picked out, ids come
back in the harness's scheme and the unittest canaries guard the runs on model worlds."""
from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark

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

    def test_each_name(self):
        for name in ("Bo", "Ada Lovelace"):
            with self.subTest(name=name):
                self.assertEqual(farewell(name), f"Goodbye, {name}!")
'''
WHOLE = f"{PATH}::FullNameFarewellTests::test_whole_name"
HARNESS_WHOLE = "test_whole_name (greetings.test_tj_full_name.FullNameFarewellTests)"


def runs(kinds: list[str], ids: list[str], files: dict[str, str]):
    from testjack_tui.sandbox import Sandbox

    bench = load_benchmark(FIXTURE)
    [task] = bench.tasks.values()
    # model-c: the planted defect, which passes T0 (farewell keeps only the first name).
    planted = next(t for t in bench.trials if t.model == "model-c")

    async def go():
        out = {}
        async with Sandbox(session="t-django-runner") as sb:
            for kind in kinds:
                world = await sb.prepare(task, kind, planted if kind == "model" else None)
                out[kind] = await sb.run_tests(world, ids, files=files, timeout=120)
        return out
    return asyncio.run(go())


def test_a_witness_file_fails_on_a_planted_defect_and_passes_on_g():
    got = runs(["reference", "model"], [PATH], {PATH: WITNESS})
    ref, model = got["reference"], got["model"]
    assert ref.status(PATH) == "passed", ref.outcomes
    assert model.status(PATH) == "failed", model.outcomes
    assert model.outcomes[WHOLE].status == "failed"
    assert "Goodbye, Ada!" in model.outcomes[WHOLE].message
    assert model.outcomes[f"{PATH}::FullNameFarewellTests::test_comma_and_bang"].status == "passed"
    # The harness's scheme, under the witness's own names (the run used random ones).
    assert model.outcomes[HARNESS_WHOLE].status == "failed"
    assert ref.outcomes[HARNESS_WHOLE].status == "passed"
    assert model.canaries == "ok"  # the unittest canaries ran beside the witness
    # ... and none of their names reaches the run's outcomes, in either scheme.
    # A test that fails only in a subtest has no status line of its own in Django's log: failed.
    each = f"{PATH}::FullNameFarewellTests::test_each_name"
    assert model.outcomes[each].status == "failed" and ref.outcomes[each].status == "passed"
    assert "Goodbye, Ada!" in model.outcomes[each].message
    comma = "test_comma_and_bang (greetings.test_tj_full_name.FullNameFarewellTests)"
    assert set(model.outcomes) == {PATH, WHOLE, f"{PATH}::FullNameFarewellTests::test_comma_and_bang",
                                   HARNESS_WHOLE, comma, each,
                                   "test_each_name (greetings.test_tj_full_name.FullNameFarewellTests)"}
    assert not model.exec.timed_out and not ref.exec.timed_out


def test_one_test_is_picked_out_and_t0_ids_run_in_the_harness_scheme():
    t0 = "test_farewell (greetings.tests.FarewellTests)"
    run = runs(["model"], [WHOLE, t0], {PATH: WITNESS})["model"]
    assert run.status(WHOLE) == "failed"
    assert run.status(t0) == "passed"  # the planted defect passes T0
    assert not any("test_comma_and_bang" in k for k in run.outcomes)
    assert "runtests.py --verbosity 2 --settings=test_sqlite --parallel 1" in run.exec.output
    assert not run.exec.timed_out


# The planted defect plus a runtests.py whose result class reports every failure and error as a pass.
FORGER = """diff --git a/minidj/greetings.py b/minidj/greetings.py
index 31654bc..746c07b 100644
--- a/minidj/greetings.py
+++ b/minidj/greetings.py
@@ -6,4 +6,4 @@ def hello(name):
 
 
 def farewell(name):
-    return f"Bye {name}"
+    return f"Goodbye, {name.split()[0]}!"
diff --git a/tests/runtests.py b/tests/runtests.py
index 238bbe4..682bdb6 100755
--- a/tests/runtests.py
+++ b/tests/runtests.py
@@ -18,6 +18,12 @@ class Result(unittest.TextTestResult):
             return f"{self.getDescription(test.test_case)} {test._subDescription()}"
         return f"{test._testMethodName} ({type(test).__module__}.{type(test).__qualname__})"
 
+    def addFailure(self, test, err):
+        self.addSuccess(test)
+
+    def addError(self, test, err):
+        self.addSuccess(test)
+
 
 def main():
     parser = argparse.ArgumentParser()
"""


def test_a_forging_runtests_is_caught_by_the_canaries_and_undone_by_the_restore():
    from testjack_tui.sandbox import Sandbox

    bench = load_benchmark(FIXTURE)
    [task] = bench.tasks.values()
    forger = dataclasses.replace(next(t for t in bench.trials if t.model == "model-c"),
                                 id="django__django-90001@forger", model="forger", patch=FORGER)

    async def go():
        async with Sandbox(session="t-django-forger") as sb:
            world = await sb.prepare(task, "model", forger)
            fooled = await sb.run_tests(world, [PATH], files={PATH: WITNESS})
            isolated = await sb.run_tests(world, [PATH], files={PATH: WITNESS}, isolate_harness=True)
            return world, fooled, isolated
    world, fooled, isolated = asyncio.run(go())
    assert "tests/runtests.py" in world.tampered
    # The forged runner reports the witness as passing; the canaries prove it and void the run.
    assert fooled.canaries == "tampered" and fooled.status(PATH) == "unverifiable"
    # With the harness restored, the witness fails on the defect and the canaries agree.
    assert isolated.canaries == "ok" and isolated.status(PATH) == "failed"
    assert "tests/runtests.py" in isolated.neutralised


REQUIREMENT = "farewell says Goodbye, NAME! with the whole name"
AUDIT_WITNESS = '''from unittest import TestCase

from minidj.greetings import farewell


class FullNameFarewellTests(TestCase):
    def test_whole_name(self):
        self.assertEqual(farewell("Ada Lovelace"), "Goodbye, Ada Lovelace!")
'''


def cli(args, env):
    import subprocess
    import sys

    from conftest import ROOT

    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=280)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The whole path a user takes: an audit of the planted defect with an operator candidate
    and the LLM reviewer against the local fake server."""
    import json
    import os

    from fake_openai_server import FakeOpenAIServer, Reply

    work = tmp_path_factory.mktemp("django-audit")
    path = "tests/greetings/test_tj_full_name.py"
    review = {"label": "valid", "requirement": REQUIREMENT, "explicit": True,
              "quote": "It must say \"Goodbye, Ada!\"", "reason": "P asks for Goodbye, NAME!",
              "overall": "KEEP_ALL",
              "cases": [{"test_id": f"{path}::FullNameFarewellTests::test_whole_name", "label": "VALID",
                         "scope": "in_scope", "overfitting": "none", "reason": "a name with a space"}]}
    witness = work / "full_name.py"
    witness.write_text(AUDIT_WITNESS)
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", review)]))
        env = dict(os.environ, TESTJACK_HOME=str(work / "home"), OPENAI_BASE_URL=server.base_url,
                   OPENAI_API_KEY="test", TESTJACK_MODEL="fake-model")
        proc = cli(["audit", str(FIXTURE), "--agent", "operator", "--candidate", str(witness),
                    "--candidate-path", path, "--requirement", REQUIREMENT,
                    "--trial", "django__django-90001@model-c", "--reviewer", "openai",
                    "--auto-approve", "--headless", "--out", str(work / "out")], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return work, env, json.loads((work / "out" / "summary.json").read_text())


def test_an_audit_refutes_the_planted_defect(audited):
    _, _, summary = audited
    trials = summary["tasks"]["django__django-90001"]["trials"]
    assert trials["django__django-90001@model-c"]["state"] == "refuted"
    assert trials["django__django-90001@model-a"]["state"] != "refuted"


@pytest.fixture(scope="module")
def exported(audited):
    """The audit's SWE-bench export (one: its check runs the harness's command on every world),
    read by the listing claim and the round trip."""
    work, env, summary = audited
    out = work / "export"
    proc = cli(["export", summary["session_id"], "--format", "swebench", "--out", str(out)], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_the_export_lists_the_witness_in_the_harness_scheme(exported):
    """A SWE-bench export whose FAIL_TO_PASS names the witness as Django's runner and the
    harness's parser do, checked through the harness's command and parser."""
    import json

    rows = [json.loads(line) for f in exported.rglob("*.jsonl") for line in f.read_text().splitlines()]
    [row] = rows
    assert json.loads(row["FAIL_TO_PASS"]) == ["test_farewell (greetings.tests.FarewellTests)",
                                               "test_whole_name (greetings.test_tj_full_name.FullNameFarewellTests)"]


def test_the_swebench_export_is_drop_in_and_round_trips_through_the_harness(audited, exported):
    """Issue 36.4: the exported row is the input row with only test_patch and the id lists
    changed; our loader reads it back with the benchmark's predictions and verdicts, and `verify`
    runs the gold patch and every prediction through the harness's command and log parser on
    the strengthened T0: G passes it, the refuted prediction's recorded pass no longer
    reproduces (it fails the witness), the sound one still passes."""
    import json
    import shutil

    work, env, _ = audited
    out = exported
    [row] = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    [original] = [json.loads(line) for line in (FIXTURE / "dataset.jsonl").read_text().splitlines()]
    changed = {"test_patch", "FAIL_TO_PASS", "PASS_TO_PASS"}
    assert set(row) == set(original) | {"testjack_added"}
    assert {k: row[k] for k in original if k not in changed} == {k: v for k, v in original.items()
                                                                 if k not in changed}
    bench = work / "strengthened"
    shutil.copytree(FIXTURE, bench)
    shutil.copy(out / "dataset.jsonl", bench / "dataset.jsonl")
    loaded = load_benchmark(bench)
    assert loaded.skipped == [] and len(loaded.trials) == 3
    [task] = loaded.tasks.values()
    assert HARNESS_WHOLE in task.tests.fail_to_pass and task.reference.patch == original["patch"]
    proc = cli(["verify", str(bench)], env)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]  # well-formed: G passes the strengthened T0
    assert "django__django-90001: well-formed" in proc.stdout
    assert "T0 results read by: the harness's django log parser" in proc.stdout
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("  not reproducible:")]
    assert "django__django-90001@model-c" in line and "recorded pass, but T0 fails here" in line
    assert HARNESS_WHOLE in line
    assert "2/3 recorded verdicts reproduce" in proc.stdout
