"""The Django runner without containers: its launcher runs the Django-shaped fixture's own
tests/runtests.py on the host (our fixture code, not trial code), and the outcomes come back in
the SWE-bench harness's scheme."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.canaries import judge
from testjack_tui.sandbox.hidden_names import hide
from testjack_tui.sandbox.runners import get_runner, grader_ids, placement_hint, runner_name
from testjack_tui.sandbox.runners.django_runner import LAUNCHER, DjangoRunner, label_of

FIXTURE = Path(__file__).parent / "fixtures" / "swebench-django"
WITNESS = '''import unittest

from minidj.greetings import farewell


class FarewellTests(unittest.TestCase):
    def test_comma_and_bang(self):
        self.assertEqual(farewell("Bo"), "Goodbye, Bo!")

    def test_names_the_person(self):
        self.assertIn("Bo", farewell("Bo"))
'''


def result(code=1, timed_out=False):
    return ExecResult(argv=[], exit_code=None if timed_out else code, timed_out=timed_out,
                      stdout_head="", stdout_tail="", stderr_head="", stderr_tail="",
                      log_path=None, duration=1.0)


def launch(tmp_path: Path, ids: list[str], files: dict[str, str]):
    """Run the launcher on the host in a copy of the fixture's repo (R) holding `files`;
    returns (the launcher's output, the runner's outcomes)."""
    repo = tmp_path / "repo"
    if not repo.exists():
        shutil.copytree(FIXTURE / "environment" / "repo", repo)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    launcher = tmp_path / "django_launch.py"
    launcher.write_text(LAUNCHER)
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    runner = DjangoRunner()
    argv, env, extra = runner.command(ids, workdir=str(repo), out_dir=str(out))
    for path, text in extra.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    proc = subprocess.run([sys.executable, str(launcher), str(out / "spec.json")],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    reports = {p: (Path(p).read_bytes() if Path(p).exists() else None) for p in runner.report_paths(str(out))}
    return proc.stdout, runner.parse(ids, reports, result(proc.returncode))


def test_witness_file_class_and_method_ids_run_as_runtests_labels(tmp_path):
    path = "tests/greetings/test_tj_bye.py"
    t0 = "test_hello (greetings.tests.GreetTests)"
    ids = [path, f"{path}::FarewellTests::test_names_the_person", t0]
    log, got = launch(tmp_path, ids, {path: WITNESS})
    # The harness's command line: its settings, one process, labels from the paths.
    assert ("TJ_DJANGO tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 "
            "greetings.test_tj_bye greetings.tests.GreetTests.test_hello") in log
    assert got[path].status == "failed"  # R says "Bye Bo"
    assert "Bye Bo" in got[path].message
    assert got[f"{path}::FarewellTests::test_comma_and_bang"].status == "failed"
    assert got[f"{path}::FarewellTests::test_names_the_person"].status == "passed"
    assert got[t0].status == "passed"
    # Ids in the harness's scheme, as an export lists them in FAIL_TO_PASS.
    assert got["test_comma_and_bang (greetings.test_tj_bye.FarewellTests)"].status == "failed"
    assert grader_ids("django", path, got) == [
        "test_comma_and_bang (greetings.test_tj_bye.FarewellTests)",
        "test_names_the_person (greetings.test_tj_bye.FarewellTests)"]


def test_one_test_of_a_file_runs_alone(tmp_path):
    path = "tests/greetings/test_tj_bye.py"
    one = f"{path}::FarewellTests::test_names_the_person"
    log, got = launch(tmp_path, [one], {path: WITNESS})
    assert "greetings.test_tj_bye.FarewellTests.test_names_the_person" in log
    assert got[one].status == "passed"
    assert "test_comma_and_bang" not in log  # the other test of the file did not run
    assert not any("test_comma_and_bang" in k for k in got)


def test_a_witness_that_does_not_import_is_an_error_with_the_reason(tmp_path):
    path = "tests/greetings/test_tj_new_api.py"
    source = "import unittest\n\nfrom minidj.greetings import wave\n\n\nclass WaveTests(unittest.TestCase):\n" \
             "    def test_wave(self):\n        self.assertEqual(wave('Bo'), 'o/ Bo')\n"
    t0 = "test_hello (greetings.tests.GreetTests)"
    _, got = launch(tmp_path, [path, t0], {path: source})
    assert got[path].status == "error"
    assert "wave" in got[path].message
    assert got[t0].status == "passed"  # the other labels of the run still ran


def test_ids_that_name_nothing_say_why(tmp_path):
    _, got = launch(tmp_path, ["tests/greetings/test_tj_gone.py", "minidj/test_x.py", "a b c",
                               "test_nope (greetings.tests.GreetTests)"], {})
    assert got["tests/greetings/test_tj_gone.py"].status == "not_found"
    assert got["tests/greetings/test_tj_gone.py"].message == "no such test file"
    assert "under tests/" in got["minidj/test_x.py"].message
    assert "not a Django test id" in got["a b c"].message
    assert got["test_nope (greetings.tests.GreetTests)"].status in ("error", "not_found")


def test_renamed_witness_comes_back_under_its_own_names(tmp_path):
    path = "tests/greetings/test_tj_bye.py"
    hidden, run_files = hide({path: WITNESS})
    [run_path] = run_files
    assert run_path != path and run_path.startswith("tests/greetings/test_")
    # A unittest class is renamed like a canary's class (`Test<Words>`), whatever its own name.
    assert "FarewellTests" not in run_files[run_path] and "class Test" in run_files[run_path]
    _, got = launch(tmp_path, [hidden.run_id(path)], run_files)
    back = hidden.restore(got)
    assert back[path].status == "failed"
    assert back[f"{path}::FarewellTests::test_comma_and_bang"].status == "failed"
    assert back["test_comma_and_bang (greetings.test_tj_bye.FarewellTests)"].status == "failed"
    assert "test_tj_bye" in back[path].message or "Bye Bo" in back[path].message


def test_a_unittest_class_named_elsewhere_in_its_file_keeps_its_name():
    source = WITNESS + "\n\nclass MoreTests(FarewellTests):\n    pass\n"
    _, run_files = hide({"tests/greetings/test_tj_bye.py": source})
    [text] = run_files.values()
    assert "class FarewellTests(unittest.TestCase)" in text  # renaming it would break MoreTests


def test_unittest_canaries_come_out_as_they_must(tmp_path):
    path = "tests/greetings/test_tj_bye.py"
    runner = DjangoRunner()
    ids = [path, "test_hello (greetings.tests.GreetTests)"]
    canaries = runner.make_canaries(ids, [path])
    assert all(p.startswith("tests/greetings/") for p in canaries.files)
    # runtests.py's labels are readable by the tests: canaries are asked for whole, like the witness.
    assert canaries.ids == list(canaries.files)
    log, got = launch(tmp_path, ids + canaries.ids, {path: WITNESS, **canaries.files})
    check = judge(canaries, {i: got[i] for i in canaries.expected})
    assert check.verdict == "ok", check.problems
    assert sorted(check.observed.values()) == ["error", "failed", "passed"]
    # A run that picks single tests out of a witness picks them out of the canaries too.
    single = runner.make_canaries([f"{path}::FarewellTests::test_names_the_person"], [path])
    assert single.ids == list(single.expected) and all("::" in i for i in single.ids)
    # A run that requests a whole app gets its canaries elsewhere: they would count among its tests.
    assert not any(p.startswith("tests/greetings/") for p in runner.make_canaries(["greetings"]).files)


def parse_for_labels(ids: list[str], log: str) -> dict:
    """What a run of runtests.py on these ids (labels, harness descriptions) that printed `log`
    comes back as."""
    import json

    from testjack_tui.sandbox.runners.django_runner import LOG, PLAN

    plan = {i: {"label": label_of(i)[0], "file": None, "missing": ""} for i in ids}
    return DjangoRunner().parse(ids, {f"/o/{LOG}": log.encode(),
                                      f"/o/{PLAN}": json.dumps({"plan": plan}).encode()}, result())


def test_harness_descriptions_of_both_python_versions_and_docstrings():
    log = ("test_a (app.tests.T.test_a) ... ok\n"
           "test_b (app.tests.T)\nChecks b. ... FAIL\n"
           "======================================================================\n"
           "FAIL: test_b (app.tests.T)\nChecks b.\n"
           "----------------------------------------------------------------------\n"
           "AssertionError: 1 != 2\n")
    got = parse_for_labels(["test_a (app.tests.T)", "test_b (app.tests.T.test_b)", "app.tests.T"], log)
    assert got["test_a (app.tests.T)"].status == "passed"
    assert got["test_b (app.tests.T.test_b)"].status == "failed"
    assert "1 != 2" in got["test_b (app.tests.T.test_b)"].message
    assert got["app.tests.T"].status == "failed"


SUBTESTS = '''import unittest

from minidj.greetings import farewell


class FarewellNamesTests(unittest.TestCase):
    def test_each_name(self):
        for name in ("Bo", "Ada"):
            with self.subTest(name=name):
                self.assertEqual(farewell(name), f"Goodbye, {name}!")

    def test_hello_untouched(self):
        self.assertTrue(farewell("Bo"))
'''


def test_a_witness_failing_only_in_subtests_is_failed_not_missing(tmp_path):
    """Django's runner gives a test whose subtests fail no status line of its own (Python 3.11+
    prints one line per failing subtest): the test must still come back failed, with the reason."""
    path = "tests/greetings/test_tj_names.py"
    one = f"{path}::FarewellNamesTests::test_each_name"
    log, got = launch(tmp_path, [path], {path: SUBTESTS})
    assert "(name='Ada') ... FAIL" in log
    assert got[path].status == "failed"
    assert got[one].status == "failed" and "Bye Bo" in got[one].message
    assert got["test_each_name (greetings.test_tj_names.FarewellNamesTests)"].status == "failed"
    assert got[f"{path}::FarewellNamesTests::test_hello_untouched"].status == "passed"
    assert not any("name=" in k for k in got)  # subtests are not tests of their own
    # Picked out alone, the test is found too (not "no such test ran").
    _, alone = launch(tmp_path, [one], {path: SUBTESTS})
    assert alone[one].status == "failed"


def test_a_witness_in_a_new_app_folder_runs_with_its_canaries_beside_it(tmp_path):
    """Real Django's runtests.py runs a label under a new folder of tests/ (no __init__.py: a
    namespace module, not an installed app); so does the fixture's, and the canaries go there too."""
    path = "tests/tj_farewell/test_tj_bye.py"
    runner = DjangoRunner()
    canaries = runner.make_canaries([path], [path])
    assert all(p.startswith("tests/tj_farewell/") for p in canaries.files)
    log, got = launch(tmp_path, [path, *canaries.ids], {path: WITNESS, **canaries.files})
    assert "tj_farewell.test_tj_bye" in log
    assert got[path].status == "failed" and "Bye Bo" in got[path].message
    assert got["test_names_the_person (tj_farewell.test_tj_bye.FarewellTests)"].status == "passed"
    assert judge(canaries, {i: got[i] for i in canaries.expected}).verdict == "ok"


def test_real_django_subtest_lines_fold_into_their_test():
    """Lines as Django 4.2.16's runtests.py printed them on Python 3.11 (the SWE-bench harness's
    command), a test with two failing subtests between two passing tests."""
    d = "test_slugify (utils_tests.test_text.TestUtilsText.test_slugify)"
    log = ("test_phone2numeric (utils_tests.test_text.TestUtilsText.test_phone2numeric) ... ok\n"
           f"{d} ... \n"
           f"  {d} (value='__strip__underscore-value___') ... FAIL\n"
           f"  {d} (value='--strip-dash-value---') ... FAIL\n"
           "test_smart_split (utils_tests.test_text.TestUtilsText.test_smart_split) ... ok\n\n"
           "======================================================================\n"
           f"FAIL: {d} (value='__strip__underscore-value___')\n"
           "----------------------------------------------------------------------\n"
           "AssertionError: '__strip__underscore-value___' != 'strip__underscore-value'\n")
    label = "utils_tests.test_text.TestUtilsText"
    got = parse_for_labels([label], log)
    assert got[label].status == "failed"
    assert "strip__underscore-value" in got[label].message


def test_django_tasks_get_the_django_runner():
    bench = load_benchmark(FIXTURE)
    [task] = bench.tasks.values()
    assert task.tests.framework == "django"
    assert runner_name("runtests.py") == "django"
    assert isinstance(get_runner(task.tests.framework), DjangoRunner)
    hint = placement_hint("python", "django")
    assert "tests/<app>/test_tj_<topic>.py" in hint and "test_m (<app>.<module>.Class)" in hint
    assert "existing app folder" in hint and "models.py" in hint


def test_django_runner_and_settings_are_harness_files():
    from testjack_tui.diffs import parse_diff
    from testjack_tui.repo_files import DJANGO_RUNNER, harness_files

    diff = ("diff --git a/tests/test_sqlite.py b/tests/test_sqlite.py\n--- a/tests/test_sqlite.py\n"
            "+++ b/tests/test_sqlite.py\n@@ -1 +1,2 @@\n DATABASES = {}\n+TEST_RUNNER = 'forge.Runner'\n")
    assert harness_files(parse_diff(diff)) == {"tests/test_sqlite.py": DJANGO_RUNNER}


def test_a_test_known_only_by_its_subtest_headers_is_failed():
    """Before Python 3.11 Django prints no line for a test whose subtests fail, only `FAIL:`
    headers naming the test and the subtest; the harness keys those by their first word. A
    witness run must still see the test fail, with the reason."""
    d = "test_slugify (utils_tests.test_text.TestUtilsText)"
    log = ("test_phone2numeric (utils_tests.test_text.TestUtilsText) ... ok\n"
           f"{d} ... test_smart_split (utils_tests.test_text.TestUtilsText) ... ok\n\n"
           "======================================================================\n"
           f"FAIL: {d} (value='--strip-dash-value---')\n"
           "----------------------------------------------------------------------\n"
           "AssertionError: '--strip-dash-value---' != 'strip-dash-value'\n")
    label = "utils_tests.test_text.TestUtilsText.test_slugify"
    got = parse_for_labels([label], log)
    assert got[label].status == "failed" and "strip-dash-value" in got[label].message
