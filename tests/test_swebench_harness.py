"""SWE-bench family T0: the harness's per-repository command and log parsers, and a
Django-shaped task (tests/fixtures/swebench-django) verified through its runtests.py-style runner."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui import swebench_harness as harness
from testjack_tui.swebench_harness import directives, parse_log
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
    # As the harness reads it: a FAIL:/ERROR: header keys its first word only, so a test whose
    # only trace is its header is missing under its description (graded as failing).
    assert got == {"test_hello (greetings.tests.GreetTests)": "passed",
                   "test_farewell (greetings.tests.FarewellTests)": "failed",
                   "test_slow (greetings.tests.SlowTests)": "skipped",
                   "test_noisy (greetings.tests.NoisyTests)": "passed",
                   "test_broken": "error"}


def test_django_lines_the_harness_reads_its_own_way():
    log = ("test_c (app.tests.T) ... some output\nok\n"
           "test_a (app.tests.T) ... expected failure\n"
           "test_b (app.tests.T) ... unexpected success\n"
           "Applying sites.0002_alter_domain_unique...test_no_migrations (app.tests.M) ... ok\n"
           "test_d (app.tests.T) ... Internal Server Error: /x/\nok\n"
           "FAIL: test_e (app.tests.T.test_e) (i=1)\n")
    got = parse_log("django", log)
    assert "test_a (app.tests.T)" not in got and "test_b (app.tests.T)" not in got  # not read: missing
    assert got["test_c (app.tests.T)"] == "passed"  # a line starting with "ok" closes the test
    assert got["test_no_migrations (app.tests.M)"] == "passed"  # django__django-7188
    assert got["test_d (app.tests.T)"] == "passed"
    assert got["test_e"] == "failed" and "test_e (app.tests.T.test_e)" not in got  # subtest-only failure


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
    # model-a and model-c (the planted defect) resolved, model-b not, as the harness recorded.
    assert res.reproduced == 3
    by_model = {t.model: t for t in res.trials}
    assert by_model["model-b"].failing == ["test_farewell (greetings.tests.FarewellTests)"]
    assert by_model["model-c"].failing == []


def test_parser_ids_of_exported_witnesses():
    from testjack_tui.swebench_harness import parser_id

    node = "tests/greetings/test_tj_bye.py::FarewellPunctuationTests::test_comma"
    assert parser_id("django", node) == "test_comma (greetings.test_tj_bye.FarewellPunctuationTests)"
    assert parser_id("pytest", "tests/test_x.py::test_y[1]") == "tests/test_x.py::test_y[1]"
    assert parser_id("sympy", "sympy/core/tests/test_b.py::test_z") == "test_z"


WITNESS = '''import unittest

from minidj.greetings import farewell


class FarewellPunctuationTests(unittest.TestCase):
    def test_comma_and_bang(self):
        self.assertEqual(farewell("Bo"), "Goodbye, Bo!")
'''


@pytest.mark.podman
def test_a_swebench_export_round_trips_through_the_harness_command_and_parser(tmp_path):
    import json

    from testjack_tui.sandbox import Sandbox
    from testjack_tui.engine.export import check_export, write_swebench
    from testjack_tui.engine.export_suite import TaskExport, WitnessFile

    bench = load_benchmark(FIXTURE)
    [task] = bench.tasks.values()
    wrong = next(t for t in bench.trials if t.model == "model-b")
    path = "tests/greetings/test_tj_bye.py"
    exp = TaskExport(task.id, files=[WitnessFile("w1", path, WITNESS,
                                                 [f"{path}::FarewellPunctuationTests::test_comma_and_bang"],
                                                 "farewell says Goodbye, NAME!", [wrong.id])],
                     refuted=[wrong.id])

    async def check():
        async with Sandbox(session="t-swebench-export") as sb:
            return await check_export(sb, task, exp, {t.id: t for t in bench.trials})
    result = asyncio.run(check())
    assert result.ok, result.problems
    new_id = "test_comma_and_bang (greetings.test_tj_bye.FarewellPunctuationTests)"
    assert exp.new_fail_to_pass == [new_id]  # in the Django parser's scheme, failing on R
    assert new_id in result.fails_on_refuted[wrong.id]
    [row_file, dataset] = write_swebench([exp], bench.tasks, tmp_path)
    row = json.loads(row_file.read_text())
    assert json.loads(row["FAIL_TO_PASS"]) == list(task.tests.fail_to_pass) + [new_id]
    assert "test_tj_bye.py" in row["test_patch"]


def test_each_repository_gets_the_harnesss_own_parser():
    parser = {repo: harness.test_command(repo, "1.0", ["t/test_x.py"])[1]
              for repo in ("astropy/astropy", "scikit-learn/scikit-learn", "sphinx-doc/sphinx",
                           "matplotlib/matplotlib", "mwaskom/seaborn", "psf/requests", "pallets/flask",
                           "some/other")}
    assert parser == {"astropy/astropy": "pytest_v2", "scikit-learn/scikit-learn": "pytest_v2",
                      "sphinx-doc/sphinx": "pytest_v2", "matplotlib/matplotlib": "matplotlib",
                      "mwaskom/seaborn": "seaborn", "psf/requests": "pytest_options",
                      "pallets/flask": "pytest", "some/other": "pytest"}


def test_pytest_family_parsers_read_lines_as_the_harness_does():
    # plain pytest: summary lines only; a verbose `id PASSED` line is not read
    assert parse_log("pytest", "t/test_x.py::test_a PASSED\n") == {}
    # the later parser strips colour codes and reads `id STATUS` lines of older pytest too
    v2 = parse_log("pytest_v2", "\x1b[32mPASSED\x1b[0m t/test_x.py::test_a\nt/test_x.py::test_b FAILED\n")
    assert v2 == {"t/test_x.py::test_a": "passed", "t/test_x.py::test_b": "failed"}
    assert parse_log("matplotlib", "PASSED t/test_x.py::test_click[MouseButton.LEFT]\n") == \
        {"t/test_x.py::test_click[1]": "passed"}
    assert parse_log("seaborn", "t/test_x.py::test_a PASSED [ 50%]\nFAILED t/test_x.py::test_b\n") == \
        {"t/test_x.py::test_a": "passed", "t/test_x.py::test_b": "failed"}
