"""The audit agent never reads the reference solution G: the reference world only runs tests,
G's code is withheld from what those runs print, and git history past HEAD is gone from the
worlds an agent reads."""
from __future__ import annotations

import subprocess
from contextlib import asynccontextmanager

import pytest
from agents_worlds import FileWorlds, make_task, make_trial

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.api import TestOutcome as Outcome
from testjack_tui.sandbox.api import TestRun as Run
from testjack_tui.agents.sealed import FORGET_FUTURE, MIN_SECRET, WITHHELD, reference_lines, withhold
from testjack_tui.agents.toolbox import Toolbox
from testjack_tui.agents.tools import SandboxTools
from testjack_tui.agents.untrusted import Fence

G_LINE = 'raise ValueError("negative input not allowed")'  # one of G's added lines
# What a candidate that makes G's source its failure message gets back from pytest.
LEAKED = ("AssertionError: def double(x):\n    if x < 0:\n"
          f"        {G_LINE}\n    return 2 * x\n"
          "E   AssertionError: def double(x):\nE       if x < 0:\n"
          f"E           {G_LINE}\n"
          "E       return 2 * x\n\ntests/test_tj_leak.py:3: AssertionError")
LEAK_TEST = "def test_leak():\n    raise AssertionError(open('calc.py').read())\n"


def _exec(text="") -> ExecResult:
    return ExecResult(["sh"], 0, False, text, "", "", "", None, 0.1)


class _Live:
    def __init__(self, world, log):
        self.world, self.log = world, log

    async def exec(self, command, timeout=60, cwd=None, env=None, stdin=None):
        self.log.append((self.world, command))
        return _exec("ok")

    async def read_file(self, path, max_bytes=2 * 1024 * 1024):
        self.log.append((self.world, "read", path))
        return "G source"

    async def list_files(self, path="."):
        return ["calc.py"]

    async def run_tests(self, ids, files=None, timeout=300, isolate_harness=False):
        self.log.append((self.world, tuple(ids)))
        return Run(self.world, list(ids), {i: Outcome(i, "failed", LEAKED) for i in ids}, _exec())

    async def write_file(self, path, source):
        pass


class _Sandbox:
    def __init__(self):
        self.log: list = []

    @asynccontextmanager
    async def open(self, world):
        yield _Live(world, self.log)


async def _call(box, name, **args):
    import json

    return await box.call(name, json.dumps(args))


async def test_the_audit_role_only_runs_tests_in_the_reference_world():
    sandbox = _Sandbox()
    trial = make_trial()
    tools = SandboxTools(sandbox, make_task(), trial, {"null": "null", "reference": "reference", "model": "model"})
    box = Toolbox("audit", tools, Fence(), "audit")
    enums = {s["function"]["name"]: s["function"]["parameters"]["properties"].get("world", {}).get("enum")
             for s in box.schemas() if s["function"]["name"] != "submit"}
    assert enums["run"] == enums["read_file"] == enums["list_files"] == ["null", "model"]
    assert enums["run_tests"] == ["null", "reference", "model"]
    for name, args in (("run", {"command": "cat calc.py"}), ("read_file", {"path": "calc.py"}),
                       ("list_files", {"path": "."}), ("run", {"command": "git log -p --all"})):
        result = await _call(box, name, world="reference", **args)
        assert result.error and "holds the reference solution" in result.text and "run_tests" in result.text
    # Below the toolbox too: the tools object refuses a sealed world whoever asks.
    for attempt in (tools.run("reference", "cat calc.py"), tools.read_file("reference", "calc.py"),
                    tools.list_files("reference")):
        with pytest.raises(PermissionError):
            await attempt
    assert not any(entry[0] == "reference" for entry in sandbox.log)  # no container was even opened

    await _call(box, "write_test_file", path="tests/test_tj_leak.py", source=LEAK_TEST)
    on_g = (await _call(box, "run_tests", world="reference", test_ids=["tests/test_tj_leak.py::test_leak"])).text
    assert "FAILED    tests/test_tj_leak.py::test_leak" in on_g and WITHHELD in on_g
    for line in reference_lines(make_task()):
        assert line not in on_g
    assert "tests/test_tj_leak.py:3" in on_g  # where the agent's own test failed stays visible
    # The trial's world shows its own code as it is.
    on_s = (await _call(box, "run_tests", world="model", test_ids=["tests/test_tj_leak.py::test_leak"])).text
    assert G_LINE in on_s and WITHHELD not in on_s
    # Worlds the agent may read forget history past HEAD when opened; the reference is never opened for it.
    forgot = [world for world, *rest in sandbox.log if rest and rest[0] == FORGET_FUTURE]
    assert forgot == ["model"]
    await tools.aclose()


async def test_the_task_analysis_and_the_reviewer_still_reach_only_the_null_world():
    trial = make_trial()
    for role, phase in (("task_analysis", "analysis"), ("reviewer", "review")):
        box = Toolbox(role, FileWorlds(trial), Fence(), phase)
        result = await _call(box, "read_file", world="reference", path="calc.py")
        assert result.error and "not available to this role" in result.text


def test_reference_lines_come_from_g_not_from_t0_or_short_lines():
    lines = reference_lines(make_task())
    assert G_LINE in lines and "def double(x):" in lines and "return 2 * x" in lines
    assert all(len(line) >= MIN_SECRET for line in lines)  # `pass`, `x = 1`: anyone's code
    # The agent's own test lines are never withheld, even when G has the same line.
    text = "E   return 2 * x\nE   assert double(2) == 4"
    assert withhold(text, lines) == f"E   {WITHHELD}\nE   assert double(2) == 4"
    assert withhold(text, lines, visible="    return 2 * x\n") == text


def test_a_solve_script_and_the_patch_it_embeds_are_g():
    from testjack_tui.model import Reference

    task = make_task()
    script = "#!/bin/bash\ncd /app\ngit apply <<'EOF'\n+def triple(value):\n+    return 3 * value\nEOF\n"
    task = type(task)(**{**vars(task), "reference": Reference(solve_script=script)})
    lines = reference_lines(task)
    assert "def triple(value):" in lines and "return 3 * value" in lines and "cd /app" not in lines


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_forgetting_the_future_drops_later_commits_and_g_harness_copies_but_keeps_the_past(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text("# calc\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "old")
    _git(repo, "tag", "v0.1")
    (repo / "calc.py").write_text("# calc\n# base\n")
    _git(repo, "commit", "-q", "-am", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "calc.py").write_text("def double(x):\n    return 2 * x  # the upstream fix\n")
    _git(repo, "commit", "-q", "-am", "the fix")
    fix = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "tag", "v1.0")
    _git(repo, "checkout", "-q", base)  # the task's base, detached, as environment images have it
    harness = tmp_path / "harness"  # where a model world keeps G's versions of harness files
    (harness / "ref").mkdir(parents=True)
    (harness / "ref" / "conftest.py").write_text("# G's conftest\n")
    env = {**__import__("os").environ, "TJ_HARNESS": str(harness)}
    out = subprocess.run(["sh", "-c", FORGET_FUTURE], cwd=repo, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "forgot 2 refs" in out.stdout
    assert not harness.exists()
    assert "the fix" not in _git(repo, "log", "--all", "--oneline")
    assert subprocess.run(["git", "-C", str(repo), "cat-file", "-e", fix], capture_output=True).returncode != 0
    assert _git(repo, "rev-parse", "HEAD").strip() == base and "v0.1" in _git(repo, "tag")
    assert (repo / "calc.py").read_text() == "# calc\n# base\n"
