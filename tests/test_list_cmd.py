"""`testjack-tui list`: table and JSON output, warnings for skipped input, one-line errors."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import typer
from typer.testing import CliRunner

from testjack_tui.commands import list_cmd

from conftest import DEMO, ROOT

HARBOR = ROOT / "tests" / "fixtures" / "harbor"
SWEBENCH = ROOT / "tests" / "fixtures" / "swebench"
CLI = ROOT / ".venv" / "bin" / "testjack-tui"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    """The list command inside a command group, as cli.py mounts it beside the other commands."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _group() -> None:
        """test group"""

    list_cmd.register(app)
    return app


def run(app, *args):
    return CliRunner().invoke(app, ["list", *map(str, args)])


def test_table_harbor(app):
    result = run(app, HARBOR)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"harbor-fixture (harbor) {HARBOR}"
    assert lines[1].split() == ["TASK", "LANGUAGE", "RUNNER", "TRIALS", "PASSING", "MODELS"]
    assert lines[2].split() == ["slugify-unicode", "python", "pytest", "2", "1", "claude-y,", "gpt-x"]
    assert lines[3].split() == ["parse-duration", "python", "pytest", "2", "1", "claude-y,", "gpt-x"]
    assert lines[4] == "total: 2 tasks, 4 trials, 2 officially passing, 2 models"
    assert result.stderr == ""


def test_json_swebench(app):
    result = run(app, SWEBENCH / "benchmark.toml", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["name"] == "swebench-fixture" and data["format"] == "swebench"
    tasks = {t["id"]: t for t in data["tasks"]}
    assert tasks["acme__calc-101"] == {"id": "acme__calc-101", "language": "python",
                                       "framework": "pytest", "runner": "pytest", "trials": 2,
                                       "passing": 2, "models": ["model-b", "org/model-a"]}
    assert tasks["instance_acme__fmt-7f3e"]["passing"] == 0
    assert tasks["instance_acme__fmt-7f3e"]["language"] == "javascript"
    assert data["totals"] == {"tasks": 2, "trials": 4, "passing": 2, "models": ["model-b", "org/model-a"]}
    assert data["skipped"] == []


def test_tasks_folder_without_trials(app):
    result = run(app, HARBOR / "tasks", "--json")
    data = json.loads(result.stdout)
    assert [t["trials"] for t in data["tasks"]] == [0, 0] and data["totals"]["models"] == []


def test_skipped_are_warnings_on_stderr(app, tmp_path):
    bench = tmp_path / "h"
    shutil.copytree(HARBOR, bench)
    (bench / "jobs/job-0001/slugify-unicode__b2/artifacts/model.patch").write_text("")
    result = run(app, bench, "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)  # stdout stays pure JSON
    assert data["totals"]["trials"] == 3 and len(data["skipped"]) == 1
    assert result.stderr == (f"warning: skipped {bench}/jobs/job-0001/slugify-unicode__b2/"
                             "artifacts/model.patch: empty patch\n")


@pytest.mark.parametrize("content", ['name = "x"\nformat = [\n', 'name = "x"\n'])
def test_errors_are_one_line_exit_2(app, tmp_path, content):
    manifest = tmp_path / "benchmark.toml"
    manifest.write_text(content)
    result = run(app, manifest)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {manifest}: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_missing_path(app, tmp_path):
    result = run(app, tmp_path / "nothing")
    assert result.exit_code == 2 and result.stderr == f"error: {tmp_path / 'nothing'}: no such file or folder\n"


def test_console_script(tmp_path):
    """The installed `testjack-tui` runs `list` end to end (and the bundled demo, once present)."""
    out = subprocess.run([str(CLI), "list", str(HARBOR)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "total: 2 tasks, 4 trials, 2 officially passing, 2 models" in out.stdout
    bad = subprocess.run([str(CLI), "list", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "Traceback" not in bad.stderr
    if (DEMO / "benchmark.toml").is_file():
        demo = subprocess.run([str(CLI), "list", str(DEMO), "--json"], capture_output=True, text=True, timeout=60)
        assert demo.returncode == 0, demo.stderr
        data = json.loads(demo.stdout)
        assert data["format"] == "harbor" and data["totals"]["tasks"] > 0 and data["totals"]["trials"] > 0
        assert demo.stderr == "", demo.stderr  # the demo loads without skipping anything


def test_go_task_and_task_without_runner(app, tmp_path):
    result = run(app, ROOT / "tests" / "fixtures" / "golang")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2].split()[:4] == ["slugify-separators", "go", "go", "test"]
    # A language we have no runner for: one line says so; the listing still works.
    task = tmp_path / "tasks" / "ledger-java"
    (task / "tests").mkdir(parents=True)
    (task / "task.toml").write_text('[metadata]\nlanguage = "java"\n[environment]\ndocker_image = "x"\n')
    (task / "instruction.md").write_text("Do it.")
    result = run(app, tmp_path / "tasks")
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stdout.splitlines() if line.startswith("no runner:")]
    assert notes == ["no runner: ledger-java (java, framework 'junit'): witnesses cannot run there; "
                     "verify still runs the task's own tests"]
    assert result.stdout.splitlines()[2].split()[:3] == ["ledger-java", "java", "none"]


def test_the_runner_is_what_test_sh_runs_and_a_disagreeing_declaration_is_shown(app, tmp_path):
    """DeepSWE tasks declare `jest` in their metadata while test.sh runs `npx vitest`: witnesses
    must run under vitest, and `list` shows both."""
    bench = tmp_path / "ts"
    shutil.copytree(ROOT / "tests" / "fixtures" / "typescript", bench)
    toml = bench / "tasks" / "query-parse" / "task.toml"
    toml.write_text(toml.read_text().replace('language = "typescript"',
                                             'language = "typescript"\ntest_framework = "jest"'))
    script = bench / "tasks" / "query-parse" / "tests" / "test.sh"
    script.write_text(script.read_text().replace("./node_modules/.bin/vitest run", "pnpm exec vitest run"))
    result = run(app, bench, "--json")
    assert result.exit_code == 0, result.output
    [task] = json.loads(result.stdout)["tasks"]
    assert (task["framework"], task["runner"], task["declared"]) == ("vitest", "vitest", "jest")
    table = run(app, bench).stdout.splitlines()
    assert "vitest (test.sh; declared jest)" in table[2]
    # A declaration naming the tool test.sh runs keeps its spelling and shows nothing more.
    toml.write_text(toml.read_text().replace('test_framework = "jest"', 'test_framework = "vitest-junit-to-ctrf"'))
    [task] = json.loads(run(app, bench, "--json").stdout)["tasks"]
    assert task["framework"] == "vitest-junit-to-ctrf" and task["runner"] == "vitest" and "declared" not in task


def test_a_script_tool_is_an_invocation_not_a_mention():
    from testjack_tui.benchmarks.languages import framework_of_script

    runs = {"npx vitest run": "vitest", "pnpm exec vitest run --reporter=junit": "vitest",
            "npm run build && npx jest --ci --reporters=jest-junit": "jest",
            "node --experimental-vm-modules node_modules/.bin/jest": "jest",
            "./node_modules/.bin/mocha --reporter mocha-junit-reporter": "mocha",
            "node --test --test-reporter=/tests/r.mjs test/": "node --test",
            "go test -json ./...": "go test", "cargo nextest run": "cargo nextest",
            "CARGO_TERM_COLOR=never cargo test --no-fail-fast": "cargo test", "python -m pytest -rA": "pytest"}
    for script, tool in runs.items():
        assert framework_of_script(f"#!/bin/bash\ncd /app\n{script}\n", "typescript") == tool, script
    for script in ("echo done # vitest", "pip install pytest-xdist ts-jest", "cat /logs/verifier/jest.json",
                   "python3 /tests/grader.py grade"):
        assert framework_of_script(script, "typescript") is None, script
