"""Export a session's confirmed, non-ambiguous witnesses as a strengthened test suite per task.

Harbor: `<out>/<task>/tests/` (the task's tests folder with `test.patch` = T0 + the witness files
and `config.json` with the new ids added to `f2p_node_ids` / `p2p_node_ids`).
SWE-bench: `<out>/<task>.json` and `<out>/dataset.jsonl` rows with `test_patch`, `FAIL_TO_PASS`,
`PASS_TO_PASS` (JSON-encoded lists, as the harness expects).

`check_export` runs the strengthened suite in real worlds (through the task's own test.sh and
grader when it ships them, see engine/export_official.py): the witness files apply on top of T0,
the suite passes on the reference world and fails on every refuted trial; witnesses that fail on
the null world are fail-to-pass, the others pass-to-pass.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping

from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.engine import open_questions
from testjack_tui.engine.approval import awaiting_operator, decision_record
from testjack_tui.engine.oracle import tagged_path
from testjack_tui.engine.runner import witness_fails
from testjack_tui.engine.records_cands import CandidateRecord, DecidedBy, ValidationOutcome
from testjack_tui.engine.records_runs import StoredRun
from testjack_tui.engine.store import SessionStore, db_path
from testjack_tui.engine.records_standing import WitnessClassification
from testjack_tui.engine.records_verdict import Awaiting
from testjack_tui.errors import InputError
from testjack_tui.model import Task, Trial
from testjack_tui.safe_paths import check_inside, inside, path_part

from .export_official import (roundtrip_official, roundtrip_reported, roundtrip_swebench, supports, supports_reported,
                              supports_swebench)
from .export_suite import ExportCheck, TaskExport, WitnessFile, merged_test_patch, new_file_diff
from .records import JsonObject

EXPORT_FORMATS = ("harbor", "swebench")


def _node_ids(path: str, run: StoredRun | None, framework: str | None = None) -> list[str]:
    """The ids the benchmark's grader gives the tests of a witness file, from its reference run
    (pytest: `path::test`; go test: `<import path>.TestName`)."""
    if run is None:
        return [path]
    from testjack_tui.sandbox.runners import grader_ids
    nodes = grader_ids(framework, path, run.outcomes)
    return nodes or [path]  # the file itself only when no test inside it was reported


def _unique_path(path: str, taken: set[str], wid: str) -> str:
    if path not in taken:
        return path
    suffix = re.sub(r"\W+", "_", wid)
    candidate = tagged_path(path, suffix)
    if candidate in taken:  # derived from the id, never a counter: the same name in every export
        candidate = tagged_path(path, hashlib.sha1(wid.encode()).hexdigest()[:10])
    return candidate


def _candidates(path: Path) -> list[CandidateRecord]:
    store = SessionStore(path)
    try:
        return store.candidates()
    finally:
        store.close()


def write_extras(exp: TaskExport, dest: Path) -> None:
    """T1 and the underspecified requirements' witnesses, beside the suite and marked as such."""
    if exp.task_analysis:
        d = dest / "testjack_task_analysis"
        d.mkdir(parents=True, exist_ok=True)
        (d / "README.md").write_text(
            "Validated task-analysis tests (T1): written from the task prompt alone and passing on the "
            "reference solution. Not part of the strengthened suite: no trial was refuted by them.\n")
        for t in exp.task_analysis:
            check_inside(dest, d / path_part(Path(t["path"]).name)).write_text(t["source"])
    if exp.underspecified:
        d = dest / "testjack_underspecified"
        d.mkdir(parents=True, exist_ok=True)
        lines = ["# Underspecified requirements (not part of the strengthened suite)", "",
                 "These witnesses check an implicit requirement that most models' trials read "
                 "otherwise (rho > 1/2): the prompt, not the trials, should change.", ""]
        for w in exp.underspecified:
            if w.get("kind") == "open question":
                lines += [f"- `{Path(w['path']).name}` (open question, judged questionable): {w['requirement']}; "
                          f"{'; '.join(w.get('said') or [])}; differs on {', '.join(w.get('fails_on') or []) or '-'}. "
                          f"Suggested clarification: {w['clarification']}"]
            else:
                lines += [f"- `{Path(w['path']).name}`: {w['requirement']} (rho {w['rho']}). "
                          f"Suggested clarification: {w['clarification']}"]
            check_inside(dest, d / path_part(Path(w["path"]).name)).write_text(w["source"])
        (d / "README.md").write_text("\n".join(lines) + "\n")


def plan_export(session_id: str, tasks: Mapping[str, Task] | None = None) -> list[TaskExport]:
    """What to export, from the session's store: per task, its refuting witnesses."""
    path = db_path(session_id)
    if not path.exists():
        raise InputError(path, None, f"no session {session_id!r} (see `testjack-tui sessions`)")
    store = SessionStore(path)
    try:
        refutations = store.refutations()
        validations = store.validations()
        runs = store.runs_by_key(v.reference_run for v in validations if v.reference_run)
        witnesses = store.witnesses()
        approvals = {a.candidate_id: a for a in store.approvals()}
        questions = open_questions.stored(store)
        waiting = awaiting_operator(store)
        graded = {task_id: store.graded_runs(task_id) for task_id in {w.task_id for w in witnesses}}
    finally:
        store.close()
    canonical = {w.id: w.first_copy for w in witnesses}  # one copy per witness, as stored
    candidates = {c.id: c for c in _candidates(path)}
    extras: dict[str, dict[str, list[JsonObject]]] = {}
    for v in validations:
        c = candidates.get(v.candidate_id)
        if v.outcome == ValidationOutcome.PASSES_REFERENCE and c is not None:
            extras.setdefault(c.task_id, {"t1": [], "amb": []})["t1"].append(
                {"id": c.id, "path": c.path, "source": c.source, "requirement": c.requirement})
    seen_amb: set[str] = set()
    for w in witnesses:
        if w.classification == WitnessClassification.AMBIGUOUS and w.first_copy not in seen_amb:
            seen_amb.add(w.first_copy)
            extras.setdefault(w.task_id, {"t1": [], "amb": []})["amb"].append(
                {"id": w.id, "path": w.path, "source": w.source, "requirement": w.requirement,
                 "rho": w.rho, "clarification": w.note or ""})
    for q in questions:  # open questions with a test: beside the underspecified witnesses, marked
        if q.source and q.path:
            extras.setdefault(q.task_id, {"t1": [], "amb": []})["amb"].append(
                {"id": q.candidate_id, "path": q.path, "source": q.source, "requirement": q.requirement,
                 "rho": None, "clarification": q.clarification, "kind": "open question",
                 "said": list(q.said), "fails_on": list(q.fails_on)})
    refutes: dict[str, list[str]] = {}
    for r in refutations:  # a duplicate's refutations belong to its first copy
        refutes.setdefault(canonical.get(r.witness_id, r.witness_id), []).append(r.trial_id)
    ref_run = {v.candidate_id: runs.get(v.reference_run or "") for v in validations if v.reference_run}
    out: dict[str, TaskExport] = {}
    for w in witnesses:
        if w.classification == WitnessClassification.AMBIGUOUS or not refutes.get(w.id) or canonical[w.id] != w.id:
            continue
        task = (tasks or {}).get(w.task_id)
        exp = out.setdefault(w.task_id, TaskExport(w.task_id, graded=graded.get(w.task_id, {})))
        taken = {f.path for f in exp.files}
        if task is not None:
            taken |= set(task.tests.test_files)
        new_path = _unique_path(w.path, taken, w.id)
        framework = task.tests.framework if task is not None else None
        nodes = [n.replace(w.path, new_path, 1) for n in _node_ids(w.path, ref_run.get(w.id), framework)]
        exp.files.append(WitnessFile(w.id, new_path, w.source, nodes, w.requirement,
                                     sorted(set(refutes[w.id])), decision_record(approvals.get(w.id)).to_json()))
        exp.refuted = sorted(set(exp.refuted) | set(refutes[w.id]))
    for task_id, extra in extras.items():
        if task_id in out:  # beside a strengthened suite (a task without one has nothing to merge)
            out[task_id].task_analysis, out[task_id].underspecified = extra["t1"], extra["amb"]
    for exp in out.values():
        exp.decisions = [{"candidate_id": cid, "trial_id": a.trial_id or "",
                          "label": a.label, "counts": a.counts, **decision_record(a).to_json()}
                         for cid, a in approvals.items() if a.task_id == exp.task_id and a.by == DecidedBy.OPERATOR]
        exp.decisions += [{"candidate_id": w.candidate_id, "trial_id": w.trial_id, "case": w.case,
                           "label": w.label, "counts": False, "by": DecidedBy.QUEUED, "decision": Awaiting.QUESTIONABLE,
                           "reviewer_label": str(w.reviewer_label or ""), "note": w.why, "at": None}
                          for w in waiting if w.task_id == exp.task_id]
        task = (tasks or {}).get(exp.task_id)
        new_ids = [n for f in exp.files for n in f.node_ids]
        exp.new_fail_to_pass = list(new_ids)  # until check_export measures the null world
        exp.fail_to_pass = list(task.tests.fail_to_pass if task else ()) + exp.new_fail_to_pass
        exp.pass_to_pass = list(task.tests.pass_to_pass if task else ())
        exp.test_patch = merged_test_patch(task.tests.test_patch if task else "", exp.files)
    return [out[k] for k in sorted(out)]


async def check_export(sb: SandboxBackend, task: Task, exp: TaskExport, trials: dict[str, Trial]) -> ExportCheck:
    """Run the strengthened suite in real worlds and split new ids into f2p / p2p.

    A task with its own evaluator is judged by it instead (engine.export_official): the
    exported task's unmodified test.sh + grader must give G reward 1 and every refuted trial 0."""
    if supports(task):
        return await roundtrip_official(sb, task, exp, trials)
    if supports_reported(task):
        return await roundtrip_reported(sb, task, exp, trials)
    if supports_swebench(task):
        return await roundtrip_swebench(sb, task, exp, trials)
    files = {f.path: f.source for f in exp.files}
    new_ids = [n for f in exp.files for n in f.node_ids]
    suite = list(task.tests.ids) + new_ids
    result = ExportCheck()
    null = await sb.prepare(task, "null")
    # The evaluator applies T0 itself; our witness files must apply on top of it.
    patch = "".join(new_file_diff(f.path, f.source) for f in exp.files)
    applied = await sb.exec(null, ["sh", "-c", "cat > /tmp/tj-witnesses.patch && git apply --check /tmp/tj-witnesses.patch"],
                            timeout=60, stdin=patch)
    result.applies = applied.exit_code == 0
    if not result.applies:
        result.problems.append("witness files do not apply on top of T0: " + applied.output.strip()[-300:])
    null_run = await sb.run_tests(null, new_ids, files=files, timeout=600)
    result.null = {n: null_run.status(n) for n in new_ids}
    ref = await sb.prepare(task, "reference")
    ref_run = await sb.run_tests(ref, suite, files=files, timeout=600)
    bad = {n: ref_run.status(n) for n in suite if ref_run.status(n) != "passed"}
    result.passes_on_reference = not bad
    if bad:
        result.problems.append(f"fails on the reference world: {bad}")
    for trial_id in exp.refuted:
        trial = trials.get(trial_id)
        if trial is None:
            result.problems.append(f"refuted trial {trial_id} is not in the benchmark")
            continue
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, suite, files=files, timeout=600, isolate_harness=True)
        failing = sorted(n for n in suite if witness_fails(run.status(n)))
        result.fails_on_refuted[trial_id] = failing
        if not failing:
            result.problems.append(f"passes on refuted trial {trial_id}")
    exp.split_new_ids(task, result.null, witness_fails)
    result.ok = bool(result.applies and result.passes_on_reference
                        and all(result.fails_on_refuted.get(t) for t in exp.refuted))
    exp.check = result
    return result


def write_harbor(exp: TaskExport, task: Task, out_dir: Path) -> Path:
    """`<out>/<task>/tests/`: a copy of the task's tests folder with the strengthened patch and ids."""
    dest = inside(out_dir, exp.task_id, "tests")
    src = (Path(task.source) / "tests") if task is not None and task.source else None
    if dest.exists():
        shutil.rmtree(dest)
    if src is not None and src.is_dir():
        # Symlinks stay behind: copied, they would point (and our writes would go) anywhere.
        shutil.copytree(src, dest, ignore=lambda d, names: [n for n in names
                                                             if os.path.islink(os.path.join(d, n))])
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "test.patch").write_text(exp.test_patch)
    config_path = dest / "config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    if task is not None and task.base_commit and "base_commit" not in config:
        config["base_commit"] = task.base_commit
    config["f2p_node_ids"] = exp.fail_to_pass
    config["p2p_node_ids"] = exp.pass_to_pass
    config["testjack"] = {"added_f2p": exp.new_fail_to_pass, "added_p2p": exp.new_pass_to_pass,
                          "witnesses": [{"id": f.witness_id, "path": f.path, "requirement": f.requirement,
                                         "refutes": f.refutes, "decision": f.decision} for f in exp.files],
                          "decisions": exp.decisions,
                          "checked": exp.check is not None and exp.check.ok}
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    wdir = dest / "testjack_witnesses"
    wdir.mkdir(exist_ok=True)
    for f in exp.files:  # the raw files too, for reading without applying the patch
        check_inside(out_dir, wdir / path_part(Path(f.path).name)).write_text(f.source)
    if exp.check is not None:
        (dest / "testjack_check.json").write_text(json.dumps(exp.check.to_json(), indent=2, default=str) + "\n")
    write_extras(exp, dest.parent)  # beside tests/, not in it: not part of the suite
    return dest


def swebench_row(exp: TaskExport, task: Task | None) -> JsonObject:
    """The task's dataset row as the benchmark gave it, with only `test_patch` and the two id
    lists changed (under the keys and in the encoding the row used: a JSON string, a Python
    literal as SWE-bench Pro writes it, or a list), plus our `testjack_added` record. A drop-in
    replacement for the row: the harness reads `patch` for the gold run, `version` and
    `environment_setup_commit` for the image, and so on."""
    original = (task.metadata.get("row") if task is not None else None) or {}
    row: JsonObject = dict(original)
    if not original:  # a task that did not come from a SWE-bench row: the fields we know
        meta = dict(task.metadata) if task is not None else {}
        for key in ("repo", "base_commit", "version", "problem_statement"):
            if key in meta:
                row[key] = meta[key]
        row["instance_id"] = exp.task_id
        if task is not None and task.base_commit:
            row.setdefault("base_commit", task.base_commit)
    row["test_patch"] = exp.test_patch
    for upper, ids in (("FAIL_TO_PASS", exp.fail_to_pass), ("PASS_TO_PASS", exp.pass_to_pass)):
        key = upper.lower() if upper.lower() in original and upper not in original else upper
        row[key] = _id_list_like(original.get(key), ids)
    row["testjack_added"] = {"FAIL_TO_PASS": exp.new_fail_to_pass, "PASS_TO_PASS": exp.new_pass_to_pass,
                             "witnesses": [f.witness_id for f in exp.files],
                             "decisions": {f.witness_id: f.decision for f in exp.files},
                             "operator_decisions": exp.decisions,
                             "check": exp.check.to_json() if exp.check is not None else None}
    return row


def _id_list_like(original: Any, ids: list[str]) -> Any:
    """`ids` encoded as the row encoded its list: a list, a JSON string (the harness's), or a
    Python literal string (SWE-bench Pro's `"['a', 'b']"`)."""
    if isinstance(original, list):
        return list(ids)
    if isinstance(original, str):
        try:
            json.loads(original)
        except ValueError:
            return repr(list(ids))
    return json.dumps(ids)


def write_swebench(exports: list[TaskExport], tasks: Mapping[str, Task], out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    rows = []
    for exp in exports:
        write_extras(exp, out_dir / "testjack_extras" / path_part(exp.task_id))
        row = swebench_row(exp, tasks.get(exp.task_id))
        rows.append(row)
        p = check_inside(out_dir, out_dir / (path_part(exp.task_id) + ".json"))
        p.write_text(json.dumps(row, indent=2, default=str) + "\n")
        written.append(p)
    dataset = out_dir / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    written.append(dataset)
    return written
