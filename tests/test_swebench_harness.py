"""SWE-bench family T0: the harness's per-repository command and log parsers, and a
Django-shaped task (tests/fixtures/swebench-django) verified through its runtests.py-style runner."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks import load_benchmark
from benchmarks import swebench_harness as harness
from benchmarks.swebench_harness import directives, parse_log
from testjack_tui.commands.verify_cmd import verify_benchmark

FIXTURE = Path(__file__).parent / "fixtures" / "swebench-django"

PYTEST_LOG = """tests/test_ops.py::test_a PASSED
=========================== short test summary info ============================
PASSED tests/test_ops.py::test_a
PASSED tests/test_ops.py::test_p[1.5-a/b]
FAILED tests/test_ops.py::TestK::test_b - AssertionError: assert 1 == 2
ERROR tests/test_ops.py::test_c - fixture 'db' not found
SKIPPED [1] tests/test_ops.py:10: no network
XFAIL tests/test_ops.py::test_d - known
"""

DJANGO_LOG = """test_hello (greetings.tests.GreetTests) ... ok
test_farewell (greetings.tests.FarewellTests) ... FAIL
test_slow (greetings.tests.SlowTests) ... skipped 'slow'
test_noisy (greetings.tests.NoisyTests) ... System check identified no issues (0 silenced).
ok
======================================================================
ERROR: test_broken (greetings.tests.BrokenTests)
"""


def test_harness_commands_per_repository():
    files = ["tests/greetings/tests.py", "tests/greetings/fixtures/data.json"]
    assert directives("django/django", files) == ["greetings.tests"]
    cmd, parser = harness.test_command("django/django", "4.0", files)
    assert cmd == "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 greetings.tests"
    assert parser == "django"
    assert harness.test_command("django/django", "1.9", files)[0].startswith("./tests/runtests.py --verbosity 2 greetings")
    assert harness.test_command("sympy/sympy", "1.1", ["sympy/core/tests/test_basic.py"])[1] == "sympy"
    cmd, parser = harness.test_command("pallets/flask", "2.0", ["tests/test_app.py"])
    assert cmd == "pytest -rA tests/test_app.py" and parser == "pytest"
    assert harness.test_command("psf/requests", "2.0", ["tests/test_r.py"])[1] == "pytest_options"


def test_pytest_ra_summary_lines_give_node_ids():
    got = parse_log("pytest", PYTEST_LOG)
    assert got["tests/test_ops.py::test_a"] == "passed"
    assert got["tests/test_ops.py::test_p[1.5-a/b]"] == "passed"
    assert got["tests/test_ops.py::TestK::test_b"] == "failed"
    assert got["tests/test_ops.py::test_c"] == "error"
    assert got["tests/test_ops.py::test_d"] == "passed"  # XFAIL counts as passing, as the harness says


def test_django_runner_lines_give_description_ids():
    got = parse_log("django", DJANGO_LOG)
    assert got == {"test_hello (greetings.tests.GreetTests)": "passed",
                   "test_farewell (greetings.tests.FarewellTests)": "failed",
                   "test_slow (greetings.tests.SlowTests)": "skipped",
                   "test_noisy (greetings.tests.NoisyTests)": "passed",
                   "test_broken (greetings.tests.BrokenTests)": "error"}


def test_sympy_runner_lines():
    log = "test_basic ok\ntest_other F\n___ sympy/core/tests/test_x.py:test_third ___\n"
    assert parse_log("sympy", log) == {"test_basic": "passed", "test_other": "failed",
                                       "sympy/core/tests/test_x.py:test_third": "failed"}


@pytest.mark.podman
def test_a_django_shaped_task_is_verified_through_its_runtests_runner():
    bench = load_benchmark(FIXTURE)
    [res] = asyncio.run(verify_benchmark(bench, list(bench.tasks.values())))
    assert res.well_formed, res.problems
    assert res.flow == "official"
    assert res.null_statuses == {"test_farewell (greetings.tests.FarewellTests)": "failed",
                                 "test_hello (greetings.tests.GreetTests)": "passed"}
    assert set(res.reference_statuses.values()) == {"passed"}
    assert res.reproduced == 2  # model-a resolved, model-b not, exactly as the harness recorded
    by_model = {t.model: t for t in res.trials}
    assert by_model["model-b"].failing == ["test_farewell (greetings.tests.FarewellTests)"]
