"""Exports that round-trip through the benchmark's own grader.

SWE-bench rows with the harness's command and log parser (`roundtrip_swebench`): the witness
files join the test patch, the test command is recomputed for the new directives as the harness
computes it, and the exported row is judged in worlds built from it with the repository's parser;
the new ids go into FAIL_TO_PASS / PASS_TO_PASS in that parser's scheme.

Harbor tasks with an evaluator (`roundtrip_official`):

The task's `tests/test.sh` stays as it is, so the witnesses must run where it already runs
tests: they are appended to the T0 test file that holds T0's first fail-to-pass test (a file
the task's own flow runs; clashing top-level names renamed, engine/fold_witnesses.py), the test patch is re-made by git from base to T0 + witnesses, and
their ids go into `f2p_node_ids` / `p2p_node_ids` in the grader's scheme (`classname.name`).
Then the exported task is run through its unmodified flow: on R (which witnesses fail there:
fail-to-pass; the others pass-to-pass), on G (reward must be 1) and on every refuted trial
(reward must be 0). Anything else is reported as a problem and `ok` is False.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import tempfile
from pathlib import Path
from collections.abc import Iterable
from typing import Any

from testjack_tui.sandbox.test_ids import file_of, pytest_to_junit

from .export_suite import ExportCheck, TaskExport, merged_test_patch
from .fold_witnesses import fold_into, renamed_id
from .runner import official_inputs, t0_key
from testjack_tui.model import Evaluator, Task, Trial
from testjack_tui.sandbox.backend import SandboxBackend

PATCH_OUT = "/tmp/tj-export.patch"


def supports(task: Task) -> bool:
    ev = task.tests.evaluator
    return ev is not None and ev.report_format == "junit" and bool(task.tests.fail_to_pass)


def host_file(task: Task) -> str:
    return file_of(task.tests.fail_to_pass[0], list(task.tests.test_files))


def _evaluator(task: Task) -> Evaluator:
    """The task's own evaluator (the official export exists only for tasks that ship one)."""
    if task.tests.evaluator is None:
        raise ValueError(f"{task.id}: the task has no evaluator of its own to export to")
    return task.tests.evaluator


def exported_task(task: Task, tests_dir: Path, test_patch: str, f2p: list[str], p2p: list[str]) -> Task:
    """A copy of the task whose tests folder is `tests_dir` with the given patch and ids."""
    config_path = tests_dir / "config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config["f2p_node_ids"], config["p2p_node_ids"] = f2p, p2p
    config_path.write_text(json.dumps(config, indent=1) + "\n")
    (tests_dir / "test.patch").write_text(test_patch)
    ev = _evaluator(task)
    recipe = tests_dir / ev.verifier_containerfile.name if ev.verifier_containerfile else None
    tests = dataclasses.replace(task.tests, test_patch=test_patch, fail_to_pass=tuple(f2p),
                                pass_to_pass=tuple(p2p),
                                evaluator=dataclasses.replace(ev, tests_dir=tests_dir,
                                                              verifier_containerfile=recipe))
    return dataclasses.replace(task, tests=tests)


def harness_fails(status: str) -> bool:
    """A benchmark's own harness counts only a pass (a skipped or unverifiable id fails there),
    where our witness rule does not (engine/runner.witness_fails)."""
    return status != "passed"


async def roundtrip_official(sb: SandboxBackend, task: Task, exp: TaskExport, trials: dict[str, Trial]) -> ExportCheck:
    """Fold the witnesses into T0, then judge the exported task with its own flow."""
    rewards: dict[str, float | None] = {}
    result = ExportCheck(flow="official", rewards=rewards)
    host = host_file(task)
    null = await sb.prepare(task, "null")
    async with sb.open(null) as live:
        original = await live.read_file(host)
        folded = fold_into(original, [(f.witness_id, f.requirement, f.source) for f in exp.files])
        await live.write_file(host, folded.text)
        files = " ".join(f"'{p}'" for p in dict.fromkeys([*task.tests.test_files, host]))
        made = await live.exec(f"git add -A -- {files} && git diff --cached --binary HEAD -- {files} > {PATCH_OUT}",
                               timeout=60)
        result.applies = made.exit_code == 0
        if made.exit_code != 0:
            result.problems.append("could not fold the witnesses into T0: " + made.output.strip()[-300:])
            exp.check = result
            result.ok = False
            return result
        patch = await live.read_file(PATCH_OUT, max_bytes=64 * 1024 * 1024)
    for f in exp.files:
        renames = folded.renamed.get(f.witness_id, {})
        f.node_ids = [pytest_to_junit(renamed_id(host + n[len(f.path):], renames))
                      if n.startswith(f.path + "::") else pytest_to_junit(n) for n in f.node_ids]
        f.path = host
    new_ids = list(dict.fromkeys(n for f in exp.files for n in f.node_ids))
    work = Path(tempfile.mkdtemp(prefix="tj-export-"))
    try:
        tests_dir = work / "tests"
        source = _evaluator(task).tests_dir
        if source is None:
            raise ValueError(f"{task.id}: the task's evaluator names no tests folder")
        shutil.copytree(source, tests_dir)
        probe = exported_task(task, tests_dir, patch, list(task.tests.fail_to_pass) + new_ids,
                              list(task.tests.pass_to_pass))
        null_run = await sb.run_official(probe, "null")
        result.null = {n: null_run.status(n) for n in new_ids}
        exp.split_new_ids(task, result.null, harness_fails)
        exp.test_patch = patch
        final = exported_task(task, tests_dir, patch, exp.fail_to_pass, exp.pass_to_pass)
        refuted = [(t, trials.get(t)) for t in exp.refuted]
        for trial_id, trial in refuted:
            if trial is None:
                result.problems.append(f"refuted trial {trial_id} is not in the benchmark")
        present = [(t, tr) for t, tr in refuted if tr is not None]
        runs = await asyncio.gather(sb.run_official(final, "reference"),
                                    *(sb.run_official(final, "model", tr) for _, tr in present))
        ref_run, trial_runs = runs[0], runs[1:]
        rewards["reference"] = ref_run.reward
        bad = {n: ref_run.status(n) for n in final.tests.ids if harness_fails(ref_run.status(n))}
        result.passes_on_reference = ref_run.reward == 1.0 and not bad
        if not result.passes_on_reference:
            result.problems.append(f"the exported task's own grader gives G reward {ref_run.reward}: "
                                      + diagnose(ref_run, final.tests.ids))
        for (trial_id, trial), run in zip(present, trial_runs):
            rewards[trial_id] = run.reward
            result.fails_on_refuted[trial_id] = sorted(n for n in final.tests.ids if harness_fails(run.status(n)))
            await judge_refuted(sb, final, trial, run, result, "grader")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.ok = bool(result.applies and result.passes_on_reference and not result.problems)
    exp.check = result
    return result


def supports_reported(task: Task) -> bool:
    """A task whose own flow grades from a report naming every test it ran (ctrf): the witness
    files join T0 as files of their own, and their ids are what that report calls them."""
    ev = task.tests.evaluator
    return ev is not None and ev.report_format == "ctrf" and ev.tests_dir is not None


def grader_names(baseline: Iterable[str], probe: Iterable[str], files: list[tuple[str, str]]
                 ) -> dict[str, list[str]]:
    """The ids the task's own grader gave the witnesses' tests: those its report named on the
    reference world with the witnesses added (`probe`) and not without them (`baseline`), each
    given to the witness file whose source names most of it (a test's title, function or
    describe block is in its file: jest's `a b`, vitest's `f > a > b`, go's `pkg.TestX`, cargo's
    `crate::target: test`, junit's `classname.name`). {path: ids}, in the report's order."""
    seen = set(baseline)
    out: dict[str, list[str]] = {path: [] for path, _ in files}
    for test_id in probe:
        if test_id in seen or not files:
            continue
        words = [w for w in re.split(r"[\s.:>/]+", test_id) if w]

        def score(item: tuple[str, str]) -> int:
            path, source = item
            return sum(len(w) for w in words if w in source) + (len(path) if path in test_id else 0)
        out[max(files, key=score)[0]].append(test_id)
    return out


def harness_files(trial: Trial) -> list[str]:
    """The files of a trial's patch that can change how tests are collected or reported (one
    rule: repo_files.harness_kind)."""
    from testjack_tui.diffs import parse_diff
    from testjack_tui.repo_files import harness_kind

    return [f.path for f in parse_diff(trial.patch or "") if harness_kind(f)]


def harness_restored(trial: Trial, harness: list[str]) -> Trial:
    """The trial with the sections of `harness` left out of its patch: its code as the audit's
    witness runs judged it, under the task's own harness (sandbox isolate_harness)."""
    from testjack_tui.diffs import parse_diff

    kept = [f.text if f.text.endswith("\n") else f.text + "\n" for f in parse_diff(trial.patch or "")
            if f.path not in harness and (f.old_path or f.path) not in harness]
    return dataclasses.replace(trial, patch="".join(kept))


async def judge_refuted(sb: SandboxBackend, final: Task, trial: Trial, run: Any, result: ExportCheck,
                        judge: str) -> None:
    """The exported task must give a refuted trial reward 0. A trial whose patch changes how tests
    run (a conftest hook turning failures into passes) can keep reward 1 under the task's own
    flow: the audit refuted it with the harness restored. That is a fact about the trial, noted,
    only when the exported task, run again on the trial with its harness files left out, gives
    it 0; anything else is a problem of the suite, with what the grader's report says."""
    if run.reward == 0.0:
        return
    harness = harness_files(trial)
    restored = await sb.run_official(final, "model", harness_restored(trial, harness)) if harness else None
    if restored is not None and restored.reward == 0.0:
        result.note(f"refuted trial {trial.id} keeps reward {run.reward} under the task's own {judge}: its "
                    f"patch changes how tests run ({', '.join(harness)}); with those files restored the "
                    f"exported task gives it reward 0, as the audit's runs (harness restored) found")
        return
    problem = (f"the exported task's own {judge} gives refuted trial {trial.id} reward {run.reward}, not 0: "
               + diagnose(run, final.tests.ids))
    if restored is not None:
        problem += f"; with its harness files ({', '.join(harness)}) restored, reward {restored.reward}"
    result.problems.append(problem)


def diagnose(run: Any, ids: Iterable[str]) -> str:
    """Why the task's own grader did not give the expected reward, from its own output: ids its
    report does not name, tests it ran that failed, or (every id passed) a gate of test.sh."""
    missing = [i for i in ids if run.status(i) == "not_found"]
    failing = [i for i in ids if run.status(i) not in ("passed", "not_found")]
    if missing:
        return f"{len(missing)} id(s) missing from the grader's report, e.g. {missing[:3]}"
    if failing:
        return f"{len(failing)} test(s) failing in the grader's report: " + \
            ", ".join(f"{i} ({run.status(i)})" for i in failing[:3])
    decisive = [ln.strip() for ln in (run.output or "").splitlines()
                if re.search(r"error|fail|gate|not found|missing|exit", ln, re.I)][-2:]
    return (f"every id passed but the grader wrote reward {run.reward}: a gate of test.sh decided"
            + (": " + " / ".join(decisive) if decisive else ""))


async def reported_on_g(sb: SandboxBackend, task: Task, exp: TaskExport) -> tuple[str, ...] | None:
    """The ids the task's own grader reported on G for the unchanged task, from the session's
    stored run of it (T0 on the reference world), or None: then the check runs it. Taken only
    where it is the same run: the same reference snapshot (the run's key names it), the same
    tests folder, patch, evaluator settings and command (runner.official_inputs); and only a run
    that reported ids (one that reported none says nothing a fresh run would not say better)."""
    inputs = official_inputs(task, "reference") if exp.graded else ""
    if not inputs:
        return None
    try:
        world = await sb.prepare(task, "reference")
    except Exception:  # noqa: BLE001 - G does not build here: the check's own run says why
        return None
    stored = exp.graded.get(t0_key(task, world))
    return stored.ids if stored is not None and stored.inputs == inputs and stored.ids else None


async def roundtrip_reported(sb: SandboxBackend, task: Task, exp: TaskExport, trials: dict[str, Trial]
                             ) -> ExportCheck:
    """The witness files join T0's test patch; the task's unmodified test.sh runs on R[G] with
    them, and the ids its grader reports only with them, not in its run without them (the
    session's own run of T0 on G when it is the same run: `reported_on_g`), are the witnesses'
    ids (in the grader's own scheme, whatever our runner calls them). Then R decides fail-to-pass /
    pass-to-pass, and the exported task must give G reward 1 and every refuted trial 0."""
    rewards: dict[str, float | None] = {}
    result = ExportCheck(flow="official", rewards=rewards, ids_from="grader")
    work = Path(tempfile.mkdtemp(prefix="tj-export-"))
    try:
        tests_dir = work / "tests"
        shutil.copytree(_evaluator(task).tests_dir, tests_dir)  # type: ignore[arg-type]
        guessed = [n for f in exp.files for n in f.node_ids]  # our runner's ids: for a test.sh that selects by id
        probe = exported_task(task, tests_dir, exp.test_patch, list(task.tests.fail_to_pass) + guessed,
                              list(task.tests.pass_to_pass))
        probed_ids = (list(probe.tests.fail_to_pass), list(probe.tests.pass_to_pass))
        reported = await reported_on_g(sb, task, exp)
        try:
            if reported is None:
                baseline, with_witnesses = await asyncio.gather(sb.run_official(task, "reference"),
                                                                sb.run_official(probe, "reference"))
                reported = baseline.reported_ids
            else:
                with_witnesses = await sb.run_official(probe, "reference")
        except Exception as exc:  # the witness files do not apply on top of T0
            return _does_not_apply(exp, result, exc)
        result.applies = True
        names = grader_names(reported, with_witnesses.reported_ids, [(f.path, f.source) for f in exp.files])
        for f in exp.files:
            if names.get(f.path):
                f.node_ids = names[f.path]
            else:
                result.problems.append(f"the task's own test.sh ran no test of {f.path} on the reference "
                                          f"world (its grader reported none); ids kept as our runner names them")
        new_ids = list(dict.fromkeys(n for f in exp.files for n in f.node_ids))
        probe = exported_task(task, tests_dir, exp.test_patch, list(task.tests.fail_to_pass) + new_ids,
                              list(task.tests.pass_to_pass))
        null_run = await sb.run_official(probe, "null")
        result.null = {n: null_run.status(n) for n in new_ids}
        exp.split_new_ids(task, result.null, harness_fails)
        final = exported_task(task, tests_dir, exp.test_patch, exp.fail_to_pass, exp.pass_to_pass)
        refuted = [(t, trials.get(t)) for t in exp.refuted]
        for trial_id, trial in refuted:
            if trial is None:
                result.problems.append(f"refuted trial {trial_id} is not in the benchmark")
        present = [(t, tr) for t, tr in refuted if tr is not None]
        # The probe on G ran this very tests folder when the grader named the witnesses' tests as
        # our runner does and each fails without G (the same test.patch, the same ids in the
        # same lists): that run is the exported task's run on G, not run a second time.
        same = (exp.fail_to_pass, exp.pass_to_pass) == probed_ids
        runs = await asyncio.gather(*([] if same else [sb.run_official(final, "reference")]),
                                    *(sb.run_official(final, "model", tr) for _, tr in present))
        ref_run, trial_runs = (with_witnesses, runs) if same else (runs[0], runs[1:])
        rewards["reference"] = ref_run.reward
        result.passes_on_reference = ref_run.reward == 1.0
        if ref_run.reward != 1.0:
            result.problems.append(f"the exported task's own test.sh gives G reward {ref_run.reward}: "
                                      + diagnose(ref_run, final.tests.ids))
        for (trial_id, trial), run in zip(present, trial_runs):
            rewards[trial_id] = run.reward
            result.fails_on_refuted[trial_id] = sorted(n for n in final.tests.ids if harness_fails(run.status(n)))
            await judge_refuted(sb, final, trial, run, result, "test.sh")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.ok = bool(result.applies and result.passes_on_reference and not result.problems)
    exp.check = result
    return result


def supports_swebench(task: Task) -> bool:
    ev = task.tests.evaluator
    return ev is not None and ev.kind == "swebench"


async def roundtrip_swebench(sb: SandboxBackend, task: Task, exp: TaskExport, trials: dict[str, Trial]) -> ExportCheck:
    """Judge the exported row as the harness would: its own command and parser, in worlds with
    T0 + witnesses applied; G must pass every id, every refuted trial must fail one."""
    from testjack_tui.swebench_harness import parser_id, test_command
    from testjack_tui.sandbox.t0 import run_swebench

    ev = _evaluator(task)
    result = ExportCheck(flow="official")
    patch = merged_test_patch(task.tests.test_patch, exp.files)
    files = list(dict.fromkeys([*task.tests.test_files, *(f.path for f in exp.files)]))
    command, parser = test_command(str(task.metadata.get("repo", "")), str(task.metadata.get("version", "")),
                                   files)
    for f in exp.files:
        f.node_ids = [parser_id(parser, n) for n in f.node_ids]
    new_ids = list(dict.fromkeys(n for f in exp.files for n in f.node_ids))

    def exported(f2p: list[str], p2p: list[str]) -> Task:
        tests = dataclasses.replace(task.tests, test_patch=patch, test_files=tuple(files),
                                    fail_to_pass=tuple(f2p), pass_to_pass=tuple(p2p),
                                    evaluator=dataclasses.replace(ev, test_command=command, log_parser=parser))
        return dataclasses.replace(task, tests=tests)

    probe = exported(list(task.tests.fail_to_pass) + new_ids, list(task.tests.pass_to_pass))
    try:
        null = await sb.prepare(probe, "null")
    except Exception as exc:  # the witnesses do not apply on top of T0
        return _does_not_apply(exp, result, exc)
    result.applies = True
    null_run = await run_swebench(sb, probe, null)
    result.null = {n: null_run.status(n) for n in new_ids}
    exp.split_new_ids(task, result.null, harness_fails)
    exp.test_patch = patch
    final = exported(exp.fail_to_pass, exp.pass_to_pass)
    ref_run = await run_swebench(sb, final, await sb.prepare(final, "reference"))
    bad = {n: ref_run.status(n) for n in final.tests.ids if harness_fails(ref_run.status(n))}
    result.passes_on_reference = not bad
    if bad:
        result.problems.append(f"the harness's parser reads G as not passing: {dict(list(bad.items())[:5])}")
    for trial_id in exp.refuted:
        trial = trials.get(trial_id)
        if trial is None:
            result.problems.append(f"refuted trial {trial_id} is not in the benchmark")
            continue
        run = await run_swebench(sb, final, await sb.prepare(final, "model", trial))
        failing = sorted(n for n in final.tests.ids if harness_fails(run.status(n)))
        result.fails_on_refuted[trial_id] = failing
        if not failing:
            result.problems.append(f"the exported row passes on refuted trial {trial_id}")
    result.ok = bool(result.applies and result.passes_on_reference and not result.problems)
    exp.check = result
    return result


def _does_not_apply(exp: TaskExport, result: ExportCheck, exc: Exception) -> ExportCheck:
    """The check's result when the exported test patch does not apply on top of T0."""
    result.applies = False
    result.problems.append(f"the exported test patch does not apply: {exc}")
    result.ok = False
    exp.check = result
    return result
