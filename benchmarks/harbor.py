"""Harbor loader (the layout DeepSWE, SkillsBench and SWE-Marathon use).

Tasks: `<tasks>/<task>/` with `task.toml` (schema 1.x), `instruction.md`, `environment/Dockerfile`
(or `Containerfile`, or `[environment].docker_image`), `solution/solution.patch` and/or
`solution/solve.sh`, `tests/test.sh`, and DeepSWE's `tests/test.patch` + `tests/config.json`
(`base_commit`, `f2p_node_ids`, `p2p_node_ids`, `grade`). The task id is the folder name unless
`[task].name` (or `[task].id`) names it.

Trials: `<jobs>/<job>/<trial>/result.json` (`task_name`, `trial_name`, `agent_info.name`,
`agent_info.model_info.name`, `verifier_result.rewards.reward`, `exception_info`) with the patch
at `<trial>/artifacts/model.patch` (manifest key `patch_artifact`) and the ATIF trajectory at
`<trial>/agent/trajectory.json` when present.

Official pass: reward >= `pass_threshold` (default 1.0) and no `exception_info`. For the usual
binary 0/1 rewards this is the same as reward > 0; partial-credit rewards need full credit unless
the manifest lowers the threshold.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, overload

from testjack_tui.errors import InputError
from testjack_tui.model import (Benchmark, Environment, Evaluator, OfficialTests, Reference, ReferenceProgram,
                                Skipped, Task, Trial)
from testjack_tui.numbers import number
from testjack_tui.safe_paths import contained, id_problem

from .languages import default_framework, framework_of_script, framework_of_tool, normalize_language, same_tool
from .manifest import ImageSource, Manifest, read_toml
from .patches import patch_problem, touched_files

DEFAULT_PATCH_ARTIFACT = "artifacts/model.patch"
DEFAULT_WORKDIR = "/app"  # where Harbor tasks keep the repo
TRAJECTORY = "agent/trajectory.json"


def load_harbor(manifest: Manifest) -> Benchmark:
    tasks_dir = manifest.get_paths("tasks", ["tasks"])[0]
    if not tasks_dir.is_dir():
        raise InputError(manifest.path, "tasks", f"not a folder: {tasks_dir}")
    jobs = manifest.get_paths("jobs", [])
    artifact = manifest.get_str("patch_artifact", DEFAULT_PATCH_ARTIFACT)
    threshold = manifest.get_number("pass_threshold", 1.0, "threshold")
    bench = Benchmark(name=manifest.name, format="harbor", root=manifest.root, labels_path=manifest.labels)
    aliases = load_tasks(tasks_dir, bench, manifest.images)
    for job_root in jobs:
        if not job_root.is_dir():
            raise InputError(manifest.path, "jobs", f"not a folder: {job_root}")
        load_trials(job_root, bench, aliases, artifact, threshold)
    return bench


def load_tasks_folder(folder: Path) -> Benchmark:
    """A bare Harbor tasks folder (or one task folder) given on the command line: tasks, no trials.

    A folder holding `tasks/` (and optionally `jobs/`) without a manifest is read the same way a
    manifest with the default keys would read it.
    """
    folder = folder.resolve()
    bench = Benchmark(name=folder.name, format="harbor", root=folder)
    if (folder / "task.toml").is_file():
        load_one_task(folder, bench, {}, {})
        return bench
    tasks_dir = folder / "tasks" if (folder / "tasks").is_dir() else folder
    aliases = load_tasks(tasks_dir, bench, {})
    if tasks_dir != folder and (folder / "jobs").is_dir():
        load_trials(folder / "jobs", bench, aliases, DEFAULT_PATCH_ARTIFACT, 1.0)
    return bench


def is_tasks_folder(folder: Path) -> bool:
    if (folder / "task.toml").is_file() or (folder / "tasks").is_dir():
        return True
    with os.scandir(folder) as entries:
        return any(e.is_dir() and os.path.isfile(os.path.join(e.path, "task.toml")) for e in entries)


# ----------------------------------------------------------------------------------------- tasks

def load_tasks(tasks_dir: Path, bench: Benchmark, images: dict[str, ImageSource]) -> dict[str, str]:
    """Load every task folder; returns alias (folder name) -> task id for resolving trials."""
    aliases: dict[str, str] = {}
    with os.scandir(tasks_dir) as it:
        entries = sorted((e for e in it if e.is_dir() and not e.name.startswith(".")), key=lambda e: e.name)
    for entry in entries:
        folder = Path(entry.path)
        try:
            contained(bench.root, folder)
        except InputError as exc:
            bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
            continue
        if not (folder / "task.toml").is_file():
            bench.skipped.append(Skipped(str(folder), "task.toml", "folder has no task.toml; not a task"))
            continue
        load_one_task(folder, bench, images, aliases)
    return aliases


def load_one_task(folder: Path, bench: Benchmark, images: dict[str, ImageSource],
                  aliases: dict[str, str]) -> None:
    toml_path = folder / "task.toml"
    try:
        task = _read_task(folder, images, bench.root)
    except InputError as exc:
        bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
        return
    if task.id in bench.tasks:
        first = bench.tasks[task.id].source
        bench.skipped.append(Skipped(str(toml_path), "task.name", f"duplicate task id {task.id!r} (first in {first})"))
        return
    bench.tasks[task.id] = task
    aliases.setdefault(folder.name, task.id)


def _table(value: object) -> dict[str, Any]:
    """An optional sub-table of a JSON/TOML object: the value when it is one, else empty."""
    return value if isinstance(value, dict) else {}


def _section(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise InputError(path, f"[{name}]", "must be a table")
    return value


def _read_task(folder: Path, images: dict[str, ImageSource], root: Path) -> Task:
    toml_path = folder / "task.toml"
    data = read_toml(contained(root, toml_path))
    version = str(data.get("schema_version", data.get("version", "1.0")))
    if not version.startswith("1"):
        raise InputError(toml_path, "schema_version", f"unsupported version {version!r} (expected 1.x)")
    task_sec = _section(data, "task", toml_path)
    meta = _section(data, "metadata", toml_path)
    verifier = _section(data, "verifier", toml_path)
    agent = _section(data, "agent", toml_path)
    env_sec = _section(data, "environment", toml_path)

    task_id = task_sec.get("name", task_sec.get("id", folder.name))
    if problem := id_problem(task_id):
        raise InputError(toml_path, "task.name", problem)

    instruction_path = folder / "instruction.md"
    instruction = _read_text(instruction_path, root, required=True)

    environment = _environment(folder, toml_path, env_sec, images, root)

    solution_patch = _read_text(folder / "solution" / "solution.patch", root)
    if solution_patch is not None and (problem := patch_problem(solution_patch.encode())):
        raise InputError(folder / "solution" / "solution.patch", None, problem)
    reference = Reference(patch=solution_patch, solve_script=_read_text(folder / "solution" / "solve.sh", root))

    config_path = folder / "tests" / "config.json"
    config = _read_json_object(config_path, root) if config_path.is_file() else {}
    test_patch_path = folder / "tests" / "test.patch"
    test_patch = _read_text(test_patch_path, root) or ""
    if test_patch and (problem := patch_problem(test_patch.encode())):
        raise InputError(test_patch_path, None, problem)
    f2p = _id_list(config, "f2p_node_ids", config_path)
    p2p = _id_list(config, "p2p_node_ids", config_path)

    language = normalize_language(meta.get("language") or meta.get("repo_language") or config.get("language"))
    grade = _table(config.get("grade"))
    run_script = _read_text(folder / "tests" / "test.sh", root)
    declared = (config.get("framework") or meta.get("test_framework") or grade.get("framework")
                or framework_of_tool(grade.get("tool_label")))
    ran = framework_of_script(run_script, language)
    # What test.sh runs decides; a declaration naming the same tool keeps its own spelling.
    framework = (declared if declared and (not ran or same_tool(declared, ran)) else ran) \
        or default_framework(language)
    tests = OfficialTests(
        test_patch=test_patch,
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        framework=str(framework),
        test_files=touched_files(test_patch),
        run_script=run_script,
        evaluator=_evaluator(folder, toml_path, config_path, grade, verifier, root),
    )
    base_commit = config.get("base_commit") or meta.get("base_commit")
    if base_commit is not None and not isinstance(base_commit, str):
        raise InputError(config_path if config.get("base_commit") else toml_path, "base_commit",
                         f"must be a string (a commit hash), got {base_commit!r}")
    for name, sec in (("verifier", verifier), ("agent", agent)):
        if "timeout_sec" in sec:
            number(sec["timeout_sec"], toml_path, f"{name}.timeout_sec", "timeout")
    metadata = {
        "metadata": meta, "verifier": verifier, "agent": agent, "environment": env_sec,
        "collect": verifier.get("collect", []), "grade": grade, "schema_version": version,
    }
    if declared and not same_tool(declared, framework):
        metadata["declared_framework"] = str(declared)  # `list` shows both
    return Task(id=task_id, instruction=instruction, environment=environment, reference=reference,
                tests=tests, language=language, base_commit=base_commit, source=folder, metadata=metadata,
                reference_program=_reference_program(folder, toml_path, data, root))


def _reference_program(folder: Path, toml_path: Path, data: dict[str, Any], root: Path) -> ReferenceProgram | None:
    """`[reference_program]`: command (argv list), files (a folder of the task), image (optional)."""
    if "reference_program" not in data:
        return None
    sec = _section(data, "reference_program", toml_path)
    command = sec.get("command")
    if (not isinstance(command, list) or not command
            or not all(isinstance(a, str) and a for a in command)):
        raise InputError(toml_path, "reference_program.command",
                         f"must be a non-empty list of strings (an argv), got {command!r}")
    files = sec.get("files")
    if not isinstance(files, str) or not files or Path(files).is_absolute() or ".." in Path(files).parts:
        raise InputError(toml_path, "reference_program.files",
                         f"must be a folder relative to the task folder, got {files!r}")
    contained(root, folder / files, "reference_program.files", toml_path)
    if not (folder / files).is_dir():
        raise InputError(toml_path, "reference_program.files", f"folder {files!r} does not exist in {folder}")
    image = sec.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise InputError(toml_path, "reference_program.image", f"must be an image name, got {image!r}")
    return ReferenceProgram(command=tuple(command), files=folder / files, image=image)


GRADE_FORMATS = ("junit", "ctrf")
CTRF_NODE_IDS = ("suite.name", "name")


def _evaluator(folder: Path, toml_path: Path, config_path: Path, grade: dict[str, Any],
               verifier: dict[str, Any], root: Path) -> Evaluator | None:
    """The task's own T0 flow: `tests/test.sh` plus a `grade` section naming its reports.

    Without both, T0 runs through our own runner (ids then must be pytest node ids or JUnit
    `classname.name` ids, mapped by testjack_tui.sandbox.test_ids)."""
    tests_dir = folder / "tests"
    if not (tests_dir / "test.sh").is_file() or not grade.get("reports"):
        return None
    contained(root, tests_dir)  # copied into the verifier's container as /tests
    fmt = grade.get("format", "ctrf")
    if fmt not in GRADE_FORMATS:
        raise InputError(config_path, "grade.format", f"unknown report format {fmt!r} "
                         f"(known: {', '.join(GRADE_FORMATS)})")
    reports = grade["reports"]
    if not isinstance(reports, list) or not all(isinstance(r, str) and r for r in reports):
        raise InputError(config_path, "grade.reports", "must be a list of report paths")
    node_id = grade.get("node_id", "name")
    if fmt == "ctrf" and node_id not in CTRF_NODE_IDS:
        raise InputError(config_path, "grade.node_id", f"must be one of {', '.join(CTRF_NODE_IDS)}, "
                         f"got {node_id!r}")
    timeout = number(verifier.get("timeout_sec", 1800.0), toml_path, "verifier.timeout_sec", "timeout")
    mode = verifier.get("environment_mode", "shared")
    if mode not in ("shared", "separate"):
        raise InputError(toml_path, "verifier.environment_mode", f"must be shared or separate, got {mode!r}")
    venv = _table(verifier.get("environment"))
    image = venv.get("docker_image") or None
    recipe = next((contained(root, tests_dir / n) for n in ("Dockerfile", "Containerfile")
                   if (tests_dir / n).is_file()), None)
    return Evaluator(kind="harbor", tests_dir=tests_dir, report_format=fmt, reports=tuple(reports),
                     node_id=str(node_id), timeout_sec=timeout, separate=mode == "separate",
                     network_mode=str(verifier.get("network_mode", "no-network")),
                     verifier_image=str(image) if image else None,
                     verifier_containerfile=recipe if mode == "separate" else None)


def _environment(folder: Path, toml_path: Path, env: dict[str, Any], images: dict[str, ImageSource],
                 root: Path) -> Environment:
    image = env.get("docker_image") or None
    if image is not None and not isinstance(image, str):
        raise InputError(toml_path, "environment.docker_image", f"must be a string, got {image!r}")
    workdir = env.get("workdir", DEFAULT_WORKDIR)
    if not isinstance(workdir, str) or not workdir.startswith("/") or "\x00" in workdir:
        raise InputError(toml_path, "environment.workdir", f"must be an absolute path, got {workdir!r}")
    memory_mb, cpus = _memory_mb(env, toml_path), _cpus(env, toml_path)
    if image and image in images:
        src = images[image]
        return Environment(image=image, containerfile=src.containerfile, context=src.context, workdir=workdir,
                           build_network=src.build_network, memory_mb=memory_mb, cpus=cpus)
    if image:
        return Environment(image=image, workdir=workdir, memory_mb=memory_mb, cpus=cpus)
    for name in ("Dockerfile", "Containerfile"):
        recipe = folder / "environment" / name
        if recipe.is_file():
            contained(root, recipe.parent)  # the build context goes to podman whole
            contained(root, recipe)
            return Environment(containerfile=recipe, context=recipe.parent, workdir=workdir,
                               memory_mb=memory_mb, cpus=cpus)
    raise InputError(toml_path, "environment.docker_image",
                     "missing, and no environment/Dockerfile or environment/Containerfile")


def _memory_mb(env: dict[str, Any], path: Path) -> int | None:
    if "memory_mb" in env:
        value = env["memory_mb"]
    elif "memory" in env:  # older Harbor: memory = "2G"
        value = _size_mb(env["memory"], path, "environment.memory")
    else:
        return None
    return int(number(value, path, "environment.memory_mb", "memory_mb"))


def _size_mb(value: object, path: Path, field: str) -> int:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    text = str(value).strip().upper().removesuffix("B")
    units = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(float(text) / (1024 * 1024))  # plain bytes
    except (ValueError, OverflowError):
        raise InputError(path, field, f"not a size like '2G': {value!r}") from None


def _cpus(env: dict[str, Any], path: Path) -> float | None:
    value = env.get("cpus")
    if value is None:
        return None
    return number(value, path, "environment.cpus", "cpus")


@overload
def _read_text(path: Path, root: Path, *, required: Literal[True]) -> str: ...
@overload
def _read_text(path: Path, root: Path, *, required: bool = False) -> str | None: ...


def _read_text(path: Path, root: Path, *, required: bool = False) -> str | None:
    try:
        data = contained(root, path).read_bytes()
    except FileNotFoundError:
        if required:
            raise InputError(path, None, "missing (required)") from None
        return None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None


def _read_json_object(path: Path, root: Path) -> dict[str, Any]:
    try:
        value = json.loads(contained(root, path).read_bytes())
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply to read") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    except ValueError as exc:  # bad JSON, or an integer of more digits than Python converts
        raise InputError(path, None, f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError(path, None, "must hold a JSON object")
    return value


def _id_list(config: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = config.get(key, [])
    if isinstance(value, str):  # some exports JSON-encode the list
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise InputError(path, key, "a string that is not a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(path, key, "must be a list of test ids")
    return tuple(value)


# ---------------------------------------------------------------------------------------- trials

def load_trials(job_root: Path, bench: Benchmark, aliases: dict[str, str], artifact: str,
                threshold: float) -> None:
    """Read trials under a jobs folder (`<job>/<trial>/result.json`) or a single job folder."""
    seen: dict[str, Path] = {t.id: t.source for t in bench.trials if t.source}
    job_dirs = [job_root] if _is_job_dir(job_root, bench.root) else _subdirs(job_root)
    if not job_dirs:
        bench.skipped.append(Skipped(str(job_root), "jobs", "the jobs folder is empty: no trials"))
    for job in job_dirs:
        try:
            contained(bench.root, job)
        except InputError as exc:
            bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
            continue
        trial_dirs = _subdirs(job)
        if not trial_dirs:
            bench.skipped.append(Skipped(str(job), "trials", "job folder holds no trial folders"))
        for trial_dir in trial_dirs:
            result = trial_dir / "result.json"
            try:
                contained(bench.root, trial_dir)
            except InputError as exc:
                bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
                continue
            if not os.path.isfile(result):
                bench.skipped.append(Skipped(str(trial_dir), "result.json", "trial folder has no result.json"))
                continue
            try:
                trial = _read_trial(trial_dir, result, bench, aliases, artifact, threshold)
            except InputError as exc:
                bench.skipped.append(Skipped(exc.path, exc.field, exc.message))
                continue
            if trial.id in seen:
                bench.skipped.append(Skipped(str(result), "trial_name",
                                             f"duplicate trial id {trial.id!r} (first in {seen[trial.id]})"))
                continue
            seen[trial.id] = trial_dir
            bench.trials.append(trial)


def _subdirs(folder: Path) -> list[Path]:
    with os.scandir(folder) as it:
        names = sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))
    return [folder / name for name in names]


def _is_job_dir(folder: Path, root: Path) -> bool:
    """A job folder holds trial folders whose result.json names a task; a jobs folder holds job
    folders, whose own result.json (Harbor's job summary) names none."""
    for sub in _subdirs(folder):
        result = sub / "result.json"
        if result.is_file():
            try:
                return "task_name" in json.loads(contained(root, result).read_bytes())
            except (OSError, ValueError, TypeError, RecursionError, InputError):
                return False
    return False


def _read_trial(trial_dir: Path, result: Path, bench: Benchmark, aliases: dict[str, str],
                artifact: str, threshold: float) -> Trial:
    info = _read_json_object(result, bench.root)
    task_name = info.get("task_name")
    if not isinstance(task_name, str) or not task_name:
        raise InputError(result, "task_name", "missing or not a string")
    task_id = _resolve_task(task_name, bench, aliases)
    if task_id is None:
        raise InputError(result, "task_name", f"unknown task {task_name!r}")
    trial_id = info.get("trial_name") or trial_dir.name
    if problem := id_problem(trial_id):
        raise InputError(result, "trial_name", problem)

    agent_info = info.get("agent_info")
    if not isinstance(agent_info, dict):
        raise InputError(result, "agent_info", "missing or not an object")
    agent = agent_info.get("name")
    if not isinstance(agent, str) or not agent:
        raise InputError(result, "agent_info.name", "missing or not a string")
    model_info = agent_info.get("model_info") or {}
    model = model_info.get("name") if isinstance(model_info, dict) else None
    if model is None:
        model = agent  # e.g. Harbor's oracle agent has no model
    if not isinstance(model, str) or not model:
        raise InputError(result, "agent_info.model_info.name", "not a non-empty string")

    exception = _exception_text(info.get("exception_info"))
    reward = _reward(info.get("verifier_result"), result, exception)
    official_pass = exception is None and reward is not None and reward >= threshold

    patch_path = trial_dir / artifact
    try:
        data = contained(bench.root, patch_path).read_bytes()
    except FileNotFoundError:
        raise InputError(patch_path, None, "patch artifact missing") from None
    except OSError as exc:
        raise InputError(patch_path, None, f"cannot read: {exc}") from None
    if problem := patch_problem(data):
        raise InputError(patch_path, None, problem)
    trajectory = trial_dir / TRAJECTORY
    if os.path.isfile(trajectory):
        contained(bench.root, trajectory)  # agents and the TUI read it later
    return Trial(
        id=trial_id, task_id=task_id, agent=agent, model=model, patch=data.decode("utf-8"),
        official_pass=official_pass, reward=reward,
        trajectory=trajectory if os.path.isfile(trajectory) else None,
        source=trial_dir, exception=exception,
    )


def _resolve_task(name: str, bench: Benchmark, aliases: dict[str, str]) -> str | None:
    if name in bench.tasks:
        return name
    if name in aliases:
        return aliases[name]
    short = name.rsplit("/", 1)[-1]  # registry-qualified names such as "org/task"
    return short if short in bench.tasks else aliases.get(short)


def _exception_text(value: object) -> str | None:
    if not value:
        return None
    if isinstance(value, dict):
        kind = value.get("exception_type") or "Exception"
        message = value.get("exception_message") or ""
        return f"{kind}: {message}".rstrip(": ")
    return str(value)


def _reward(verifier: object, path: Path, exception: str | None) -> float | None:
    if verifier is None:
        if exception is None:  # no verdict and no reason for its absence
            raise InputError(path, "verifier_result", "missing (and no exception_info explains why)")
        return None
    if not isinstance(verifier, dict):
        raise InputError(path, "verifier_result", "must be an object or null")
    rewards = verifier.get("rewards")
    if rewards is None and exception is not None:
        return None
    if not isinstance(rewards, dict):
        raise InputError(path, "verifier_result.rewards", "missing or not an object")
    value = rewards.get("reward")
    if value is None and len(rewards) == 1:  # a single, differently named reward
        value = next(iter(rewards.values()))
    return number(value, path, "verifier_result.rewards.reward", "reward")
