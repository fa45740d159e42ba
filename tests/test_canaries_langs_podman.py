"""Canaries in Go, Rust (a crate and a workspace without a root package) and
JavaScript/TypeScript runs (real podman, our language fixtures): an honest trial's run comes out
"ok" with its canaries placed where the run collects them, and a trial that forges its runner's
report — a Go TestMain printing `go test` pass lines, a cargo target runner printing libtest
"ok" lines, a mocha exit hook rewriting the JSON report, a jest testResultsProcessor marking
every test passed, a vitest.config.ts exit hook rewriting vitest's report, a `node --test`
preload module rewriting the reporter's file — is caught: the run is void (every outcome
"unverifiable") and the tampering proven."""
from __future__ import annotations

import dataclasses

import pytest

from conftest import ROOT
from testjack_tui.benchmarks import load_benchmark
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial
from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.selftest import make_patch

pytestmark = [pytest.mark.podman, pytest.mark.timeout(600)]

FIXTURES = ROOT / "tests" / "fixtures"
FORGERS = FIXTURES / "hostile" / "forgers"


def forger(name: str) -> str:
    """A committed hostile file (tests/fixtures/hostile/forgers)."""
    return (FORGERS / name).read_text()


def fixture_trial(benchmark: str, trial_id: str) -> tuple[Task, Trial]:
    bench = load_benchmark(FIXTURES / benchmark)
    [trial] = [t for t in bench.trials if t.id == trial_id]
    return bench.tasks[trial.task_id], trial


def with_files(trial: Trial, name: str, files: dict[str, str]) -> Trial:
    """The trial with new files added by its patch."""
    patch = trial.patch if trial.patch.endswith("\n") else trial.patch + "\n"
    return dataclasses.replace(trial, id=name, patch=patch + make_patch({}, files))


def t0(task: Task) -> list[str]:
    return list(task.tests.fail_to_pass + task.tests.pass_to_pass)


async def t0_run(task: Task, trial: Trial):
    async with Sandbox(session="tj-canary-langs", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        return await sb.run_tests(world, t0(task), timeout=120)


def assert_void(run, ids):
    assert run.canaries == "tampered", (run.canaries, run.tampering, run.exec.output[-2000:])
    assert any("must fail was reported passed" in p for p in run.tampering), run.tampering
    assert {run.status(i) for i in ids} == {"unverifiable"}, run.outcomes


GO_TRIAL = ("golang", "slugify-separators__kestrel__1")
RUST_TRIAL = ("rust", "roman-numerals__kestrel__1")


async def test_go_runs_carry_a_canary_in_each_package_they_test():
    task, honest = fixture_trial(*GO_TRIAL)
    clean = await t0_run(task, honest)
    assert clean.canaries == "ok", (clean.tampering, clean.exec.output[-2000:])
    assert {clean.status(i) for i in t0(task)} == {"passed"}
    # T0 names tests by import path: its canaries (two tests each) ran in the root package and
    # in wrap/, the packages go test was asked for, and in no other package.
    [go] = [line.split() for line in clean.exec.output.splitlines() if line.startswith("TJ_GO ")]
    assert go[-2:] == ["example.com/textkit", "example.com/textkit/wrap"]
    assert go[go.index("-run") + 1].count("|") == 2 + 4


async def test_go_test_main_forging_pass_lines_is_caught():
    task, honest = fixture_trial(*GO_TRIAL)
    hostile = with_files(honest, "go-forger", {"forge_main_test.go": forger("forge_main_test.go")})
    forged = await t0_run(task, hostile)
    assert_void(forged, t0(task))


async def test_rust_runs_carry_canaries():
    task, honest = fixture_trial(*RUST_TRIAL)
    clean = await t0_run(task, honest)
    assert clean.canaries == "ok", (clean.tampering, clean.exec.output[-2000:])
    assert {clean.status(i) for i in t0(task)} == {"passed"}


async def test_rust_target_runner_forging_ok_lines_is_caught():
    task, honest = fixture_trial(*RUST_TRIAL)
    hostile = with_files(honest, "rust-forger", {".cargo/config.toml": forger("cargo_runner.toml"),
                                                 "forge_tests.sh": forger("forge_tests.sh")})
    forged = await t0_run(task, hostile)
    assert_void(forged, t0(task))


WORKSPACE = FIXTURES / "rust-workspace"
WS_T0 = ("numkit: tests::halves_even_numbers", "word-kit: tests::shouts_words")


def workspace_task() -> Task:
    """Our cargo workspace without a root package (tests/fixtures/rust-workspace)."""
    env = Environment(image="localhost/testjack-rust-workspace:1", containerfile=WORKSPACE / "Containerfile",
                      context=WORKSPACE, workdir="/app")
    return Task(id="rust-ws", instruction="", environment=env, reference=Reference(),
                tests=OfficialTests(framework="cargo test", fail_to_pass=WS_T0), language="rust")


HALF_WITNESS = "use numkit::half;\n\n#[test]\nfn tj_rounds_down() {\n    assert_eq!(half(7), 3);\n}\n"


async def test_a_cargo_workspace_without_a_root_package_carries_a_canary_per_package():
    task = workspace_task()
    trial = Trial("ws-honest", task.id, "agent", "model-a", make_patch({}, NOTE), True)
    witness = "crates/numkit/tests/tj_half.rs"
    async with Sandbox(session="tj-canary-ws", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        clean = await sb.run_tests(world, list(WS_T0), timeout=120)
        run = await sb.run_tests(world, [witness], files={witness: HALF_WITNESS}, timeout=120)
    assert clean.canaries == "ok", (clean.tampering, clean.exec.output[-2000:])
    assert {clean.status(i) for i in WS_T0} == {"passed"}
    # Each package ran on its own, with a canary (two tests) of its own among its targets.
    cargo = [line.split() for line in clean.exec.output.splitlines() if line.startswith("TJ_CARGO ")]
    assert [c[c.index("-p") + 1] for c in cargo] == ["numkit", "word-kit"]
    assert all(c.count("--test") == 1 and "--lib" in c for c in cargo)
    # A witness in a member's tests/ folder runs there, beside that member's canary.
    assert run.canaries == "ok", (run.tampering, run.exec.output[-2000:])
    assert run.status(witness) == "passed" and run.status(f"{witness}::tj_rounds_down") == "passed"


async def test_a_target_runner_forging_a_workspaces_ok_lines_is_caught():
    task = workspace_task()
    hostile = Trial("ws-forger", task.id, "agent", "model-a",
                    make_patch({}, {".cargo/config.toml": forger("cargo_runner.toml"),
                                    "forge_tests.sh": forger("forge_tests.sh")}), True)
    async with Sandbox(session="tj-canary-ws", concurrency=1) as sb:
        world = await sb.prepare(task, "model", hostile)
        forged = await sb.run_tests(world, list(WS_T0), timeout=120)
    assert_void(forged, list(WS_T0))


async def test_typescript_vitest_runs_carry_canaries():
    task, honest = fixture_trial("typescript", "query-parse__kestrel__1")
    clean = await t0_run(task, honest)
    assert clean.canaries == "ok", (clean.tampering, clean.exec.output[-2000:])
    assert {clean.status(i) for i in t0(task)} == {"passed"}


async def test_vitest_config_rewriting_the_json_report_is_caught():
    task, honest = fixture_trial("typescript", "query-parse__kestrel__1")
    hostile = with_files(honest, "vitest-forger", {})
    old = (FIXTURES / "typescript" / "environment" / "repo" / "vitest.config.ts").read_text()
    hostile = dataclasses.replace(hostile, patch=hostile.patch + make_patch(
        {"vitest.config.ts": old}, {"vitest.config.ts": forger("vitest_config_rewrite.ts")}))
    assert_void(await t0_run(task, hostile), t0(task))


JS = FIXTURES / "js-runners"


def js_task(framework: str, workdir: str) -> Task:
    env = Environment(image="localhost/testjack-js-runners:1", containerfile=JS / "Containerfile",
                      context=JS, workdir=workdir, build_network=True)
    return Task(id=f"js-{framework.split()[0]}", instruction="", environment=env, reference=Reference(),
                tests=OfficialTests(framework=framework), language="javascript")


def js_trial(task: Task, name: str, old: dict[str, str | None], new: dict[str, str]) -> Trial:
    return Trial(name, task.id, "agent", "model-a", make_patch(old, new), True)


async def js_run(task: Task, trial: Trial, ids: list[str]):
    async with Sandbox(session="tj-canary-js", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        return await sb.run_tests(world, ids, timeout=60)


NOTE = {"NOTES.md": "an honest trial\n"}


async def test_mocha_runs_carry_canaries_and_a_rewritten_report_is_caught():
    task = js_task("mocha", "/app")
    ids = ["test/slug.spec.js"]
    clean = await js_run(task, js_trial(task, "mocha-honest", {"NOTES.md": None}, NOTE), ids)
    assert clean.canaries == "ok", (clean.tampering, clean.exec.output[-2000:])
    assert clean.status(ids[0]) == "passed"
    old = (JS / "mocha" / "src" / "slug.js").read_text()
    hostile = js_trial(task, "mocha-forger", {"src/slug.js": old},
                       {"src/slug.js": forger("mocha_report_rewrite.js")})
    assert_void(await js_run(task, hostile, ids), ids)


@pytest.mark.parametrize("framework, workdir, test_file", [
    ("node --test", "/srv/wordcount", "test/count.test.js"),
    ("jest", "/srv/rangekit", "test/clamp.test.js"),
])
async def test_node_test_and_jest_runs_carry_canaries(framework, workdir, test_file):
    task = js_task(framework, workdir)
    run = await js_run(task, js_trial(task, "honest", {"NOTES.md": None}, NOTE), [test_file])
    assert run.canaries == "ok", (run.tampering, run.exec.output[-2000:])
    assert run.status(test_file) == "passed"


async def test_jest_results_processor_forging_passes_is_caught():
    task = js_task("jest", "/srv/rangekit")
    ids = ["test/clamp.test.js"]
    old = (JS / "jest" / "package.json").read_text()
    pkg = old.replace('"private": true,', '"private": true,\n  "jest": {"testResultsProcessor": "./forge.js"},')
    hostile = js_trial(task, "jest-forger", {"package.json": old, "forge.js": None},
                       {"package.json": pkg, "forge.js": forger("jest_results_processor.js")})
    assert_void(await js_run(task, hostile, ids), ids)


async def test_node_test_preload_rewriting_the_report_is_caught():
    task = js_task("node --test", "/srv/wordcount")
    ids = ["test/count.test.js"]
    old = (JS / "nodetest" / "package.json").read_text()
    pkg = old.replace("--import ./support/setup.js --test", "--import ./support/setup.js --require ./support/forge.cjs --test")
    assert pkg != old
    hostile = js_trial(task, "node-forger", {"package.json": old, "support/forge.cjs": None},
                       {"package.json": pkg, "support/forge.cjs": forger("node_test_require_rewrite.cjs")})
    run = await js_run(task, hostile, ids)
    assert "--require ./support/forge.cjs --test" in run.exec.output  # it ran inside node --test
    assert_void(run, ids)
