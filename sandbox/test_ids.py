"""Test ids in two schemes, mapped both ways by one pair of functions.

A pytest node id is `path/to/test_x.py::TestClass::test_y[param]`. A benchmark whose grader
reads JUnit XML (DeepSWE's `grade.format = "junit"`) names the same test
`classname + "." + name` as pytest's junitxml writes them: `path.to.test_x.TestClass` +
`test_y[param]`, i.e. `path.to.test_x.TestClass.test_y[param]`. Parameters may contain dots and
slashes, so the split always happens before the first `[`.

Going back needs to know where the module path ends and the classes begin; the test files a
task knows about (T0's files, the files that exist in the repo) settle it, and without them
trailing capitalised parts are taken as classes.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable


def mangle(nodeid: str) -> tuple[str, str]:
    """(classname, name) pytest's junitxml writes for a node id."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def is_pytest_id(test_id: str) -> bool:
    """A pytest node id, file or directory (a JUnit classname never holds "::" or "/")."""
    head = test_id.partition("[")[0]
    return "::" in head or head.endswith(".py") or "/" in head


def pytest_to_junit(nodeid: str) -> str:
    """`tests/test_x.py::TestC::test_y[1.5-a]` -> `tests.test_x.TestC.test_y[1.5-a]`."""
    if not is_pytest_id(nodeid):
        return nodeid
    classname, name = mangle(nodeid)
    return f"{classname}.{name}" if classname else name


def module_of(path: str) -> str:
    return re.sub(r"\.py$", "", path.replace("/", "."))


def pytest_candidates(test_id: str) -> list[str]:
    """Every pytest node id a JUnit `classname.name` id can mean, the likeliest first: where the
    module path ends is not written in the id, so the guess (trailing capitalised parts are
    classes) comes first, then the other splits from the longest module path down, then the
    whole id as a file. A pytest node id means itself."""
    if is_pytest_id(test_id):
        return [test_id]
    head, bracket, params = test_id.partition("[")
    parts = head.split(".")
    if len(parts) < 2:
        return [test_id]
    guess = len(parts) - 1
    while guess > 1 and parts[guess - 1][:1].isupper():
        guess -= 1
    cuts = [guess] + [c for c in range(len(parts) - 1, 0, -1) if c != guess]
    found = ["::".join(["/".join(parts[:c]) + ".py", *parts[c:]]) + bracket + params for c in cuts]
    if not bracket:
        found.append("/".join(parts) + ".py")
    return found


@functools.lru_cache(maxsize=32)
def _modules(files: tuple[str, ...]) -> dict[str, str]:
    """Module name -> test file; cached because a T0 of a thousand ids asks it per id."""
    return {module_of(f): f for f in files if f.endswith(".py")}


def junit_to_pytest(test_id: str, files: Iterable[str] = ()) -> str:
    """The pytest node id of a JUnit `classname.name` id: the candidate whose file is one of
    `files` (see the module docstring), else the likeliest one."""
    candidates = pytest_candidates(test_id)
    known = _modules(tuple(files))
    for candidate in candidates:
        path, sep, rest = candidate.partition("::")
        if module_of(path) in known:
            return known[module_of(path)] + sep + rest
    return candidates[0]


def file_of(test_id: str, files: Iterable[str] = ()) -> str:
    """The test file an id (in either scheme) lives in."""
    return junit_to_pytest(test_id, files).split("::")[0]


def function_of(test_id: str) -> str:
    """The test function's name, without class or parameters."""
    head = test_id.partition("[")[0]
    return re.split(r"::|\.", head)[-1]
