"""Export planning and writing (pure, from a real session database); the container check is
exercised end to end in tests/test_report_e2e.py."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from test_report import SID, session  # noqa: F401  (the shared session fixture)
from testjack_tui.cli import app
from testjack_tui.engine.detectors import parse_diff
from testjack_tui.engine.export import plan_export, write_harbor, write_swebench
from testjack_tui.engine.export_suite import TaskExport, merged_test_patch, new_file_diff
from testjack_tui.engine.export_official import harness_fails
from testjack_tui.engine.records_standing import WitnessClassification, WitnessRow
from testjack_tui.engine.runner import witness_fails
from testjack_tui.errors import InputError


def test_new_file_diff_parses_back():
    d = new_file_diff("tests/test_tj_x.py", "def test_a():\n    assert 1\n")
    [f] = parse_diff(d)
    assert f.status == "added" and [a.text for a in f.added] == ["def test_a():", "    assert 1"]
    assert new_file_diff("a.py", "x = 1") == new_file_diff("a.py", "x = 1\n")


def test_plan_exports_only_refuting_non_ambiguous_witnesses(session):
    [exp] = plan_export(SID, session.tasks)
    assert exp.task_id == "slug"
    assert [f.witness_id for f in exp.files] == ["w1"]  # w2 is ambiguous
    [f] = exp.files
    assert f.node_ids == ["tests/test_tj_accents.py::test_accents"]  # from its reference run
    assert f.refutes == ["t1", "t2"] and exp.refuted == ["t1", "t2"]
    assert exp.fail_to_pass == ["tests/test_slug.py::test_basic", "tests/test_tj_accents.py::test_accents"]
    files = {p.path: p for p in parse_diff(exp.test_patch)}
    assert set(files) == {"tests/test_slug.py", "tests/test_tj_accents.py"}
    assert exp.check is None


def test_colliding_witness_paths_are_renamed(session):
    from testjack_tui.engine.store import SessionStore, db_path

    store = SessionStore(db_path(SID))
    store.put_witness(WitnessRow(id="w3", task_id="slug", source_trial="t1", requirement="r",
                       explicit=True, quote="", path="tests/test_tj_accents.py", source="def test_b():\n    assert 0\n",
                       test_ids=(), round=3, classification=WitnessClassification.REFUTES))
    store.put_refutation("slug", "t1", "w3", "r", "failed", "passed", None, None)
    store.close()
    [exp] = plan_export(SID, session.tasks)
    assert [f.path for f in exp.files] == ["tests/test_tj_accents.py", "tests/test_tj_accents_w3.py"]
    assert len({p.path for p in parse_diff(exp.test_patch)}) == 3


def test_write_harbor_copies_tests_folder_and_updates_ids(session, tmp_path):
    task = session.tasks["slug"]
    src = tmp_path / "task-src" / "tests"
    src.mkdir(parents=True)
    (src / "test.sh").write_text("#!/bin/sh\npytest\n")
    (src / "config.json").write_text(json.dumps({"base_commit": "abc", "f2p_node_ids": ["old"],
                                                 "p2p_node_ids": [], "grade": {"format": "ctrf"}}))
    task.source = tmp_path / "task-src"
    [exp] = plan_export(SID, session.tasks)
    dest = write_harbor(exp, task, tmp_path / "out")
    assert dest == tmp_path / "out" / "slug" / "tests"
    assert (dest / "test.sh").read_text().startswith("#!/bin/sh")
    config = json.loads((dest / "config.json").read_text())
    assert config["grade"] == {"format": "ctrf"} and config["base_commit"] == "abc"
    assert config["f2p_node_ids"] == exp.fail_to_pass
    assert config["testjack"]["witnesses"][0]["id"] == "w1" and config["testjack"]["checked"] is False
    assert (dest / "test.patch").read_text() == exp.test_patch
    assert (dest / "testjack_witnesses" / "test_tj_accents.py").exists()
    assert (src / "config.json").read_text().count("old") == 1  # the benchmark is never written to


def test_write_swebench_rows(session, tmp_path):
    exports = plan_export(SID, session.tasks)
    written = write_swebench(exports, session.tasks, tmp_path / "sb")
    row = json.loads((tmp_path / "sb" / "slug.json").read_text())
    assert row["instance_id"] == "slug"
    assert json.loads(row["FAIL_TO_PASS"])[-1] == "tests/test_tj_accents.py::test_accents"
    assert json.loads(row["PASS_TO_PASS"]) == []
    assert row["test_patch"] == exports[0].test_patch
    lines = (tmp_path / "sb" / "dataset.jsonl").read_text().splitlines()
    assert len(lines) == 1 and written[-1].name == "dataset.jsonl"


def test_new_ids_split_into_fail_to_pass_and_pass_to_pass_after_t0s():
    """Ids failing without G are fail-to-pass. Our suite fails a witness the way the engine
    does; a benchmark's own harness counts only a pass, so a skipped id is fail-to-pass there."""
    from engine_fakes import make_task

    task = make_task("t1")
    null = {"tests/test_tj.py::test_new": "failed", "tests/test_tj.py::test_kept": "passed",
            "tests/test_tj.py::test_skipped": "skipped"}
    ours, harness = TaskExport("t1"), TaskExport("t1")
    ours.split_new_ids(task, null, witness_fails)
    harness.split_new_ids(task, null, harness_fails)
    assert ours.fail_to_pass == ["tests/test_t0.py::test_f2p", "tests/test_tj.py::test_new"]
    assert ours.pass_to_pass == ["tests/test_t0.py::test_p2p", "tests/test_tj.py::test_kept",
                                 "tests/test_tj.py::test_skipped"]
    assert harness.new_fail_to_pass == ["tests/test_tj.py::test_new", "tests/test_tj.py::test_skipped"]
    assert harness.new_pass_to_pass == ["tests/test_tj.py::test_kept"]


def test_merged_patch_keeps_t0_first():
    out = merged_test_patch("T0 patch", [])
    assert out == "T0 patch\n"


def test_unknown_session():
    with pytest.raises(InputError):
        plan_export("missing")


def test_cli_report_and_export_errors(session, tmp_path, monkeypatch):
    runner = CliRunner()
    # The fixture's config points at a folder without a manifest: report works from the store
    # (no detector evidence, no labels) and says what it wrote.
    res = runner.invoke(app, ["report", SID, "--format", "csv", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert "4 passing, 2 refuted; resolution 66.7% -> 33.3%" in res.output
    assert (tmp_path / "r" / "report.csv").exists()
    res = runner.invoke(app, ["report", SID, "--format", "pdf"])
    assert res.exit_code == 2 and "unknown format 'pdf'" in res.output
    res = runner.invoke(app, ["report", "no-such-session"])
    assert res.exit_code == 2 and "no session 'no-such-session'" in res.output
    res = runner.invoke(app, ["export", SID, "--format", "zip"])
    assert res.exit_code == 2 and "unknown format 'zip'" in res.output


def test_swebench_export_is_drop_in_and_loads_back(tmp_path):
    """Every field of each input row is kept as it was (Verified's JSON strings, Pro's lower-case
    keys and Python literals); only test_patch and the two id lists change; our own loader reads
    the export back with the same predictions and gets the strengthened T0."""
    import shutil

    from conftest import ROOT
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.engine.export_suite import WitnessFile

    fixture = ROOT / "tests" / "fixtures" / "swebench"
    bench = load_benchmark(fixture)
    originals = {json.loads(line)["instance_id"]: json.loads(line)
                 for line in (fixture / "dataset.jsonl").read_text().splitlines()}
    exports = []
    for task in bench.tasks.values():
        exp = TaskExport(task.id)
        exp.files = [WitnessFile("w1", "tests/test_tj_more.py", "def test_more():\n    assert 1\n",
                                 ["tests/test_tj_more.py::test_more"], "r", ["t"])]
        exp.new_fail_to_pass = ["tests/test_tj_more.py::test_more"]
        exp.fail_to_pass = list(task.tests.fail_to_pass) + exp.new_fail_to_pass
        exp.pass_to_pass = list(task.tests.pass_to_pass)
        exp.test_patch = merged_test_patch(task.tests.test_patch, exp.files)
        exports.append(exp)
    out = tmp_path / "export"
    write_swebench(exports, bench.tasks, out)
    rows = {r["instance_id"]: r for r in map(json.loads, (out / "dataset.jsonl").read_text().splitlines())}
    changed = {"test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "fail_to_pass", "pass_to_pass"}
    for iid, original in originals.items():
        row = rows[iid]
        assert set(row) == set(original) | {"testjack_added"}, iid
        assert {k: v for k, v in row.items() if k not in changed | {"testjack_added"}} == \
            {k: v for k, v in original.items() if k not in changed}
        assert type(row.get("FAIL_TO_PASS", row.get("fail_to_pass"))) is str
    assert json.loads(rows["acme__calc-101"]["FAIL_TO_PASS"])[-1] == "tests/test_tj_more.py::test_more"
    assert "FAIL_TO_PASS" not in rows["instance_acme__fmt-7f3e"]  # Pro keeps its own keys
    # Loaded back with the benchmark's own predictions and verdicts: nothing skipped.
    for name in ("preds_model_a.jsonl", "preds_model_b.json", "model-b.run1.json", "logs"):
        src = fixture / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, out / name)
    manifest = (fixture / "benchmark.toml").read_text()
    (out / "benchmark.toml").write_text(manifest)
    again = load_benchmark(out)
    assert again.skipped == [] and set(again.tasks) == set(bench.tasks)
    for task in again.tasks.values():
        assert task.tests.fail_to_pass[-1] == "tests/test_tj_more.py::test_more"
        assert task.reference.patch == bench.tasks[task.id].reference.patch
        assert task.instruction == bench.tasks[task.id].instruction
    assert sorted(t.id for t in again.trials) == sorted(t.id for t in bench.trials)


def test_export_with_nothing_to_export_exits_1_and_claims_no_check(tmp_path, monkeypatch):
    """A session with no refuting witness: exit 1, one line, no empty dataset.jsonl, and
    export.json never says "checked": true about nothing."""
    from engine_fakes import make_task
    from testjack_tui.engine.store import SessionStore, db_path

    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path / "home"))
    sid = "empty-session"
    db_path(sid).parent.mkdir(parents=True, exist_ok=True)
    store = SessionStore(db_path(sid))
    store.set_meta("config", {"benchmark": str(tmp_path / "bench")})
    store.close()
    from testjack_tui.model import Benchmark

    bench = Benchmark(name="b", format="swebench", root=tmp_path, tasks={"t1": make_task("t1")})
    monkeypatch.setattr("testjack_tui.benchmarks.load_benchmark", lambda ref: bench)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["export", sid, "--format", "swebench", "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert "nothing to export" in res.output and "Traceback" not in res.output
    assert not (out / "dataset.jsonl").exists()
    summary = json.loads((out / "export.json").read_text())
    assert summary["checked"] is False and summary["nothing_to_export"] is True and summary["tasks"] == {}


def test_export_check_writes_each_flows_keys_in_the_order_it_always_did():
    from testjack_tui.engine.export_suite import ExportCheck

    base = ["applies", "passes_on_reference", "fails_on_refuted", "null", "problems"]
    assert list(ExportCheck().to_json()) == base + ["ok"]
    grader = ExportCheck(flow="official", rewards={"reference": 1.0}, ids_from="grader")
    grader.note("refuted trial t keeps reward 1.0")
    assert list(grader.to_json()) == base + ["flow", "rewards", "ids_from", "notes", "ok"]
    assert grader.to_json()["rewards"] == {"reference": 1.0} and grader.notes == ["refuted trial t keeps reward 1.0"]
    assert list(ExportCheck(flow="official").to_json()) == base + ["flow", "ok"]
