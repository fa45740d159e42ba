"""A tiny task built on the spot, for `doctor` and for the sandbox's own tests.

The repo has a bug (`add` subtracts); G fixes it; T0 adds a fail-to-pass test and keeps a
pass-to-pass one. Everything is generated here, so no benchmark files are needed.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

from .base_image import BASE_IMAGE

BASE_FILES = {
    "calc/__init__.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
    "tests/__init__.py": "",
    "tests/test_sub.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
    "setup.cfg": "[metadata]\nname = calc\n",
}
FIXED_CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
T0_FILE = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
           "class TestAdd:\n    def test_zero(self):\n        assert add(0, 4) == 4\n")
F2P = ("tests/test_add.py::test_add", "tests/test_add.py::TestAdd::test_zero")
P2P = ("tests/test_sub.py::test_sub",)


def make_patch(old: dict[str, str | None], new: dict[str, str | None]) -> str:
    """A git-style unified diff from old to new file contents (None = absent)."""
    out: list[str] = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        if a is None:
            out.append("new file mode 100644\n")
        elif b is None:
            out.append("deleted file mode 100644\n")
        lines = difflib.unified_diff(
            (a or "").splitlines(keepends=True), (b or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if a is not None else "/dev/null",
            tofile=f"b/{path}" if b is not None else "/dev/null", n=3)
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_environment(root: Path, files: dict[str, str] | None = None, tag: str = "") -> Path:
    """Write a Containerfile context with the repo committed in /app. Returns the context dir."""
    context = root / "environment"
    repo = context / "repo"
    for path, text in (files or BASE_FILES).items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (context / "Containerfile").write_text(
        f"FROM {BASE_IMAGE}\n"
        + (f"LABEL testjack.selftest={tag}\n" if tag else "")
        + "COPY repo /app\nWORKDIR /app\n"
        "RUN git init -q && git add -A && "
        "git -c user.name=testjack -c user.email=testjack@localhost commit -q -m base\n")
    return context


def tiny_task(root: Path, task_id: str = "tiny", files: dict[str, str] | None = None,
              tag: str = "", **overrides: Any) -> Task:
    context = write_environment(root, files, tag)
    base = files or BASE_FILES
    reference = overrides.pop("reference", Reference(
        patch=make_patch({"calc/__init__.py": base["calc/__init__.py"]}, {"calc/__init__.py": FIXED_CALC})))
    tests = overrides.pop("tests", OfficialTests(
        test_patch=make_patch({"tests/test_add.py": None}, {"tests/test_add.py": T0_FILE}),
        fail_to_pass=F2P, pass_to_pass=P2P, test_files=("tests/test_add.py",)))
    return Task(id=task_id, instruction="Make add() return the sum of its arguments.",
                environment=Environment(containerfile=context / "Containerfile", context=context,
                                        workdir="/app"),
                reference=reference, tests=tests, **overrides)


def trial_for(task: Task, trial_id: str, new_files: dict[str, str | None], official_pass: bool = True,
              model: str = "model-a") -> Trial:
    """A trial whose patch changes the tiny repo's files to new_files."""
    old = {path: BASE_FILES.get(path) for path in new_files}
    return Trial(id=trial_id, task_id=task.id, agent="agent", model=model,
                 patch=make_patch(old, new_files), official_pass=official_pass)
