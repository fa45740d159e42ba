"""Harness tampering: files a trial's patch touches that can change how tests run or pass.

A conftest hook can turn every failure into a pass; pytest config can add options or plugins;
sitecustomize/usercustomize and .pth files run at interpreter start; an edited test file can
weaken tests. The same holds per ecosystem: in Go a `TestMain` or an `init()` in a `_test.go`
file runs before every test of its package (and can flip package state or exit early). For
witness runs (isolate_harness=True) these are restored to the reference
version before the tests run, and what was restored is reported.
"""
from __future__ import annotations

import posixpath
import re

from .patches import file_sections

PYTEST_CONFIG = {"pytest.ini", ".pytest.ini"}
MAYBE_PYTEST_CONFIG = {"pyproject.toml", "setup.cfg", "tox.ini"}
STARTUP_HOOKS = {"sitecustomize.py", "usercustomize.py"}
_GO_HOOK = re.compile(r"^\+\s*func\s+(TestMain\s*\(|init\s*\(\s*\))", re.M)


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (any(p in ("tests", "test", "testing") for p in parts[:-1])
            or bool(re.match(r"test_.*\.py$", name)) or name.endswith(("_test.py", "_test.go")))


def harness_reasons(patch: str) -> dict[str, str]:
    """Harness files a patch touches, with why each matters. Test files are candidates:
    they count only when they exist in the base repo (checked inside the world)."""
    found: dict[str, str] = {}
    for path, text in file_sections(patch).items():
        name = posixpath.basename(path)
        if name == "conftest.py":
            found[path] = "pytest conftest (hooks and fixtures)"
        elif name in PYTEST_CONFIG:
            found[path] = "pytest configuration"
        elif name in MAYBE_PYTEST_CONFIG and "pytest" in text:
            found[path] = "pytest configuration"
        elif name in STARTUP_HOOKS or name.endswith(".pth"):
            found[path] = "interpreter start-up hook"
        elif name.endswith("_test.go") and _GO_HOOK.search(text):
            found[path] = "Go TestMain/init in a test file (runs before every test of the package)"
        elif is_test_path(path):
            found[path] = "test file"
    return found
