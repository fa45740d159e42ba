"""10c, 10d, 10e. T0 of a real-size task through the benchmark's own flow vs our direct runner (full run
only; rows 10/10b are in real_size.py).

The generated repository of row 10 (about 1,000 tests, 50 k lines, a 600-line reference patch) is
written out as a benchmark in DeepSWE's Harbor layout and loaded by our own loader: task.toml,
instruction.md, solution/solution.patch, and tests/ with the fixture frame's `test.sh` and
`grader.py` (tests/fixtures/deepswe), a `config.json` listing every T0 test in the grader's JUnit
`classname.name` scheme, and a `test.patch` that adds the repository's `test.sh` (`base`: the
existing suite, `new`: the tests the task adds) and the new tests. The repository is committed on
this machine with a fixed identity and date, so `base_commit` is known before the image is built.

Rows as in row 8 (tests/perf/t0_flow.py): the flow vs the direct runner on the same ids in the
prepared reference world (target <= 1.3x), that flow vs the same `test.sh` by hand, and our own
time around the command.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .real_size import TEST_FILES, TESTS_PER_FILE, generated
from .t0_flow import FIXTURE, flow_rows, measure

FRAME = FIXTURE / "tasks" / "rates-cheapest" / "tests"
NEW_TESTS = 20
IMAGE = "localhost/tj-perf-real-size-t0:1"


def _new_tests() -> str:
    lines = ["from pkg.mod_00 import f_0_0", "", ""]
    for k in range(NEW_TESTS):
        lines += [f"def test_new_{k}():", f"    assert f_0_0({k}, 2) >= 0", "", ""]
    return "\n".join(lines)


INNER_TEST_SH = """#!/usr/bin/env sh
set -eu
case "${1:-}" in
  base) python3 -m pytest -q tests --ignore=tests/test_new.py ;;
  new) python3 -m pytest -q tests/test_new.py ;;
  *) echo "usage: ./test.sh {base|new}" >&2; exit 2 ;;
esac
"""


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="realsize", GIT_AUTHOR_EMAIL="realsize@example.invalid",
               GIT_COMMITTER_NAME="realsize", GIT_COMMITTER_EMAIL="realsize@example.invalid",
               GIT_AUTHOR_DATE="2025-01-01T00:00:00+00:00", GIT_COMMITTER_DATE="2025-01-01T00:00:00+00:00")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def write_benchmark(root: Path) -> tuple[Path, int]:
    """The real-size task as a DeepSWE-layout benchmark under root; (its folder, T0 size)."""
    from testjack_tui.sandbox.selftest import BASE_IMAGE, make_patch

    files, before, after = generated()
    repo = root / "environment" / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "real-size base")
    base_commit = _git(repo, "rev-parse", "HEAD")
    (root / "environment" / "Containerfile").write_text(
        f"FROM {BASE_IMAGE}\nCOPY repo/ /app/\nWORKDIR /app\n")
    (root / "benchmark.toml").write_text(
        'name = "perf-real-size-t0"\nformat = "harbor"\ntasks = "tasks"\n\n'
        f'[[images]]\nname = "{IMAGE}"\ncontainerfile = "environment/Containerfile"\n'
        'context = "environment"\n')

    task = root / "tasks" / "real-size"
    (task / "solution").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text(
        'schema_version = "1.3"\n[task]\nname = "perf/real-size"\n[metadata]\nlanguage = "python"\n'
        f'base_commit_hash = "{base_commit}"\n[verifier]\nnetwork_mode = "no-network"\ntimeout_sec = 900.0\n'
        f'[environment]\ndocker_image = "{IMAGE}"\nworkdir = "/app"\ncpus = 1\nmemory_mb = 2048\n')
    (task / "instruction.md").write_text("# Real size\n\nChange the first functions of five modules.\n")
    (task / "solution" / "solution.patch").write_text(make_patch(before, after))
    for name in ("test.sh", "grader.py"):
        shutil.copy2(FRAME / name, task / "tests" / name)
    (task / "tests" / "test.patch").write_text(
        make_patch({"test.sh": None, "tests/test_new.py": None},
                   {"test.sh": INNER_TEST_SH, "tests/test_new.py": _new_tests()}))
    p2p = [f"tests.test_mod_{t:02d}.test_f_{t}_{k}" for t in range(TEST_FILES) for k in range(TESTS_PER_FILE)]
    f2p = [f"tests.test_new.test_new_{k}" for k in range(NEW_TESTS)]
    (task / "tests" / "config.json").write_text(json.dumps({
        "base_commit": base_commit, "f2p_node_ids": f2p, "p2p_node_ids": p2p,
        "grade": {"format": "junit", "tool_label": "pytest-junitxml",
                  "reports": ["/logs/verifier/base.xml", "/logs/verifier/new.xml"]}}))
    return root, len(p2p) + len(f2p)


def run(quick: bool = False) -> list[dict]:
    if quick:
        return []  # CI time: the full run only
    from testjack_tui.benchmarks import load_benchmark

    root = Path(tempfile.mkdtemp(prefix="tj-perf-real-t0-"))
    try:
        folder, n = write_benchmark(root)
        bench = load_benchmark(folder)
        if bench.skipped:
            raise RuntimeError(f"the generated benchmark did not load: {bench.skipped[0]}")
        task = bench.tasks["perf/real-size"]
        got = asyncio.run(measure(task, 3, "perf-real-size-t0"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return flow_rows(("10c", "10d", "10e"), f"real size: {n} T0 tests in {TEST_FILES + 1} files, the reference patch "
                            "of row 10", got)
