"""Witness runs under a JavaScript repository's own test configuration (issue 36.1, beyond
pytest): a jest config whose `testMatch` and `testPathIgnorePatterns` would drop our witness
file and whose `coverageThreshold` fails any focused run, a vitest config whose `include`
and `exclude` would not collect it and which sets coverage thresholds, jest `roots` and
`projects` (a monorepo) that hold no witness folder, and a vitest workspace whose projects do
not include it. jest drops a file named
with `--runTestsByPath` that its patterns do not match and vitest says "No test files found":
either way every witness would be `not_found` on the reference and dropped.

On the jest and TypeScript (vitest) fixtures' own tasks and images, real podman: the repo's
config is the one a real repository would have (written in with the witness), the operator's
witness passes on the reference world and fails on the planted defect, and the launcher says,
before any code of the repo runs, what it changed of the configuration."""
from __future__ import annotations

import asyncio
import json

import pytest

from conftest import ROOT
from testjack_tui.sandbox.runners.base import config_notes

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1200)]

FIXTURES = ROOT / "tests" / "fixtures"

JEST_CONFIG = {"testMatch": ["**/test/clamp.test.js"],
               "testPathIgnorePatterns": ["/node_modules/", "/test/(?!clamp\\.)"],
               "collectCoverage": True, "coverageThreshold": {"global": {"lines": 100, "branches": 100}}}
VITEST_CONFIG = '''import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  test: {
    root: here,
    include: ["test/query.test.ts", "test/path.test.ts"],
    exclude: ["**/node_modules/**", "test/!(query|path).test.ts"],
    coverage: { thresholds: { lines: 100, branches: 100 } },
  },
});
'''
# A monorepo's jest config: the packages' own projects, and the library's, whose roots and
# testMatch hold neither our witness's folder nor its name. A file given to every project would
# also run under the cli package's setup, which throws.
JEST_PROJECTS = {
    "jest.config.js": """module.exports = {
  projects: [
    "<rootDir>/packages/*",
    { displayName: "rangekit", roots: ["<rootDir>/src"], testMatch: ["<rootDir>/src/**/*.spec.js"] },
  ],
};
""",
    "packages/cli/package.json": json.dumps({"name": "rangekit-cli", "private": True, "jest": {
        "displayName": "cli", "setupFiles": ["<rootDir>/setup.js"]}}),
    "packages/cli/setup.js": 'throw new Error("the cli package\'s setup ran a test that is not its own");\n',
    "packages/cli/test/cli.test.js": 'test("cli", () => expect(1).toBe(1));\n',
}
# A vitest workspace: a package of its own, and the library as an inline project whose include
# lists the repo's two test files only. The package's setup throws: a witness given to it fails.
VITEST_WORKSPACE = {
    "vitest.workspace.ts": """export default [
  "packages/*",
  { test: { name: "querykit", include: ["test/query.test.ts", "test/path.test.ts"] } },
];
""",
    "packages/cli/vitest.config.ts": 'export default { test: { name: "cli", setupFiles: ["./setup.ts"] } };\n',
    "packages/cli/setup.ts": 'throw new Error("the cli package\'s setup ran a test that is not its own");\n',
    "packages/cli/test/cli.test.ts": 'import { it, expect } from "vitest";\nit("cli", () => expect(1).toBe(1));\n',
}
# (fixture, task, recorded witness, where it goes, defect trial, config files, notes the launcher prints)
CASES = {
    "jest": ("jest", "clamp-bounds", "au_nan_v1.js", "test/nan.tj.test.js", "clamp-bounds__lumen__2",
             lambda repo: {"package.json": json.dumps(
                 {**json.loads((repo / "package.json").read_text()), "jest": JEST_CONFIG}, indent=2)},
             ["package.json: testMatch: the named witness files run whatever it says",
              "package.json: testPathIgnorePatterns: the named witness files run whatever it says",
              "package.json: coverageThreshold left out (a focused run covers a fraction of the code)"]),
    "jest-projects": ("jest", "clamp-bounds", "au_nan_v1.js", "test/nan.tj.test.js", "clamp-bounds__lumen__2",
                      lambda repo: JEST_PROJECTS,
                      ["jest.config.js: projects: each named witness file runs in the one project whose "
                       "rootDir holds it", "jest.config.js: roots: the named witness files' folders added",
                       "jest.config.js: testMatch: the named witness files run whatever it says"]),
    "vitest": ("typescript", "query-parse", "au_plus_v1.ts", "test/plus.tj.test.ts", "query-parse__lumen__2",
               lambda repo: {"vitest.config.ts": VITEST_CONFIG},
               ["vitest.config.ts: include: the named witness files run whatever it says",
                "vitest.config.ts: exclude: the named witness files run whatever it says",
                "vitest.config.ts: coverage thresholds left out (a focused run covers a fraction of the code)"]),
    # roots alone: jest finds no test outside them, whatever file is named.
    "jest-roots": ("jest", "clamp-bounds", "au_nan_v1.js", "test/nan.tj.test.js", "clamp-bounds__lumen__2",
                   lambda repo: {"package.json": json.dumps(
                       {**json.loads((repo / "package.json").read_text()), "jest": {"roots": ["<rootDir>/src"]}},
                       indent=2)},
                   ["package.json: roots: the named witness files' folders added"]),
    "vitest-workspace": ("typescript", "query-parse", "au_plus_v1.ts", "test/plus.tj.test.ts", "query-parse__lumen__2",
                         lambda repo: VITEST_WORKSPACE,
                         ["vitest.config.ts: include: the named witness files run whatever it says",
                          "vitest.workspace.ts: each named witness file runs in the one project whose root "
                          "holds it, added to its include"]),
}


async def _runs(language: str) -> dict:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    fixture, task_id, recorded, path, defect, configs, _ = CASES[language]
    bench = FIXTURES / fixture
    loaded = load_benchmark(bench)
    task, trial = loaded.tasks[task_id], next(t for t in loaded.trials if t.id == defect)
    files = {**configs(bench / "environment" / "repo"),
             path: (bench / "agent-scripts" / task_id / "candidates" / recorded).read_text()}
    runs = {}
    async with Sandbox(session=f"tj-js-config-{language}", concurrency=1) as sb:
        for name, world in (("reference", await sb.prepare(task, "reference")),
                            ("model", await sb.prepare(task, "model", trial))):
            runs[name] = await sb.run_tests(world, [path], files=files, timeout=300)
    return runs


@pytest.mark.parametrize("language", list(CASES))
def test_a_witness_runs_under_the_repos_own_js_test_configuration(language):
    path, notes = CASES[language][3], CASES[language][6]
    runs = asyncio.run(_runs(language))
    reference, model = runs["reference"], runs["model"]
    assert reference.outcomes[path].status == "passed", reference.outcomes[path].message[-2000:]
    assert model.outcomes[path].status == "failed", model.outcomes[path].message[-2000:]
    # What was changed for the run is said before any code of the repo ran (the engine logs
    # each once per task: engine/runner.py _note_config).
    assert config_notes(reference.exec.stdout_head or "") == notes, reference.exec.stdout_head[-2000:]
