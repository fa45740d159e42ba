"""The re-run command a report prints is the task's runner's own command for the witness (issue
29.2): never pytest for a TypeScript, Go or Rust witness, and never our launcher."""
from __future__ import annotations

import pytest

from testjack_tui.engine.verdicts import FindingInput, WitnessRun, rerun_command
from testjack_tui.repo_files import source_language
from testjack_tui.sandbox.runners.rerun import rerun_command as runner_command

CASES = [
    ("pytest", "tests/test_tj_x.py", ["tests/test_tj_x.py::test_a"],
     "cd /app && python3 -m pytest -q -p no:cacheprovider tests/test_tj_x.py::test_a"),
    ("django", "tests/forms_tests/test_tj_x.py", ["tests/forms_tests/test_tj_x.py::XTests::test_a"],
     "cd /testbed && python3 tests/runtests.py --verbosity 2 --parallel 1 forms_tests.test_tj_x.XTests.test_a"),
    ("go test", "slug/sep_tj_test.go", ["slug/sep_tj_test.go::TestTJSep/dash", "slug/sep_tj_test.go::TestTJOther"],
     "cd /app && go test -count=1 -v -run '^(TestTJSep|TestTJOther)$' ./slug"),
    ("go test", "sep_tj_test.go", ["sep_tj_test.go"], "cd /app && go test -count=1 -v ."),
    ("cargo test", "tests/tj_roman.rs", ["tests/tj_roman.rs::rejects_empty"],
     "cd /app && cargo test --test tj_roman -- --exact rejects_empty"),
    ("cargo nextest", "crates/core/tests/tj_x.rs", ["crates/core/tests/tj_x.rs"],
     "cd /app && cargo test --manifest-path crates/core/Cargo.toml --test tj_x"),
    ("vitest-junit-to-ctrf", "test/plus.tj.test.ts", ["test/plus.tj.test.ts: decodes + as a space"],
     "cd /app && ./node_modules/.bin/vitest run test/plus.tj.test.ts"),
    ("ts-jest", "src/__tests__/x.tj.test.ts", ["src/__tests__/x.tj.test.ts"],
     "cd /app && ./node_modules/.bin/jest --runTestsByPath src/__tests__/x.tj.test.ts"),
    ("mocha", "test/x.tj.spec.js", ["test/x.tj.spec.js"], "cd /app && ./node_modules/.bin/mocha test/x.tj.spec.js"),
    ("node --test", "test/x.tj.test.mjs", ["test/x.tj.test.mjs"], "cd /app && node --test test/x.tj.test.mjs"),
]


@pytest.mark.parametrize("framework,path,ids,expected", CASES, ids=[c[0] for c in CASES])
def test_each_runner_prints_its_own_command(framework, path, ids, expected):
    workdir = "/testbed" if framework == "django" else "/app"
    assert runner_command(framework, path, ids, workdir) == expected


def test_a_finding_gets_its_tasks_runner_and_ids_are_quoted():
    run = WitnessRun("failed")
    f = FindingInput("w1", "src/__tests__/x y.tj.test.ts", "it('a', () => {})", "r", True, run, run,
                     test_ids=("src/__tests__/x y.tj.test.ts",))
    assert rerun_command(f, "/app", "jest") == \
        "cd /app && ./node_modules/.bin/jest --runTestsByPath 'src/__tests__/x y.tj.test.ts'"
    assert "pytest" not in rerun_command(f, "/app", "vitest")
    evil = FindingInput("w2", "tests/test_tj_x.py", "", "r", True, run, run, test_ids=("tests/t.py::a; rm -rf /",))
    assert rerun_command(evil, "/app", None).endswith("'tests/t.py::a; rm -rf /'")


def test_code_is_shown_in_its_own_language():
    assert [source_language(p) for p in ("a/x.tj.test.ts", "x_test.go", "tests/t.rs", "t.mjs", "t.py", "Makefile")] \
        == ["typescript", "go", "rust", "javascript", "python", "text"]
