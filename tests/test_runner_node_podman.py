"""mocha and `node --test` in real worlds (podman): our fixture image (tests/fixtures/js-runners:
a CommonJS package whose mocha comes from npm and an ES-module package tested with node:test)
built once on the Node toolchain image. Witness files are copied in, run through the repo's own
mocha or node itself in one process, and read back per test: passed, failed with the assertion,
skipped, error (hook failures, files that do not load), not found, timed out; ids naming single
tests run only those tests."""
from __future__ import annotations

import pytest

from conftest import ROOT
from testjack_tui.model import Environment, OfficialTests, Reference, Task

pytestmark = [pytest.mark.podman, pytest.mark.timeout(600)]

FIXTURE = ROOT / "tests" / "fixtures" / "js-runners"
SLUG = "test/slug.spec.js"
COUNT = "test/count.test.js"

MOCHA_WITNESS = '''"use strict";
const assert = require("node:assert");
const { slugify } = require("../src/slug");

describe("slugify witness", function () {
  it("drops accents", function () {
    assert.strictEqual(slugify("Crème Brûlée"), "creme-brulee");
  });
  it("keeps digits", function () {
    assert.strictEqual(slugify("Route 66"), "route66");
  });
  describe("with a failing setup", function () {
    before(function () { throw new Error("fixture data missing"); });
    it("never runs", function () {});
  });
});
'''

NODE_WITNESS = '''import { describe, it, test } from "node:test";
import assert from "node:assert/strict";
import { countWords } from "../src/count.js";

describe("countWords witness", () => {
  it("counts hyphenated words once", () => {
    assert.equal(countWords("well-known fact"), 2);
  });
  it("counts punctuation as words", () => {
    assert.equal(countWords("a , b"), 2);
  });
});

test("hangs forever", () => {
  // Blocks as a busy loop would (no timer or callback runs again), without burning a CPU.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
'''


def task(framework: str, workdir: str) -> Task:
    env = Environment(image="localhost/testjack-js-runners:1", containerfile=FIXTURE / "Containerfile",
                      context=FIXTURE, workdir=workdir, build_network=True)
    return Task(id=f"js-{framework.split()[0]}", instruction="", environment=env, reference=Reference(),
                tests=OfficialTests(framework=framework), language="javascript")


async def run_in(framework: str, workdir: str, ids: list[str], files: dict[str, str], timeout: float = 60):
    (run,) = await runs_in(framework, workdir, (ids, files, timeout))
    return run


async def runs_in(framework: str, workdir: str, *runs: tuple[list[str], dict[str, str], float]) -> list:
    """Test runs (ids, files, timeout) on one null world, side by side (a run that waits for its
    timeout holds no CPU): each in a fresh container of its own."""
    import asyncio

    from testjack_tui.sandbox import Sandbox

    async with Sandbox(session="tj-js-runners", concurrency=len(runs)) as sb:
        t = task(framework, workdir)
        world = await sb.prepare(t, "null")
        return list(await asyncio.gather(*(sb.run_tests(world, ids, files=files, timeout=timeout)
                                           for ids, files, timeout in runs)))


async def test_mocha_witness_file_and_single_tests_in_one_run():
    witness = "test/slug.tj.spec.js"
    ids = [witness, f"{SLUG}::slugify > separators > takes a custom separator",
           f"{SLUG}: slugify > lowercases words and joins them with dashes",
           f"{SLUG}::slugify > separators > collapses runs of separators in the input",
           f"{SLUG}::slugify > no such test", "test/gone.spec.js"]
    run = await run_mocha(ids, {witness: MOCHA_WITNESS})
    out = run.outcomes
    assert out[f"{witness}::slugify witness > drops accents"].status == "passed"
    keeps = out[f"{witness}::slugify witness > keeps digits"]
    assert keeps.status == "failed" and "'route-66'" in keeps.message
    setup = out[f"{witness}::slugify witness > with a failing setup > never runs"]
    assert setup.status == "error" and "fixture data missing" in setup.message
    assert out[witness].status == "failed"  # the worst of its tests
    assert out[ids[1]].status == "passed" and out[ids[2]].status == "passed"
    assert out[ids[3]].status == "skipped"
    assert out[ids[4]].status == "not_found"
    assert out[ids[5]].status == "not_found" and out[ids[5]].message == "no such test file"
    # the benchmark's grader names the witness's tests `<file>: <describe> > <title>`
    assert f"{witness}: slugify witness > drops accents" in out
    # one mocha process ran the repo's own binary, and only the named files loaded
    assert run.exec.output.count("TJ_NODE node_modules/.bin/mocha") == 1
    assert "test/slug.spec.js::slugify > lowercases words and joins them with dashes" in out


async def run_mocha(ids, files, framework="mocha", timeout: float = 60):
    return await run_in(framework, "/app", ids, files, timeout)


async def test_mocha_from_package_json_when_the_task_says_jest_and_a_broken_file_is_named():
    # A JavaScript task without a named runner defaults to jest; the repo's test script says mocha.
    broken, good = "test/broken.tj.spec.js", "test/good.tj.spec.js"
    files = {broken: "const x = ;\n",
             good: 'const assert = require("node:assert");\nit("adds", () => assert.strictEqual(1 + 1, 2));\n'}
    run = await run_mocha([broken, good], files, framework="jest")
    assert run.outcomes[good].status == "passed"
    assert run.outcomes[broken].status == "error" and "SyntaxError" in run.outcomes[broken].message


async def test_mocha_single_test_selection_leaves_a_hanging_neighbour_alone():
    witness = "test/hang.tj.spec.js"
    text = ('const assert = require("node:assert");\ndescribe("pair", function () {\n'
            '  it("quick", function () { assert.ok(true); });\n'
            '  it("hangs", function () { this.timeout(0); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); });\n});\n')
    # The whole file's run waits for its timeout beside the selection's run.
    picked, whole = await runs_in("mocha", "/app", ([f"{witness}::pair > quick"], {witness: text}, 120),
                                  ([witness], {witness: text}, 8))
    assert picked.outcomes[f"{witness}::pair > quick"].status == "passed"
    # The varied replay (mocha alone for that test, its exit status) passes it: on this world no
    # channel is judged, so our own run in the usual environment is not needed.
    row = picked.channels[f"{witness}::pair > quick"]
    assert (row["report"], row["varied env"]) == ("passed",) * 2 and "varied replay passed" in row["own run"], row
    assert whole.outcomes[witness].status == "timed_out"


async def test_node_test_runner_witness_selection_and_timeout():
    witness = "test/count.tj.test.js"
    ids = [f"{witness}::countWords witness > counts hyphenated words once",
           f"{witness}::countWords witness > counts punctuation as words",
           f"{COUNT}::countWords > whitespace > treats tabs and newlines as separators",
           f"{COUNT}: countWords > skips nothing", f"{COUNT}::countWords > no such test"]
    # The whole file's run (the hang: its timeout) goes beside the selection's run.
    run, whole = await runs_in("node --test", "/srv/wordcount", (ids, {witness: NODE_WITNESS}, 120),
                               ([witness, COUNT], {witness: NODE_WITNESS}, 8))
    out = run.outcomes
    assert out[ids[0]].status == "passed"
    assert out[ids[1]].status == "failed" and "3 !== 2" in out[ids[1]].message
    # node --test's own run is a whole file (NodeBuiltinRunner.own_plan: node 18 runs a filtered
    # suite's hooks, so one test cannot run alone): single tests named get none, and no row.
    assert not run.channels, run.channels
    assert out[ids[2]].status == "passed"
    assert out[ids[3]].status == "skipped"
    assert out[ids[4]].status == "not_found"
    assert "TJ_NODE node " in run.exec.output  # node itself, no package to install
    assert whole.outcomes[witness].status == "timed_out"


async def test_node_test_file_that_does_not_load_is_an_error_and_its_neighbour_still_runs():
    broken = "test/broken.tj.test.js"
    run = await run_in("node --test", "/srv/wordcount", [broken, COUNT],
                    {broken: 'import { nope } from "../src/count.js";\n'}, timeout=30)
    assert run.outcomes[broken].status == "error" and "nope" in run.outcomes[broken].message
    assert run.outcomes[COUNT].status == "passed"  # its skipped test does not fail the file
    assert run.outcomes[f"{COUNT}::countWords > skips nothing"].status == "skipped"


SLUG_PATCH = '''diff --git a/src/slug.js b/src/slug.js
--- a/src/slug.js
+++ b/src/slug.js
@@ -1,4 +1,8 @@
 "use strict";
 
 function slugify(text, sep = "-") {
+  // null and undefined read as empty text
+  if (text === null || text === undefined) {
+    return "";
+  }
   return String(text)
'''


async def test_js_ghost_lines_from_v8_coverage_in_a_model_world():
    import dataclasses

    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.detectors import evidence_provider
    from testjack_tui.model import Trial

    t = task("mocha", "/app")
    t = dataclasses.replace(t, tests=dataclasses.replace(t.tests, fail_to_pass=(SLUG,)))
    trial = Trial("js-mocha__a__1", t.id, "a", "m", SLUG_PATCH, True)
    async with Sandbox(session="tj-js-ghost", concurrency=1) as sb:
        world = await sb.prepare(t, "model", trial)
        data = await evidence_provider(sb, t, trial, {"model": world})
    ghost = data["ghost"]
    assert ghost["error"] == "", ghost["error"]
    assert (ghost["added_lines"], ghost["executed_lines"]) == (2, 1)  # the comment and brace do not count
    assert [(g["file"], g["line"], g["code"].strip()) for g in ghost["ghost_lines"]] == [
        ("src/slug.js", 6, 'return "";')]
    assert ghost["measure"].startswith("line coverage: V8")


CLAMP_PATCH = '''diff --git a/src/clamp.js b/src/clamp.js
--- a/src/clamp.js
+++ b/src/clamp.js
@@ -1,6 +1,9 @@
 "use strict";
 
 function clamp(value, low, high) {
+  if (low > high) {
+    throw new RangeError("low is above high");
+  }
   return Math.min(Math.max(value, low), high);
 }
 
'''


async def test_jest_witness_and_ghost_branches_from_jests_own_coverage():
    import dataclasses

    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.detectors import evidence_provider
    from testjack_tui.model import Trial

    witness = "test/order.tj.test.js"
    text = ('const { clamp } = require("../src/clamp");\n'
            'describe("clamp order", () => {\n'
            '  test("rejects a reversed range", () => { expect(() => clamp(1, 5, 0)).toThrow(RangeError); });\n'
            '  test("keeps the upper bound", () => { expect(clamp(11, 0, 10)).toBe(10); });\n});\n')
    t = task("jest", "/srv/rangekit")
    t = dataclasses.replace(t, tests=dataclasses.replace(t.tests, fail_to_pass=("test/clamp.test.js",)))
    trial = Trial("js-jest__a__1", t.id, "a", "m", CLAMP_PATCH, True)
    async with Sandbox(session="tj-js-jest", concurrency=1) as sb:
        null = await sb.prepare(t, "null")
        run = await sb.run_tests(null, [witness], files={witness: text}, timeout=60)
        model = await sb.prepare(t, "model", trial)
        fixed = await sb.run_tests(model, [witness], files={witness: text}, timeout=60)
        data = await evidence_provider(sb, t, trial, {"model": model})
    rejects = f"{witness}::clamp order > rejects a reversed range"
    assert run.outcomes[rejects].status == "failed" and "RangeError" in run.outcomes[rejects].message
    assert run.outcomes[f"{witness}::clamp order > keeps the upper bound"].status == "passed"
    assert fixed.outcomes[witness].status == "passed"
    ghost = data["ghost"]
    assert ghost["error"] == "", ghost["error"]
    assert ghost["measure"] == "branch coverage: istanbul (jest --coverage)"
    assert (ghost["added_lines"], ghost["executed_lines"]) == (2, 1)
    assert [(g["line"], g["code"].strip()) for g in ghost["ghost_lines"]] == [
        (5, 'throw new RangeError("low is above high");')]
    assert (ghost["branches"], ghost["executed_branches"]) == (2, 1)
    assert [b["line"] for b in ghost["ghost_branches"]] == [4]


async def test_node_test_gets_the_test_scripts_import():
    # package.json: "test": "node --import ./support/setup.js --test"; the witness reads its global.
    witness = "test/sample.tj.test.js"
    text = ('import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
            'import { countWords } from "../src/count.js";\n'
            'test("counts the shared sample", () => { assert.equal(countWords(globalThis.sampleText), 3); });\n')
    run = await run_in("jest", "/srv/wordcount", [witness], {witness: text}, timeout=30)
    assert run.outcomes[witness].status == "passed", run.outcomes[witness].message
    assert "TJ_NODE node --import ./support/setup.js --test" in run.exec.output
