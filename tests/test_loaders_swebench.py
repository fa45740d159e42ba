"""SWE-bench family loader: Verified and Pro rows, predictions, verdict sources, malformed input."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.errors import InputError

from conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "swebench"
CALC, FMT = "acme__calc-101", "instance_acme__fmt-7f3e"
REPORTS = "logs/run_evaluation/run1/org__model-a"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(FIXTURE / "benchmark.toml")


@pytest.fixture
def copy(tmp_path) -> Path:
    dest = tmp_path / "swe"
    shutil.copytree(FIXTURE, dest)
    return dest


def manifest(copy: Path, extra: str = "", **keys: str) -> None:
    base = {"name": '"x"', "format": '"swebench"', "dataset": '"dataset.jsonl"',
            "predictions": '["preds_model_a.jsonl", "preds_model_b.json"]',
            "reports": '"logs/run_evaluation"', "results": '["model-b.run1.json"]'}
    base.update(keys)
    lines = [f"{k} = {v}" for k, v in base.items() if v is not None]
    (copy / "benchmark.toml").write_text("\n".join(lines) + "\n" + extra)


def rows(copy: Path) -> list[dict]:
    return [json.loads(line) for line in (copy / "dataset.jsonl").read_text().splitlines()]


def write_rows(copy: Path, data: list) -> None:
    (copy / "dataset.jsonl").write_text("".join(
        (json.dumps(r) if not isinstance(r, str) else r) + "\n" for r in data))


def trial(bench, task: str, model: str):
    return next(t for t in bench.trials if t.task_id == task and t.model == model)


# ------------------------------------------------------------------------------------ happy path

def test_verified_row(bench):
    assert bench.name == "swebench-fixture" and bench.format == "swebench"
    assert bench.skipped == []
    task = bench.tasks[CALC]
    assert task.instruction.startswith("divide(1, 0) should raise")
    assert task.environment.image == "swebench/sweb.eval.x86_64.acme_1776_calc-101:latest"
    assert task.environment.workdir == "/testbed"
    assert task.tests.fail_to_pass == ("tests/test_ops.py::test_divide_by_zero",)
    assert task.tests.pass_to_pass == ("tests/test_ops.py::test_divide",)
    assert task.tests.test_files == ("tests/test_ops.py",)
    assert task.tests.framework == "pytest" and task.language == "python"
    assert task.reference.patch.startswith("diff --git a/calc/ops.py")
    assert task.base_commit == "a" * 40
    assert task.metadata["variant"] == "swebench" and task.metadata["version"] == "1.2"
    assert task.metadata["hints_text"] == "See ops.py"  # kept, but not part of P
    assert "See ops.py" not in task.instruction


def test_pro_row(bench):
    task = bench.tasks[FMT]
    assert task.metadata["variant"] == "pro"
    assert task.environment.workdir == "/app"
    assert task.environment.image == "jefzda/sweap-images:acme.fmt-acme__fmt-7f3e"
    # P = statement + requirements + interface, in that order
    text = task.instruction
    assert text.index("pad() ignores") < text.index("left-pad s with zeros") < text.index("No new interfaces")
    # Python-literal id lists
    assert task.tests.fail_to_pass == ("test/format.test.js | pads",)
    assert task.tests.pass_to_pass == ("test/format.test.js | keeps",)
    assert task.language == "javascript" and task.tests.test_files == ("test/format.test.js",)


def test_trials_and_verdicts(bench):
    assert len(bench.trials) == 4
    assert bench.models_of(CALC) == ["model-b", "org/model-a"]
    a_calc = trial(bench, CALC, "org/model-a")
    assert (a_calc.official_pass, a_calc.reward) == (True, 1.0)  # from report.json
    assert a_calc.id == f"{CALC}@org__model-a" and a_calc.agent == "org/model-a"
    assert a_calc.patch.startswith("diff --git")
    assert a_calc.source == FIXTURE / "preds_model_a.jsonl"
    assert (trial(bench, FMT, "org/model-a").official_pass, trial(bench, FMT, "org/model-a").reward) == (False, 0.0)
    assert trial(bench, CALC, "model-b").official_pass  # from resolved_ids
    assert (trial(bench, FMT, "model-b").official_pass, trial(bench, FMT, "model-b").reward) == (False, 0.0)


def test_no_verdict_source_means_unknown_reward(copy):
    manifest(copy, reports=None, results=None)
    bench = load_benchmark(copy)
    assert len(bench.trials) == 4
    assert all(t.reward is None and not t.official_pass for t in bench.trials)


def test_report_beats_results_list_and_text_results(copy):
    (copy / "resolved.txt").write_text(f"# resolved ids\n{FMT}\n")
    manifest(copy, results=None, extra='[[results]]\nfile = "resolved.txt"\nmodel = "org/model-a"\n')
    bench = load_benchmark(copy)
    # report.json says FMT unresolved for model-a: it wins over the list
    assert not trial(bench, FMT, "org/model-a").official_pass
    assert trial(bench, CALC, "org/model-a").official_pass
    # model-b has no verdict source now
    assert trial(bench, CALC, "model-b").reward is None
    assert bench.skipped == []


def test_json_dataset_and_dict_predictions_and_overrides(copy):
    (copy / "dataset.json").write_text(json.dumps(rows(copy)))
    preds = {CALC: {"model_name_or_path": "m", "model_patch": rows(copy)[0]["patch"]}}
    (copy / "p.json").write_text(json.dumps(preds))
    manifest(copy, dataset='"dataset.json"', predictions='"p.json"', reports=None, results=None,
             image_pattern='"registry.local/{repo}:{version}"', workdir='"/work"')
    bench = load_benchmark(copy)
    assert bench.tasks[CALC].environment.image == "registry.local/acme/calc:1.2"
    assert bench.tasks[CALC].environment.workdir == "/work"
    assert [t.id for t in bench.trials] == [f"{CALC}@m"]
    # FMT has no `version`: the pattern cannot be filled, reported by field
    (entry,) = bench.skipped
    assert entry.field == "image_pattern" and "version" in entry.reason and entry.path.endswith("dataset.json[1]")


def test_images_entries_apply_to_swebench_tasks(copy):
    (copy / "env").mkdir()
    (copy / "env" / "Containerfile").write_text("FROM scratch\n")
    manifest(copy, extra='[[images]]\nname = "swebench/sweb.eval.x86_64.acme_1776_calc-101:latest"\n'
                         'containerfile = "env/Containerfile"\ncontext = "env"\n')
    bench = load_benchmark(copy)
    assert bench.tasks[CALC].environment.containerfile == (copy / "env" / "Containerfile").resolve()
    assert bench.tasks[FMT].environment.containerfile is None


def test_results_model_from_only_model(copy):
    (copy / "summary.json").write_text(json.dumps([CALC]))
    manifest(copy, predictions='"preds_model_b.json"', reports=None, results='"summary.json"')
    bench = load_benchmark(copy)
    assert trial(bench, CALC, "model-b").official_pass and not trial(bench, FMT, "model-b").official_pass


# ------------------------------------------------------------------------------------ fatal input

@pytest.mark.parametrize(("keys", "field", "words"), [
    ({"dataset": None}, "dataset", "missing"),
    ({"dataset": '"absent.jsonl"'}, "dataset", "does not exist"),
    ({"predictions": '["preds_model_a.jsonl", "nope.json"]'}, "predictions", "does not exist"),
    ({"results": '[{file = "model-b.run1.json", model = 3}]'}, "results[0].model", "string"),
    ({"results": '[{model = "m"}]'}, "results[0].file", "missing"),
    ({"image_pattern": "5"}, "image_pattern", "non-empty string"),
])
def test_fatal_manifest_errors(copy, keys, field, words):
    manifest(copy, **keys)
    with pytest.raises(InputError) as info:
        load_benchmark(copy)
    assert info.value.path == str(copy / "benchmark.toml") and info.value.field == field
    assert words in str(info.value) and "\n" not in str(info.value)


def test_fatal_bad_json_files(copy):
    (copy / "preds_model_b.json").write_text("[{")
    manifest(copy)
    with pytest.raises(InputError, match=r"preds_model_b\.json: invalid JSON"):
        load_benchmark(copy)
    shutil.copy(FIXTURE / "preds_model_b.json", copy / "preds_model_b.json")
    (copy / "model-b.run1.json").write_text('{"resolved": 1}')
    with pytest.raises(InputError) as info:
        load_benchmark(copy)
    assert info.value.field == "resolved_ids" and info.value.path.endswith("model-b.run1.json")


def test_results_file_of_unknown_owner_is_fatal(copy):
    (copy / "summary.json").write_text(json.dumps([CALC]))
    manifest(copy, results='"summary.json"')
    with pytest.raises(InputError) as info:
        load_benchmark(copy)
    assert info.value.field == "results[0].model" and "name it" in str(info.value)


# ---------------------------------------------------------------------------------- skipped input

@pytest.mark.parametrize(("change", "field", "words"), [
    (lambda r: r.pop("test_patch"), "test_patch", "missing"),
    (lambda r: r.pop("FAIL_TO_PASS"), "FAIL_TO_PASS", "missing"),
    (lambda r: r.update(PASS_TO_PASS="not a list ["), "PASS_TO_PASS", "not a list of test ids"),
    (lambda r: r.update(FAIL_TO_PASS=json.dumps([1, 2])), "FAIL_TO_PASS", "not a list of test ids"),
    (lambda r: r.update(test_patch=""), "test_patch", "missing"),
    (lambda r: r.update(patch="\x00binary"), "patch", "binary"),
    (lambda r: r.update(instance_id=None), "instance_id", "missing"),
])
def test_broken_row_is_skipped(copy, change, field, words):
    data = rows(copy)
    change(data[0])
    write_rows(copy, data)
    manifest(copy, reports=None)
    bench = load_benchmark(copy)
    assert CALC not in bench.tasks and FMT in bench.tasks
    first = bench.skipped[0]
    assert first.path == f"{copy / 'dataset.jsonl'}:1" and first.field == field and words in first.reason
    # the two predictions for the lost task are reported as unknown-task, not dropped
    unknown = [s for s in bench.skipped if s.field == "instance_id" and "unknown task" in s.reason]
    assert len(unknown) == 2 and len(bench.trials) == 2


def test_bad_jsonl_line_and_duplicate_row(copy):
    data = rows(copy)
    write_rows(copy, [data[0], "{broken", data[1], data[0], "[1]"])
    manifest(copy)
    bench = load_benchmark(copy)
    assert sorted(bench.tasks) == [CALC, FMT] and len(bench.trials) == 4
    text = "\n".join(map(str, bench.skipped))
    path = copy / "dataset.jsonl"
    assert f"{path}:2: invalid JSON" in text
    assert f"{path}:4: instance_id: duplicate instance id '{CALC}' (first in {path}:1)" in text
    assert f"{path}:5: line is not a JSON object" in text


@pytest.mark.parametrize(("pred", "field", "words"), [
    ({"model_name_or_path": "m", "model_patch": "diff --git a/x b/x\n"}, "instance_id", "missing"),
    ({"instance_id": "nope__nope-1", "model_name_or_path": "m", "model_patch": "--- a/x\n"}, "instance_id",
     "unknown task 'nope__nope-1'"),
    ({"instance_id": CALC, "model_name_or_path": "m"}, "model_patch", "missing"),
    ({"instance_id": CALC, "model_name_or_path": "m", "model_patch": ""}, "model_patch", "empty patch"),
    ({"instance_id": CALC, "model_name_or_path": "m", "model_patch": None}, "model_patch", "empty patch"),
    ({"instance_id": CALC, "model_name_or_path": "m", "model_patch": "--- a/x\n\x00\x01"}, "model_patch", "binary"),
    ({"instance_id": CALC, "model_name_or_path": 7, "model_patch": "--- a/x\n"}, "model_name_or_path", "string"),
    ({"instance_id": CALC, "model_name_or_path": "org/model-a", "model_patch": "--- a/x\n"}, "instance_id",
     "duplicate prediction"),
])
def test_broken_prediction_is_skipped(copy, pred, field, words):
    with (copy / "preds_model_a.jsonl").open("a") as fh:
        fh.write(json.dumps(pred) + "\n")
    manifest(copy)
    bench = load_benchmark(copy)
    assert len(bench.trials) == 4
    (entry,) = bench.skipped
    assert entry.path == f"{copy / 'preds_model_a.jsonl'}:3"
    assert entry.field == field and words in entry.reason, entry


def test_model_name_defaults_to_file_stem(copy):
    (copy / "gpt-z.jsonl").write_text(json.dumps({"instance_id": CALC, "model_patch": "--- a/x\n+++ b/x\n"}) + "\n")
    manifest(copy, predictions='"gpt-z.jsonl"', reports=None, results=None)
    bench = load_benchmark(copy)
    assert [t.model for t in bench.trials] == ["gpt-z"]


def test_broken_reports_are_skipped(copy):
    report = copy / REPORTS / CALC / "report.json"
    report.write_text("{nope")
    other = copy / REPORTS / FMT / "report.json"
    other.write_text(json.dumps({FMT: {"patch_exists": True}}))
    stray = copy / "logs/run_evaluation/run1/org__model-a/ghost__ghost-1/report.json"
    stray.parent.mkdir()
    stray.write_text(json.dumps({"ghost__ghost-1": {"resolved": True}}))
    orphan = copy / "logs/run_evaluation/run1/model-c" / CALC / "report.json"
    orphan.parent.mkdir(parents=True)
    orphan.write_text(json.dumps({CALC: {"resolved": True}}))
    manifest(copy)
    bench = load_benchmark(copy)
    by_path = {s.path: s for s in bench.skipped}
    assert "unreadable report" in by_path[str(report)].reason
    assert by_path[str(other)].field == f"{FMT}.resolved"
    assert "unknown task 'ghost__ghost-1'" in by_path[str(stray)].reason
    assert "has no prediction" in by_path[str(orphan)].reason
    # model-a's verdicts are now unknown rather than guessed
    assert trial(bench, CALC, "org/model-a").reward is None


def test_results_listing_ids_without_predictions(copy):
    (copy / "model-b.run1.json").write_text(json.dumps({"resolved_ids": [CALC, "other__x-1"]}))
    manifest(copy)
    bench = load_benchmark(copy)
    (entry,) = bench.skipped
    assert entry.field == "resolved_ids" and "'other__x-1'" in entry.reason


def test_several_runs_of_one_model_load_as_separate_trials(copy):
    # The paper audits two runs per model and task: a second predictions file of org/model-a
    # (run2, with its own harness reports) is a second trial, not a duplicate.
    second = (copy / "preds_model_a.jsonl").read_text().replace('raise ZeroDivisionError(\\"no\\")',
                                                               'raise ZeroDivisionError(\\"zero\\")')
    (copy / "preds_model_a_run2.jsonl").write_text(second)
    report = copy / "logs" / "run_evaluation" / "run2" / "org__model-a" / CALC
    report.mkdir(parents=True)
    (report / "report.json").write_text(json.dumps({CALC: {"resolved": False}}))
    manifest(copy, predictions=None, extra=(
        '[[predictions]]\nfile = "preds_model_a.jsonl"\nrun = "run1"\n'
        '[[predictions]]\nfile = "preds_model_a_run2.jsonl"\nrun = "run2"\n'
        '[[predictions]]\nfile = "preds_model_b.json"\n'))
    bench = load_benchmark(copy)
    runs = sorted((t.id, t.model, t.official_pass) for t in bench.trials
                  if t.task_id == CALC and t.model == "org/model-a")
    assert runs == [(f"{CALC}@org__model-a@run1", "org/model-a", True),
                    (f"{CALC}@org__model-a@run2", "org/model-a", False)]
    assert "zero" in next(t for t in bench.trials if t.id.endswith("@run2") and t.task_id == CALC).patch
    # a model with one run keeps the plain id
    assert trial(bench, CALC, "model-b").id == f"{CALC}@model-b"
    assert not [s for s in bench.skipped if "duplicate" in s.message]
