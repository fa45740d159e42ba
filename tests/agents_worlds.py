"""Small helpers for the agent tests: a task, a trial and WorldTools made of plain functions.

`FileWorlds` keeps one dict of files per world and runs a handful of commands itself, so the
runtime can be tested without containers. Whole audits against real containers use the
project's Sandbox (see test_agents_sandbox.py).
"""
from __future__ import annotations

from testjack_tui.engine.roles import AuditContext
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

INSTRUCTION = ("Add a function `double(x)` to calc.py that returns twice its argument. "
               "It must raise ValueError for negative input.")

REFERENCE_PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -0,0 +1,4 @@
+def double(x):
+    if x < 0:
+        raise ValueError("negative input not allowed")
+    return 2 * x
"""

TRIAL_PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -0,0 +1,2 @@
+def double(x):
+    return 2 * x
"""


def make_task() -> Task:
    return Task(id="calc", instruction=INSTRUCTION, environment=Environment(image="example/none"),
                reference=Reference(patch=REFERENCE_PATCH),
                tests=OfficialTests(test_patch="+def test_double(): assert double(2) == 4\n",
                                    fail_to_pass=("tests/test_calc.py::test_double",)))


def make_trial(patch: str = TRIAL_PATCH) -> Trial:
    return Trial(id="trial-1", task_id="calc", agent="agentx", model="model-y", patch=patch,
                 official_pass=True)


class FileWorlds:
    """roles.WorldTools over in-memory files; test outcomes come from a table per world."""

    def __init__(self, trial: Trial | None, worlds=("null", "reference", "model"), outcomes=None):
        self.trial = trial
        self.files = {w: {"calc.py": "# calc\n", "README.md": "calc library\n"} for w in worlds}
        self.outcomes = outcomes or {}  # (world, test_id) -> "passed"/"failed"
        self.calls: list[tuple] = []
        self.written: dict[str, str] = {}

    def _check(self, world: str) -> None:
        if world not in self.files:
            raise PermissionError(f"world {world!r} is not available")

    async def run(self, world: str, command: str, timeout: float = 60) -> str:
        self._check(world)
        self.calls.append(("run", world, command))
        if command.startswith("echo "):
            return "[exit code 0]\n" + command[5:]
        if command.startswith("yes"):
            return "[exit code 0]\n" + "y\n" * 20_000
        return f"[exit code 127]\n{command.split()[0]}: command not found"

    async def read_file(self, world: str, path: str) -> str:
        self._check(world)
        self.calls.append(("read_file", world, path))
        if path not in self.files[world]:
            raise FileNotFoundError(path)
        return self.files[world][path]

    async def list_files(self, world: str, path: str = ".") -> str:
        self._check(world)
        return "\n".join(sorted(self.files[world]))

    async def run_tests(self, world: str, test_ids: list[str], files=None) -> str:
        self._check(world)
        self.calls.append(("run_tests", world, tuple(test_ids), tuple(sorted(files or {}))))
        return "\n".join(f"{t} {self.outcomes.get((world, t), 'not_found')}" for t in test_ids)

    def diff(self) -> str:
        return self.trial.patch if self.trial else "(no trial in this session)"

    def official_tests(self) -> str:
        return "fail-to-pass:\n  tests/test_calc.py::test_double"

    def evidence(self) -> str:
        return "ghost branch: none"

    async def write_candidate(self, path: str, source: str) -> None:
        self.written[path] = source


def make_ctx(tools, trial: Trial | None, events: list, ledger=None, session_id="s1",
             transcript_path=None) -> AuditContext:
    return AuditContext(session_id=session_id, task=make_task(), trial=trial, tools=tools,
                        emit=events.append, ledger=ledger, transcript_path=transcript_path)
