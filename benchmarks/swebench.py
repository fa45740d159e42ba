"""SWE-bench family loader (SWE-bench, SWE-bench Verified, SWE-bench Pro).

Tasks come from dataset rows (JSON list or JSONL): `instance_id, repo, base_commit, patch,
test_patch, problem_statement, hints_text, version, FAIL_TO_PASS, PASS_TO_PASS` (the two id lists
JSON-encoded strings or plain lists). SWE-bench Pro rows use lower-case `fail_to_pass` /
`pass_to_pass` and add `requirements` and `interface`; their prompt P is statement + requirements
+ interface and their repo lives in /app (SWE-bench's in /testbed).

Trials come from prediction files (`instance_id, model_name_or_path, model_patch`; JSON or
JSONL; several files = several models, or several runs of one model). A model with predictions
for the same instance in several files has several runs: each is a separate trial
(`<instance>@<model>@<run>`, the run named by `[[predictions]] run = ...` or the file's stem),
as the paper audits two runs per model and task. The official verdict comes from harness
`report.json` files (`logs/run_evaluation/<run>/<model>/<instance>/report.json`,
`{instance: {resolved}}`) or from results files listing resolved ids (`<model>.<run>.json`). A trial with no verdict source loads with
`official_pass=False` and `reward=None` (unknown), never as a silent fail with reward 0.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any, Iterator

from testjack_tui.errors import InputError
from testjack_tui.model import (Benchmark, Environment, Evaluator, OfficialTests, Reference, Skipped, Task,
                                Trial)
from testjack_tui.safe_paths import contained, id_problem
from testjack_tui.swebench_harness import test_command

from .languages import default_framework, normalize_language
from .manifest import Manifest
from .patches import text_patch_problem, touched_files

SWEBENCH_IMAGE = "swebench/sweb.eval.x86_64.{instance_id_docker}:latest"
PRO_IMAGE = "jefzda/sweap-images:{dockerhub_tag}"
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")


def load_swebench(manifest: Manifest) -> Benchmark:
    bench = Benchmark(name=manifest.name, format="swebench", root=manifest.root, labels_path=manifest.labels)
    pattern = manifest.get_str("image_pattern")
    workdir = manifest.get_str("workdir")
    task_where: dict[str, str] = {}
    for path in manifest.get_paths("dataset", required=True):
        for where, row in _rows(path, bench):
            task = _task(row, where, path, pattern, workdir, manifest, bench)
            if task is None:
                continue
            if task.id in bench.tasks:
                bench.skipped.append(Skipped(where, "instance_id",
                                             f"duplicate instance id {task.id!r} (first in {task_where[task.id]})"))
                continue
            bench.tasks[task.id] = task
            task_where[task.id] = where
    preds: dict[tuple[str, str, str], Trial] = {}  # (model key, run, instance)
    wheres: dict[tuple[str, str, str], str] = {}
    for path, run in _prediction_entries(manifest):
        _load_predictions(path, run, bench, preds, wheres)
    verdicts = _Verdicts()
    for folder in manifest.get_paths("reports", []):
        _load_reports(folder, bench, verdicts)
    models = {m for m, _, _ in preds}
    for i, (path, named_model, named_run) in enumerate(_results_entries(manifest)):
        _load_results(path, named_model, named_run, i, manifest, bench, models, preds, verdicts)
    runs_of: dict[str, set[str]] = {}
    for m, run, _ in preds:
        runs_of.setdefault(m, set()).add(run)
    trials: dict[tuple[str, str, str], Trial] = {}
    for (mkey, run, instance), trial in preds.items():
        if len(runs_of[mkey]) > 1:
            trial.id = f"{instance}@{mkey}@{run}"  # one trial per run of the model
        resolved = verdicts.get(mkey, run, instance, single_run=len(runs_of[mkey]) == 1)
        if resolved is not None:
            trial.official_pass = resolved
            trial.reward = 1.0 if resolved else 0.0
        trials[(mkey, run, instance)] = trial
    known = {(m, i) for m, _, i in preds}
    for (mkey, _run, instance), where in verdicts.sources.items():
        if (mkey, instance) not in known:
            bench.skipped.append(Skipped(where, "resolved",
                                         f"verdict for {instance!r} of model {mkey!r} has no prediction"))
    bench.trials = list(trials.values())
    return bench


def model_key(model: str) -> str:
    """The folder name the harness uses for a model (`/` becomes `__`)."""
    return model.replace("/", "__")


# ---------------------------------------------------------------------------------------- reading

def _rows(path: Path, bench: Benchmark) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) for every object in a JSON list/object or a JSONL file.

    A JSONL line that is not an object is reported and skipped; a .json file that does not parse
    is fatal, because nothing in it can be trusted.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    if path.suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                bench.skipped.append(Skipped(where, None, f"invalid JSON: {exc}"))
                continue
            if not isinstance(row, dict):
                bench.skipped.append(Skipped(where, None, "line is not a JSON object"))
                continue
            yield where, row
        return
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(path, None, f"invalid JSON: {exc}") from None
    if isinstance(data, dict):
        # a single row, or {instance_id: row} as the harness accepts for predictions
        items = [data] if "instance_id" in data else [
            {"instance_id": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
    elif isinstance(data, list):
        items = data
    else:
        raise InputError(path, None, "must hold a JSON list of objects")
    for i, row in enumerate(items):
        where = f"{path}[{i}]"
        if not isinstance(row, dict):
            bench.skipped.append(Skipped(where, None, "entry is not a JSON object"))
            continue
        yield where, row


def _id_list(row: dict[str, Any], where: str, *keys: str) -> tuple[str, ...] | None:
    """A test id list under the first present key, as a list or a JSON/Python-literal string."""
    for key in keys:
        if key in row:
            value = row[key]
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except (ValueError, RecursionError):
                    try:  # SWE-bench Pro exports Python reprs: "['a', 'b']"
                        value = ast.literal_eval(value)
                    except (ValueError, SyntaxError, RecursionError, MemoryError):
                        raise InputError(where, key, "not a list of test ids") from None
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InputError(where, key, "not a list of test ids")
            return tuple(value)
    return None


def _task(row: dict[str, Any], where: str, path: Path, pattern: str | None, workdir: str | None,
          manifest: Manifest, bench: Benchmark) -> Task | None:
    try:
        for key in REQUIRED:
            if not isinstance(row.get(key), str) or (key != "patch" and not row[key]):
                raise InputError(where, key, "missing or not a string")
        iid = row["instance_id"]
        if problem := id_problem(iid):
            raise InputError(where, "instance_id", problem)
        f2p = _id_list(row, where, "FAIL_TO_PASS", "fail_to_pass")
        p2p = _id_list(row, where, "PASS_TO_PASS", "pass_to_pass")
        if f2p is None:
            raise InputError(where, "FAIL_TO_PASS", "missing (also no fail_to_pass)")
        if p2p is None:
            raise InputError(where, "PASS_TO_PASS", "missing (also no pass_to_pass)")
        if problem := text_patch_problem(row["test_patch"]):
            raise InputError(where, "test_patch", problem)
        if row["patch"] and (problem := text_patch_problem(row["patch"])):
            raise InputError(where, "patch", problem)
        is_pro = "fail_to_pass" in row or "requirements" in row or "interface" in row
        image = _image(row, pattern, is_pro, where)
    except InputError as exc:
        bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
        return None
    instruction = row["problem_statement"]
    if is_pro:
        parts = [instruction.rstrip()]
        if row.get("requirements"):
            parts.append("Requirements:\n" + str(row["requirements"]).strip())
        if row.get("interface"):
            parts.append("New interfaces introduced:\n" + str(row["interface"]).strip())
        instruction = "\n\n".join(parts) + "\n"
    src = manifest.images.get(image)
    environment = Environment(
        image=image, containerfile=src.containerfile if src else None, context=src.context if src else None,
        workdir=workdir or ("/app" if is_pro else "/testbed"),
    )
    language = normalize_language(row.get("repo_language") or row.get("language"))
    test_files = touched_files(row["test_patch"])
    evaluator = None
    framework = default_framework(language)
    if language == "python" and not is_pro:
        # The harness's own command and log parser; ids are in that parser's scheme.
        command, parser = test_command(row["repo"], str(row.get("version", "")), list(test_files))
        evaluator = Evaluator(kind="swebench", report_format="log", test_command=command, log_parser=parser)
        if parser == "django":  # witnesses run under the repo's tests/runtests.py, not pytest
            framework = "django"
    tests = OfficialTests(
        test_patch=row["test_patch"], fail_to_pass=f2p, pass_to_pass=p2p,
        framework=framework,
        test_files=test_files, evaluator=evaluator,
    )
    metadata: dict[str, Any] = {k: row[k] for k in ("repo", "version", "hints_text", "created_at", "requirements",
                                    "interface", "dockerhub_tag", "environment_setup_commit") if k in row}
    metadata["variant"] = "pro" if is_pro else "swebench"
    metadata["row"] = row  # the dataset row as read: an export keeps every field of it
    return Task(id=iid, instruction=instruction, environment=environment,
                reference=Reference(patch=row["patch"] or None), tests=tests, language=language,
                base_commit=row["base_commit"], source=path,
                metadata=metadata)


def _image(row: dict[str, Any], pattern: str | None, is_pro: bool, where: str) -> str:
    if pattern is None:
        pattern = PRO_IMAGE if is_pro and row.get("dockerhub_tag") else SWEBENCH_IMAGE
    fields = {k: v for k, v in row.items() if isinstance(v, (str, int, float))}
    fields["instance_id_docker"] = row["instance_id"].replace("__", "_1776_").lower()
    try:
        return pattern.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError(where, "image_pattern", f"cannot fill {pattern!r}: missing {exc}") from None


# ----------------------------------------------------------------------------------- predictions

def _prediction_entries(manifest: Manifest) -> list[tuple[Path, str]]:
    """`predictions = "f.jsonl"` / `["a", "b"]` / `[[predictions]] file=..., run=...`: (path, run)."""
    raw = manifest.data.get("predictions", [])
    items = [raw] if isinstance(raw, (str, dict)) else raw
    if not isinstance(items, list):
        raise InputError(manifest.path, "predictions", "must be a path, a list of paths or [[predictions]] tables")
    out = []
    for i, item in enumerate(items):
        file, run = (item, None) if isinstance(item, str) else \
            ((item.get("file"), item.get("run")) if isinstance(item, dict) else (None, None))
        if not isinstance(file, str) or not file:
            raise InputError(manifest.path, f"predictions[{i}].file", "missing or not a path")
        if run is not None and (not isinstance(run, str) or not run or "@" in run):
            raise InputError(manifest.path, f"predictions[{i}].run", "must be a name without '@'")
        path = manifest.resolve(file, "predictions" if isinstance(item, str) else f"predictions[{i}].file")
        if not path.exists():
            raise InputError(manifest.path, "predictions" if isinstance(item, str) else f"predictions[{i}].file",
                             f"{file!r} does not exist ({path})")
        out.append((path, run or path.name.split(".")[0]))
    return out


def _load_predictions(path: Path, run: str, bench: Benchmark, trials: dict[tuple[str, str, str], Trial],
                      wheres: dict[tuple[str, str, str], str]) -> None:
    for where, row in _rows(path, bench):
        try:
            iid = row.get("instance_id")
            if not isinstance(iid, str) or not iid:
                raise InputError(where, "instance_id", "missing or not a string")
            model = row.get("model_name_or_path") or path.name.split(".")[0]
            if not isinstance(model, str):
                raise InputError(where, "model_name_or_path", f"must be a string, got {model!r}")
            if iid not in bench.tasks:
                raise InputError(where, "instance_id", f"unknown task {iid!r}")
            if "model_patch" not in row:
                raise InputError(where, "model_patch", "missing")
            if problem := text_patch_problem(row["model_patch"]):
                raise InputError(where, "model_patch", problem)
            key = (model_key(model), run, iid)
            if key in trials:
                raise InputError(where, "instance_id",
                                 f"duplicate prediction for {iid!r} by {model!r} in run {run!r} "
                                 f"(first in {wheres[key]})")
        except InputError as exc:
            bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
            continue
        trials[key] = Trial(id=f"{iid}@{key[0]}", task_id=iid, agent=model, model=model,
                            patch=row["model_patch"], official_pass=False, reward=None, source=path)
        wheres[key] = where


# -------------------------------------------------------------------------------------- verdicts

class _Verdicts:
    """Resolved flags per (model key, run, instance); report.json beats a results list. A run
    that names no verdict of its own falls back to the model's only run's verdicts."""

    def __init__(self) -> None:
        self.reports: dict[tuple[str, str, str], bool] = {}
        self.resolved_lists: dict[tuple[str, str | None], set[str]] = {}
        self.sources: dict[tuple[str, str, str], str] = {}  # only report.json verdicts
        self._by_instance: dict[tuple[str, str], list[bool]] | None = None

    def _reports_of(self, model: str, instance: str) -> list[bool]:
        # Indexed once: a scan of every report per trial made loading quadratic.
        if self._by_instance is None:
            self._by_instance = {}
            for (m, _r, i), v in self.reports.items():
                self._by_instance.setdefault((m, i), []).append(v)
        return self._by_instance.get((model, instance), [])

    def get(self, model: str, run: str, instance: str, single_run: bool) -> bool | None:
        if (model, run, instance) in self.reports:
            return self.reports[(model, run, instance)]
        if (model, run) in self.resolved_lists:
            return instance in self.resolved_lists[(model, run)]
        if single_run:
            found = self._reports_of(model, instance)
            if len(found) == 1:
                return found[0]
            lists = [ids for (m, _r), ids in self.resolved_lists.items() if m == model]
            if len(lists) == 1:
                return instance in lists[0]
        elif (model, None) in self.resolved_lists:
            return instance in self.resolved_lists[(model, None)]
        return None


def _load_reports(folder: Path, bench: Benchmark, verdicts: _Verdicts) -> None:
    if not folder.is_dir():
        raise InputError(folder, None, "reports must be a folder (e.g. logs/run_evaluation)")
    for dirpath, _dirs, files in os.walk(folder):
        if "report.json" not in files:
            continue
        # plain strings, not Path: this loop runs once per trial of the whole benchmark
        path = os.path.join(dirpath, "report.json")
        run_dir, model_dir = os.path.split(os.path.dirname(dirpath))  # <run>/<model>/<instance>/
        model = model_key(model_dir)
        run = os.path.basename(run_dir)
        try:
            # os.walk does not enter linked folders, so only the file itself can be a link
            if os.path.islink(path):
                contained(bench.root, path)
            with open(path, "rb") as fh:
                data = json.loads(fh.read())
        except InputError as exc:
            bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
            continue
        except (OSError, ValueError, RecursionError) as exc:
            bench.skipped.append(Skipped(str(path), None, f"unreadable report: {exc}"))
            continue
        if not isinstance(data, dict):
            bench.skipped.append(Skipped(str(path), None, "report must be a JSON object"))
            continue
        for instance, entry in data.items():
            resolved = entry.get("resolved") if isinstance(entry, dict) else None
            if not isinstance(resolved, bool):
                bench.skipped.append(Skipped(str(path), f"{instance}.resolved", "missing or not true/false"))
                continue
            if instance not in bench.tasks:
                bench.skipped.append(Skipped(str(path), "instance_id", f"unknown task {instance!r}"))
                continue
            verdicts.reports[(model, run, instance)] = resolved
            verdicts.sources[(model, run, instance)] = str(path)


def _results_entries(manifest: Manifest) -> list[tuple[Path, str | None, str | None]]:
    """`results = "f.json"` / `["a", "b"]` / `[[results]] file=..., model=..., run=...`."""
    raw = manifest.data.get("results", [])
    items = [raw] if isinstance(raw, (str, dict)) else raw
    if not isinstance(items, list):
        raise InputError(manifest.path, "results", "must be a path, a list of paths or [[results]] tables")
    entries = []
    for i, item in enumerate(items):
        file: object
        model: str | None = None
        run: str | None = None
        if isinstance(item, str):
            file = item
        elif isinstance(item, dict):
            file, named_model, named_run = item.get("file"), item.get("model"), item.get("run")
            if named_model is not None and not isinstance(named_model, str):
                raise InputError(manifest.path, f"results[{i}].model", "must be a string")
            if named_run is not None and not isinstance(named_run, str):
                raise InputError(manifest.path, f"results[{i}].run", "must be a string")
            model, run = named_model, named_run
        else:
            file = None
        if not isinstance(file, str) or not file:
            raise InputError(manifest.path, f"results[{i}].file", "missing or not a path")
        path = manifest.resolve(file, f"results[{i}].file")
        if not path.is_file():
            raise InputError(manifest.path, f"results[{i}].file", f"no such file: {path}")
        entries.append((path, model, run))
    return entries


def _load_results(path: Path, model: str | None, run: str | None, index: int, manifest: Manifest,
                  bench: Benchmark, models: set[str], trials: dict[tuple[str, str, str], Trial],
                  verdicts: _Verdicts) -> None:
    """A results file: the harness summary (`resolved_ids`), a JSON list, or one id per line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise InputError(path, None, f"invalid JSON: {exc}") from None
        ids = data.get("resolved_ids") if isinstance(data, dict) else data
        if not isinstance(ids, list) or not all(isinstance(v, str) for v in ids):
            raise InputError(path, "resolved_ids", "missing or not a list of instance ids")
    else:
        ids = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if run is None and path.suffix == ".json" and path.name.count(".") >= 2:
        run = path.name.split(".")[1]  # the harness names it `<model>.<run_id>.json`
    if model is None:
        # the harness names its summary `<model>.<run_id>.json`; with one model there is no doubt
        guess = path.name.split(".")[0]
        if guess in models:
            model = guess
        elif len(models) == 1:
            model = next(iter(models))
        else:
            raise InputError(manifest.path, f"results[{index}].model",
                             f"cannot tell which model {path.name} belongs to; name it")
    key = model_key(model)
    if key not in models:
        bench.skipped.append(Skipped(str(path), "model", f"no predictions for model {model!r}"))
        return
    predicted = {i for m, _r, i in trials if m == key}
    for iid in ids:
        if iid not in predicted:
            bench.skipped.append(Skipped(str(path), "resolved_ids",
                                         f"{iid!r} resolved but model {model!r} has no prediction for it"))
    runs = {r for m, r, _ in trials if m == key}
    verdicts.resolved_lists.setdefault((key, run if run in runs else None), set()).update(ids)
