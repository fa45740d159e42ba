"""Harbor loader: the fixture benchmark, the ways to name it, and every malformed-input case."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testjack_tui.benchmarks import bundled_benchmarks, load_benchmark
from testjack_tui.benchmarks.patches import patch_problem, touched_files
from testjack_tui.errors import InputError

from conftest import DEMO, ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "harbor"
JOB = "jobs/job-0001"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(FIXTURE)


@pytest.fixture
def copy(tmp_path) -> Path:
    """A writable copy of the fixture to break in one place."""
    dest = tmp_path / "harbor"
    shutil.copytree(FIXTURE, dest)
    return dest


def skipped_text(bench) -> str:
    return "\n".join(str(s) for s in bench.skipped)


# ------------------------------------------------------------------------------------ happy path

def test_fixture_tasks(bench):
    assert bench.name == "harbor-fixture" and bench.format == "harbor"
    assert bench.skipped == []
    assert sorted(bench.tasks) == ["parse-duration", "slugify-unicode"]
    assert bench.labels_path == FIXTURE / "labels.json"

    slug = bench.tasks["slugify-unicode"]
    assert slug.instruction.startswith("Make `slugify()`")
    assert slug.language == "python"
    assert slug.base_commit == "0123456789abcdef0123456789abcdef01234567"
    assert slug.tests.fail_to_pass == ("tests/test_slug.py::test_accents", "tests/test_slug.py::test_dashes")
    assert slug.tests.pass_to_pass == ("tests/test_basic.py::test_lower",)
    assert slug.tests.test_files == ("tests/test_slug.py", "tests/conftest.py")
    assert slug.tests.framework == "pytest"
    assert "git apply /tests/test.patch" in slug.tests.run_script
    assert slug.reference.patch.startswith("diff --git a/textkit/slug.py")
    assert slug.reference.solve_script is None
    # docker_image matches the manifest's [[images]] entry -> buildable locally
    env = slug.environment
    assert env.image == "localhost/testjack-fixture:1"
    assert env.containerfile == FIXTURE / "environment" / "Containerfile"
    assert env.context == FIXTURE / "environment"
    assert (env.workdir, env.memory_mb, env.cpus) == ("/app", 2048, 1.0)
    assert slug.metadata["collect"][0]["destination"] == "artifacts/model.patch"
    assert slug.metadata["grade"]["format"] == "ctrf"


def test_task_named_in_task_toml_and_own_dockerfile(bench):
    task = bench.tasks["parse-duration"]  # folder is task-parse-duration
    assert task.source == FIXTURE / "tasks" / "task-parse-duration"
    assert task.environment.image is None
    assert task.environment.containerfile == task.source / "environment" / "Dockerfile"
    assert task.environment.context == task.source / "environment"
    assert task.environment.memory_mb == 1024
    assert task.reference.patch and task.reference.solve_script.startswith("#!/bin/bash")
    assert task.tests.test_files == ("tests/test_duration.py",)


def test_fixture_trials(bench):
    by_id = {t.id: t for t in bench.trials}
    assert sorted(by_id) == ["parse-duration__c3", "parse-duration__d4",
                             "slugify-unicode__a1", "slugify-unicode__b2"]
    a1, b2 = by_id["slugify-unicode__a1"], by_id["slugify-unicode__b2"]
    c3, d4 = by_id["parse-duration__c3"], by_id["parse-duration__d4"]
    assert (a1.task_id, a1.agent, a1.model, a1.official_pass, a1.reward) == (
        "slugify-unicode", "mini-swe-agent", "gpt-x", True, 1.0)
    assert (b2.official_pass, b2.reward) == (False, 0.0)
    assert c3.task_id == "parse-duration" and c3.official_pass
    assert c3.trajectory == FIXTURE / JOB / "parse-duration__c3" / "agent" / "trajectory.json"
    # reward 1 but the run raised: not an official pass; the folder-name alias resolves the task
    assert d4.task_id == "parse-duration" and d4.reward == 1.0 and not d4.official_pass
    assert d4.exception == "AgentTimeoutError: agent ran out of time"
    assert d4.model == "claude-y" and d4.agent == "terminus-2"
    assert a1.patch.startswith("diff --git") and a1.source == FIXTURE / JOB / "slugify-unicode__a1"
    assert [t.id for t in bench.passing("slugify-unicode")] == ["slugify-unicode__a1"]
    assert bench.models_of("parse-duration") == ["claude-y", "gpt-x"]


def test_manifest_file_folder_and_tasks_folder(copy):
    via_file = load_benchmark(copy / "benchmark.toml")
    via_folder = load_benchmark(str(copy))
    assert sorted(t.id for t in via_file.trials) == sorted(t.id for t in via_folder.trials)
    bare = load_benchmark(copy / "tasks")
    assert bare.name == "tasks" and sorted(bare.tasks) == ["parse-duration", "slugify-unicode"]
    assert bare.trials == [] and bare.skipped == []
    # without [[images]] the image is only a name to pull
    assert bare.tasks["slugify-unicode"].environment.containerfile is None
    single = load_benchmark(copy / "tasks" / "slugify-unicode")
    assert list(single.tasks) == ["slugify-unicode"]
    # a folder with tasks/ and jobs/ but no manifest reads like the default manifest
    (copy / "benchmark.toml").unlink()
    implicit = load_benchmark(copy)
    assert len(implicit.trials) == 4


def test_single_job_folder_and_options(copy):
    (copy / "benchmark.toml").write_text(
        'name = "x"\nformat = "harbor"\njobs = "jobs/job-0001"\npass_threshold = 0.5\n'
        'patch_artifact = "artifacts/other.patch"\n')
    trial = copy / JOB / "slugify-unicode__b2"
    shutil.copy(trial / "artifacts" / "model.patch", trial / "artifacts" / "other.patch")
    result = json.loads((trial / "result.json").read_text())
    result["verifier_result"]["rewards"]["reward"] = 0.5
    (trial / "result.json").write_text(json.dumps(result))
    bench = load_benchmark(copy)
    assert [t.id for t in bench.trials] == ["slugify-unicode__b2"]
    assert bench.trials[0].official_pass  # 0.5 >= threshold 0.5
    assert len(bench.skipped) == 3 and all("artifacts/other.patch" in s.path for s in bench.skipped)


def test_bundled_benchmarks():
    found = bundled_benchmarks()
    assert all(p.name == "benchmark.toml" and p.parent.parent == ROOT / "benchmarks" for p in found)
    assert ((DEMO / "benchmark.toml") in found) == (DEMO / "benchmark.toml").is_file()


def test_touched_files_and_patch_checks():
    plain = "--- a/x.py\t2024-01-01\n+++ b/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n"
    assert touched_files(plain) == ("x.py",)
    renamed = "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n"
    assert touched_files(renamed) == ("old.py", "new.py")
    assert touched_files("") == ()
    assert patch_problem(b"") == "empty patch"
    assert "binary" in patch_problem(b"diff --git a/x b/x\n\x00\x01")
    assert "binary" in patch_problem(b"\xff\xfe--- a/x")
    assert patch_problem(b"hello\n").startswith("not a unified diff")
    assert patch_problem(plain.encode()) is None


# ------------------------------------------------------------------------------------ fatal input

@pytest.mark.parametrize(("content", "field", "words"), [
    ('name = "x"\nformat = \n', None, "invalid TOML"),
    ('format = "harbor"\n', "name", "missing"),
    ('name = "x"\nformat = "nope"\n', "format", "harbor, swebench"),
    ('name = "x"\nformat = "harbor"\njobs = ["missing-jobs"]\n', "jobs", "does not exist"),
    ('name = "x"\nformat = "harbor"\ntasks = "nowhere"\n', "tasks", "does not exist"),
    ('name = "x"\nformat = "harbor"\npass_threshold = "high"\n', "pass_threshold", "number"),
    ('name = "x"\nformat = "harbor"\n[[images]]\nname = "i"\ncontainerfile = "no/Containerfile"\ncontext = "."\n',
     "images[0].containerfile", "no such file"),
    ('name = "x"\nformat = "harbor"\n[[images]]\nname = "i"\ncontext = "."\n', "images[0].containerfile", "missing"),
])
def test_fatal_manifest_errors(copy, content, field, words):
    manifest = copy / "benchmark.toml"
    manifest.write_text(content)
    with pytest.raises(InputError) as info:
        load_benchmark(copy)
    err = info.value
    assert err.path == str(manifest) and err.field == field
    assert words in str(err) and "\n" not in str(err)


def test_missing_path_and_unrecognised_folder(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        load_benchmark(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no benchmark.toml here"):
        load_benchmark(tmp_path / "empty")


# ---------------------------------------------------------------------------------- skipped input

def break_task(copy: Path, fn) -> object:
    fn(copy / "tasks" / "slugify-unicode")
    bench = load_benchmark(copy)
    assert "slugify-unicode" not in bench.tasks and "parse-duration" in bench.tasks
    return bench


@pytest.mark.parametrize(("breaker", "path_end", "field", "words"), [
    (lambda t: (t / "task.toml").write_text("[task\n"), "task.toml", None, "invalid TOML"),
    (lambda t: (t / "instruction.md").unlink(), "instruction.md", None, "missing"),
    (lambda t: (t / "task.toml").write_text("[environment]\ncpus = 1\n"), "task.toml",
     "environment.docker_image", "no environment/Dockerfile"),
    (lambda t: (t / "task.toml").write_text('schema_version = "2.0"\n'), "task.toml", "schema_version", "2.0"),
    (lambda t: (t / "task.toml").write_text('[environment]\ndocker_image = "i"\ncpus = "two"\n'), "task.toml",
     "environment.cpus", "not a number: 'two' (must be more than 0"),
    (lambda t: (t / "tests" / "config.json").write_text("{not json"), "config.json", None, "invalid JSON"),
    (lambda t: (t / "tests" / "config.json").write_text('{"f2p_node_ids": 3}'), "config.json",
     "f2p_node_ids", "list of test ids"),
    (lambda t: (t / "tests" / "test.patch").write_bytes(b"\x00\x01\x02"), "test.patch", None, "binary"),
    (lambda t: (t / "solution" / "solution.patch").write_text("  \n"), "solution.patch", None, "empty patch"),
])
def test_broken_task_is_skipped_with_reason(copy, breaker, path_end, field, words):
    bench = break_task(copy, breaker)
    # its two trials now point at an unknown task and are reported too
    assert len(bench.skipped) == 3, skipped_text(bench)
    task_entry = bench.skipped[0]
    assert task_entry.path.endswith(path_end) and task_entry.field == field and words in task_entry.reason
    unknown = [s for s in bench.skipped if s.field == "task_name"]
    assert len(unknown) == 2 and all("unknown task 'slugify-unicode'" in s.reason for s in unknown)
    assert all("\n" not in str(s) for s in bench.skipped)


def test_folder_without_task_toml_and_duplicate_task_id(copy):
    (copy / "tasks" / "notes").mkdir()
    shutil.copytree(copy / "tasks" / "task-parse-duration", copy / "tasks" / "zz-copy")
    bench = load_benchmark(copy)
    assert sorted(bench.tasks) == ["parse-duration", "slugify-unicode"]
    text = skipped_text(bench)
    assert "notes: task.toml: folder has no task.toml" in text
    assert "zz-copy/task.toml: task.name: duplicate task id 'parse-duration'" in text


def break_trial(copy: Path, trial: str, fn) -> object:
    fn(copy / JOB / trial)
    bench = load_benchmark(copy)
    assert trial not in {t.id for t in bench.trials}
    assert len(bench.trials) == 3
    assert len(bench.skipped) == 1, skipped_text(bench)
    return bench.skipped[0]


def edit_result(**changes):
    def fn(trial: Path):
        data = json.loads((trial / "result.json").read_text())
        for key, value in changes.items():
            if value is ...:
                data.pop(key)
            else:
                data[key] = value
        (trial / "result.json").write_text(json.dumps(data))
    return fn


@pytest.mark.parametrize(("fn", "path_end", "field", "words"), [
    (lambda t: (t / "result.json").write_text("{oops"), "result.json", None, "invalid JSON"),
    (lambda t: (t / "result.json").write_text("[1, 2]"), "result.json", None, "JSON object"),
    (edit_result(task_name=...), "result.json", "task_name", "missing"),
    (edit_result(task_name="no-such-task"), "result.json", "task_name", "unknown task 'no-such-task'"),
    (edit_result(agent_info=None), "result.json", "agent_info", "missing"),
    (edit_result(agent_info={"model_info": {"name": "m"}}), "result.json", "agent_info.name", "missing"),
    (edit_result(verifier_result={"rewards": {"a": 1, "b": 0}}), "result.json",
     "verifier_result.rewards.reward", "not a number"),
    (edit_result(verifier_result=None), "result.json", "verifier_result", "no exception_info"),
    (lambda t: (t / "artifacts" / "model.patch").write_text(""), "model.patch", None, "empty patch"),
    (lambda t: (t / "artifacts" / "model.patch").write_bytes(b"diff --git a/x b/x\n\x00PNG"), "model.patch",
     None, "binary patch"),
    (lambda t: (t / "artifacts" / "model.patch").unlink(), "model.patch", None, "patch artifact missing"),
    (lambda t: (t / "result.json").unlink(), "slugify-unicode__a1", "result.json", "no result.json"),
])
def test_broken_trial_is_skipped_with_reason(copy, fn, path_end, field, words):
    entry = break_trial(copy, "slugify-unicode__a1", fn)
    assert entry.path.endswith(path_end), entry
    assert entry.field == field and words in entry.reason, entry


def test_duplicate_trial_id(copy):
    shutil.copytree(copy / JOB / "slugify-unicode__a1", copy / "jobs" / "job-0002" / "slugify-unicode__a1")
    bench = load_benchmark(copy)
    assert len(bench.trials) == 4
    (entry,) = bench.skipped
    assert entry.field == "trial_name" and "duplicate trial id 'slugify-unicode__a1'" in entry.reason
    assert "job-0002" in entry.path


def test_exception_without_verifier_result_is_a_failing_trial(copy):
    trial = copy / JOB / "slugify-unicode__a1"
    edit_result(verifier_result=None, exception_info={"exception_type": "DockerError",
                                                      "exception_message": "build failed"})(trial)
    bench = load_benchmark(copy)
    a1 = next(t for t in bench.trials if t.id == "slugify-unicode__a1")
    assert (a1.official_pass, a1.reward, a1.exception) == (False, None, "DockerError: build failed")


def test_oracle_trial_without_model_uses_agent_name(copy):
    edit_result(agent_info={"name": "oracle", "version": "1", "model_info": None})(copy / JOB / "slugify-unicode__a1")
    bench = load_benchmark(copy)
    a1 = next(t for t in bench.trials if t.id == "slugify-unicode__a1")
    assert a1.model == "oracle" and a1.agent == "oracle"


def test_a_harbor_task_whose_script_runs_djangos_runtests_gets_the_django_runner(copy):
    """Tasks converted from SWE-bench's Django instances name no framework; their test.sh runs the
    harness's `./tests/runtests.py`. Witnesses must then run through it too, not under pytest."""
    from testjack_tui.benchmarks.languages import framework_of_script
    from testjack_tui.sandbox.runners import runner_name

    task_dir = copy / "tasks" / "slugify-unicode"
    (task_dir / "tests" / "test.sh").write_text(
        "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n"
        ": '>>>>> Start Test Output'\n"
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 forms_tests.tests\n"
        ": '>>>>> End Test Output'\n")
    bench = load_benchmark(copy)
    task = bench.tasks["slugify-unicode"]
    assert runner_name(task.tests.framework) == "django"
    assert runner_name(load_benchmark(FIXTURE).tasks["slugify-unicode"].tests.framework) == "pytest"
    # Only Python tasks, only a real invocation; a script that merely mentions pytest stays pytest.
    assert framework_of_script("python3 tests/runtests.py auth_tests", "python") == "django"
    assert framework_of_script("./tests/runtests.py", "go") is None
    assert framework_of_script("pytest tests/test_runtests_py_parser.py", "python") == "pytest"
