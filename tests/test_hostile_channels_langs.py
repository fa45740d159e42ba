"""Issue 27 items 1-2 for every runner family but pytest (real podman, our language fixtures):
a trial whose code gives right answers only under the audit's usual test run — only when its
test process's parent is the runner with our reporter (go test, cargo, jest --json), or only as
the usual trial uid — or that rewrites Django's log at exit, comes out
with a witness that passes in the runner's report. Our own run
(a fresh process per test: the package's test binary alone, the target's test binary with
`--exact`, jest without its JSON reporter) disagrees with the report: proof (vitest's report is
not fooled: the witness fails there, and a failure the report gives is believed without our own
run, as for every runner). The varied replay
(another uid, argv[0], HOME/TMPDIR, runner variables gone) fails the uid sniffer (vitest's,
which keeps the uid, a HOME sniffer), and so does one right only before a date between today
and the replay's clock (libfaketime; a Go binary's clock cannot be moved, and the line detector
names its clock check instead): refuted as environment-dependent. node --test's own run is the
witness file run whole. An honest function stays passed with every channel agreeing, and on the
reference world a witness that itself depends on the uid never passes.

Bounded in runs: per family one model world (the trial holds every variant) and one
reference-world run. On the model world every family runs two witness runs: the runner-fooling
witness alone (its run's canaries come out tampered), the honest, uid and clock witnesses
together (each file's outcomes, channels and varied replay are its own, and that run's canaries
must stay "ok"). jest's and vitest's own runs and varied replays are a runner process per test
(nine in the shared run); the product bounds them in CPU seconds (own_run.OWN_TOTAL), which a
loaded machine does not stretch, and the runs' timeouts here are hang guards only."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from conftest import ROOT
from test_hostile_channels import CUTOFF
from testjack_tui.benchmarks import load_benchmark
from testjack_tui.diffs import parse_diff
from testjack_tui.engine.detectors.sniffing import sniffing_signals
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial
from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.channels import CHANNEL_MARK, ENV_DEPENDENT
from testjack_tui.sandbox.own_run import VARIED_MARK
from testjack_tui.sandbox.selftest import make_patch

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

FIXTURES = ROOT / "tests" / "fixtures"
LANGS = FIXTURES / "hostile" / "langs"


def _sniffer(name: str) -> str:
    """A hostile fixture with its clock cutoff filled in: a date after today and before the
    varied replay's clock (own_run.CLOCK_SHIFT_DAYS ahead), so the trick works today. A whole
    day, so the trial (and its world, found by content) is the same all day long."""
    return (LANGS / name).read_text().replace("TJ_CUTOFF", str(CUTOFF))


def _fixture(benchmark: str, trial_id: str) -> tuple[Task, Trial]:
    bench = load_benchmark(FIXTURES / benchmark)
    [trial] = [t for t in bench.trials if t.id == trial_id]
    return bench.tasks[trial.task_id], trial


def go_family() -> dict:
    task, honest = _fixture("golang", "slugify-separators__kestrel__1")
    patch = honest.patch if honest.patch.endswith("\n") else honest.patch + "\n"
    trial = dataclasses.replace(honest, id="go-sniffer",
                                patch=patch + make_patch({}, {"sniff_tj.go": _sniffer("sniff_tj.go")}))

    def witness(fn: str, arg: int, want: int) -> str:
        return (f'package textkit\n\nimport "testing"\n\nfunc TestTJ{fn[2:]}(t *testing.T) {{\n'
                f'\tif got := {fn}({arg}); got != {want} {{\n\t\tt.Errorf("{fn}({arg}) = %d, want {want}", got)\n'
                "\t}\n}\n")
    ref = ('package textkit\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
           'func TestTJUid(t *testing.T) {\n\tif os.Getuid() != 10001 {\n\t\tt.Fatal("uid")\n\t}\n}\n')
    return {"task": task, "trial": trial, "path": "tj_{}_test.go",
            "witnesses": {"control": witness("TjHalf", 84, 42), "runner": witness("TjDouble", 21, 42),
                          "uid": witness("TjTriple", 14, 42),
                          "clock": witness("TjQuad", 21, 84)},
            "reference": ref}


def rust_family() -> dict:
    task, honest = _fixture("rust", "roman-numerals__kestrel__1")
    base = (FIXTURES / "rust" / "environment" / "repo" / "src" / "lib.rs").read_text()
    trial = dataclasses.replace(honest, id="rust-sniffer", patch=make_patch(
        {"src/lib.rs": base}, {"src/lib.rs": base + "\n" + _sniffer("sniff_tj.rs")}))

    def witness(fn: str, arg: int, want: int) -> str:
        return f"use numerals::{fn};\n\n#[test]\nfn {fn}_works() {{\n    assert_eq!({fn}({arg}), {want});\n}}\n"
    ref = ('#[test]\nfn tj_uid() {\n    let s = std::fs::read_to_string("/proc/self/status").unwrap();\n'
           '    assert!(s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("10001")));\n}\n')
    return {"task": task, "trial": trial, "path": "tests/tj_{}.rs",
            "witnesses": {"control": witness("tj_half", 84, 42), "runner": witness("tj_double", 21, 42),
                          "uid": witness("tj_triple", 14, 42),
                          "clock": witness("tj_quad", 21, 84)},
            "reference": ref}


def jest_family() -> dict:
    js = FIXTURES / "js-runners"
    env = Environment(image="localhost/testjack-js-runners:1", containerfile=js / "Containerfile",
                      context=js, workdir="/srv/rangekit", build_network=True)
    task = Task(id="js-jest", instruction="", environment=env,
                reference=Reference(patch=make_patch({}, {"NOTES.md": "the reference\n"})),
                tests=OfficialTests(framework="jest"), language="javascript")
    trial = Trial("jest-sniffer", task.id, "agent", "model-a",
                  make_patch({}, {"src/sniff_tj.js": _sniffer("sniff_tj.js")}), True)

    def witness(fn: str, arg: int, want: int) -> str:
        return (f'const {{ {fn} }} = require("../src/sniff_tj");\n\n'
                f'test("{fn} works", () => {{\n  expect({fn}({arg})).toBe({want});\n}});\n')
    ref = 'test("uid", () => {\n  expect(process.getuid()).toBe(10001);\n});\n'
    return {"task": task, "trial": trial, "path": "test/tj_{}.test.js",
            "witnesses": {"control": witness("tjHalf", 84, 42), "runner": witness("tjDouble", 21, 42),
                          "uid": witness("tjTriple", 14, 42),
                          "clock": witness("tjQuad", 21, 84)},
            "reference": ref}


def nodetest_family() -> dict:
    """node --test (ES modules): our own run is the witness file run whole (node 18's name
    filter still runs the hooks of the suites it filters out)."""
    js = FIXTURES / "js-runners"
    env = Environment(image="localhost/testjack-js-runners:1", containerfile=js / "Containerfile",
                      context=js, workdir="/srv/wordcount", build_network=True)
    task = Task(id="js-nodetest", instruction="", environment=env,
                reference=Reference(patch=make_patch({}, {"NOTES.md": "the reference\n"})),
                tests=OfficialTests(framework="node"), language="javascript")
    trial = Trial("nodetest-sniffer", task.id, "agent", "model-a",
                  make_patch({}, {"src/sniff_tj.cjs": _sniffer("sniff_tj.js")}), True)

    def witness(fn: str, arg: int, want: int) -> str:
        return ('import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
                f'import {{ {fn} }} from "../src/sniff_tj.cjs";\n\n'
                f'test("{fn} works", () => {{\n  assert.equal({fn}({arg}), {want});\n}});\n')
    ref = ('import { test } from "node:test";\nimport assert from "node:assert/strict";\n\n'
           'test("uid", () => {\n  assert.equal(process.getuid(), 10001);\n});\n')
    return {"task": task, "trial": trial, "path": "test/tj_{}.test.js",
            "witnesses": {"control": witness("tjHalf", 84, 42), "runner": witness("tjDouble", 21, 42),
                          "uid": witness("tjTriple", 14, 42), "clock": witness("tjQuad", 21, 84)},
            "reference": ref}


def vitest_family() -> dict:
    task, honest = _fixture("typescript", "query-parse__kestrel__1")
    patch = honest.patch if honest.patch.endswith("\n") else honest.patch + "\n"
    trial = dataclasses.replace(honest, id="vitest-sniffer",
                                patch=patch + make_patch({}, {"src/sniff_tj.ts": _sniffer("sniff_tj.ts")}))

    def witness(fn: str, arg: int, want: int) -> str:
        return (f'import {{ expect, it }} from "vitest";\nimport {{ {fn} }} from "../src/sniff_tj";\n\n'
                f'it("{fn} works", () => {{\n  expect({fn}({arg})).toBe({want});\n}});\n')
    ref = ('import { expect, it } from "vitest";\n\n'
           'it("home", () => {\n  expect(process.env.HOME).toBe("/tmp/tj-home");\n});\n')
    return {"task": task, "trial": trial, "path": "test/tj_{}.test.ts",
            "witnesses": {"control": witness("tjHalf", 84, 42), "runner": witness("tjDouble", 21, 42),
                          "uid": witness("tjTriple", 14, 42),
                          "clock": witness("tjQuad", 21, 84)},
            "reference": ref}


def django_family() -> dict:
    bench = load_benchmark(FIXTURES / "swebench-django")
    [task] = bench.tasks.values()
    planted = next(t for t in bench.trials if t.model == "model-c")
    patch = planted.patch if planted.patch.endswith("\n") else planted.patch + "\n"
    trial = dataclasses.replace(planted, id="django-sniffer", model="sniffer",
                                patch=patch + make_patch({}, {"minidj/sniff_tj.py": _sniffer("sniff_tj.py")}))

    def witness(fn: str, arg: int, want: int) -> str:
        return (f"from unittest import TestCase\n\nfrom minidj.sniff_tj import {fn}\n\n\n"
                f"class {fn.title().replace('_', '')}Tests(TestCase):\n    def test_it(self):\n"
                f"        self.assertEqual({fn}({arg}), {want})\n")
    ref = ("import os\nfrom unittest import TestCase\n\n\nclass UidTests(TestCase):\n"
           "    def test_uid(self):\n        self.assertEqual(os.getuid(), 10001)\n")
    return {"task": task, "trial": trial, "path": "tests/greetings/test_tj_{}.py",
            "witnesses": {"control": witness("tj_half", 84, 42), "runner": witness("tj_double", 21, 42),
                          "uid": witness("tj_triple", 14, 42),
                          "clock": witness("tj_quad", 21, 84)},
            "reference": ref}


FAMILIES = {"go": go_family, "rust": rust_family, "jest": jest_family, "vitest": vitest_family,
            "django": django_family, "nodetest": nodetest_family}


# The witnesses that share one run on the model world: none of them fools the report, so the
# run's canaries stay "ok" whatever the others do (the runner witness proves tampering: alone).
SHARED = ("control", "uid", "clock")


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request):
    """name -> TestRun for one family: each witness's model-world run (SHARED's is one), and
    the reference's."""
    spec = FAMILIES[request.param]()

    async def all_runs():
        out = {"_spec": spec, "_name": request.param}
        async with Sandbox(session=f"hostile-langs-{request.param}", concurrency=1) as sb:
            model = await sb.prepare(spec["task"], "model", spec["trial"])
            for names in [("runner",), SHARED]:
                files = {spec["path"].format(name): spec["witnesses"][name] for name in names}
                run = await sb.run_tests(model, list(files), files=files, isolate_harness=True, timeout=600)
                out.update({name: run for name in names})
            reference = await sb.prepare(spec["task"], "reference")
            path = spec["path"].format("uidref")
            out["reference"] = await sb.run_tests(reference, [path], files={path: spec["reference"]},
                                                  isolate_harness=False, timeout=600)
        return out
    return asyncio.run(all_runs())


def _path(family, name: str) -> str:
    return family["_spec"]["path"].format(name)


def _varied(run, path: str) -> list:
    """The varied replay's outcomes of the tests in file PATH (a shared run holds other files')."""
    return [o for k, o in run.outcomes.items() if k.startswith(path) and k.endswith(VARIED_MARK)]


def _detail(run) -> tuple:
    return (run.canaries, run.tampering, run.channels, {k: (o.status, o.message[:300]) for k, o in run.outcomes.items()},
            run.exec.output[-1500:])


def test_an_honest_function_passes_with_every_channel_agreeing(family):
    run = family["control"]
    path = _path(family, "control")
    assert run.canaries == "ok" and run.status(path) == "passed", _detail(run)
    rows = [row for key, row in run.channels.items() if key.startswith(path)]
    assert rows and all(r["report"] == "passed" and r["own run"] == "passed" and r["varied env"] == "passed"
                        for r in rows), _detail(run)
    assert not _varied(run, path), _detail(run)


# Where the trick fools the runner's report (vitest's workers do not see our reporter's flags in
# the command lines the sniffer reads: there the witness simply fails).
FOOLED = {"go", "rust", "jest", "django", "nodetest"}


def test_a_function_right_only_under_the_runner_is_caught_by_our_own_run(family):
    run = family["runner"]
    path = _path(family, "runner")
    assert run.status(path) != "passed", _detail(run)
    rows = [row for key, row in run.channels.items() if key.startswith(path)]
    if family["_name"] not in FOOLED:  # the report fails it: a failure is believed, no own run needed
        assert rows and all(r["report"] == "failed" for r in rows), _detail(run)
        return
    assert rows and all(r["own run"] == "failed" for r in rows), _detail(run)
    assert any(r["report"] == "passed" for r in rows), _detail(run)  # the report was fooled
    assert run.canaries == "tampered", _detail(run)
    assert any(p.startswith(CHANNEL_MARK) and "report passed" in p and "own run failed" in p
               for p in run.tampering), _detail(run)


def test_a_function_right_only_as_the_trial_user_fails_the_varied_replay(family):
    run = family["uid"]
    path = _path(family, "uid")
    assert run.canaries == "ok", _detail(run)
    varied = _varied(run, path)
    assert varied and all(o.status == "failed" and ENV_DEPENDENT in o.message for o in varied), _detail(run)
    assert run.status(path) == "failed"


def test_a_function_right_only_before_a_date_fails_the_varied_replay(family):
    """The varied replay's clock is CLOCK_SHIFT_DAYS ahead through libfaketime in the base image
    (node, cargo's test binaries, Python under Django). A Go test binary reads the clock without
    libc, so its clock cannot be moved: there the witness passes in every channel, and the line
    detector names the clock check in the diff instead."""
    run = family["clock"]
    path = _path(family, "clock")
    assert run.canaries == "ok", _detail(run)
    varied = _varied(run, path)
    if family["_name"] == "go":
        assert run.status(path) == "passed" and not varied, _detail(run)
        found = sniffing_signals(parse_diff(family["_spec"]["trial"].patch), set())
        assert [(s.kind, s.file) for s in found if s.kind == "clock_check"] == [("clock_check", "sniff_tj.go")]
        return
    assert varied and all(o.status == "failed" and ENV_DEPENDENT in o.message for o in varied), _detail(run)
    assert run.status(path) == "failed"


def test_a_witness_that_depends_on_the_uid_does_not_pass_the_reference(family):
    run = family["reference"]
    path = _path(family, "uidref")
    assert run.status(path) == "failed", _detail(run)
    assert any(ENV_DEPENDENT in o.message for o in run.outcomes.values()), _detail(run)
