"""T0 the way the benchmark runs it: the task's own verifier flow in a fresh container.

Harbor (DeepSWE and friends): the container starts from the task image R at its base state
(or, with `environment_mode = "separate"`, from the verifier image built from `tests/Dockerfile`
on top of R when no verifier image is named or present), the task's `tests/` folder goes to
`/tests`, the patch to `/logs/artifacts/model.patch` (none for the null world, G for the
reference world, s for a model world), and `bash /tests/test.sh` runs with the verifier's
timeout. The task's own script applies the patches and runs the suites; per-test outcomes are
read from the reports its `grade` section names, exactly as its grader reads them
(sandbox.grader_reports), and the reward from `/logs/verifier/reward.json` or `reward.txt`.

Containers keep our limits whatever the task asks: no network (a task's `network_mode` that
allows it is not honoured, trial code is hostile), our memory/pids/CPU caps.

Entry points: `Sandbox.run_official(task, kind, trial)` (async) runs this flow;
`sandbox.t0.run_t0` picks it for every task whose `task.tests.evaluator` is set and our own
runner otherwise.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from testjack_tui.model import Evaluator, Task, Trial

from .api import ExecResult, TestOutcome, TestRun
from .containers import get_dir, get_file, init_pid, put_files
from .errors import SandboxError
from .execs import ExecHandle, run_exec
from .grader_reports import MISSING, read_reports, read_reward
from .output import OutputCollector

VERIFIER_DIR = "/logs/verifier"
PATCH_PATH = "/logs/artifacts/model.patch"
TESTS_MOUNT = "/tests"
MAX_TESTS_BYTES = 32 * 1024 * 1024


def tests_files(evaluator: Evaluator) -> dict[str, bytes]:
    """The task's tests/ folder as container paths under /tests (as Harbor uploads it)."""
    root = Path(evaluator.tests_dir)
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            total += len(data)
            if total > MAX_TESTS_BYTES:
                raise SandboxError(f"{root}: the tests folder is larger than {MAX_TESTS_BYTES} bytes")
            files[f"{TESTS_MOUNT}/{path.relative_to(root).as_posix()}"] = data
    return files


def patch_for(task: Task, kind: str, trial: Trial | None) -> str | None:
    """What goes to /logs/artifacts/model.patch: nothing, G or s."""
    if kind == "null":
        return None
    if kind == "reference":
        if not task.reference.patch:
            raise SandboxError(f"{task.id}: the reference solution is a solve script only; "
                               "the benchmark's verifier flow needs it as a patch")
        return task.reference.patch
    if trial is None:
        raise SandboxError(f"{task.id}: a model world needs a trial")
    return trial.patch or ""


def _report_bytes(container, path: str, found: dict[str, bytes]) -> bytes | None:
    """A report by its configured path; Harbor frames move native reports to reports/ at the end."""
    if path.startswith(VERIFIER_DIR + "/"):
        rel = path[len(VERIFIER_DIR) + 1:]
        for key in (rel, f"reports/{Path(rel).name}"):
            if key in found:
                return found[key]
        return None
    try:
        return get_file(container, path)
    except (FileNotFoundError, SandboxError):
        return None


def run_official_in(client_factory: Callable, container, task: Task, kind: str, trial: Trial | None,
                    world_name: str, handles: list[ExecHandle],
                    on_output: Callable[[str], None] | None = None,
                    on_start: Callable[[str], None] | None = None) -> TestRun:
    """Run the task's verifier script in a started container and read its reports (blocking)."""
    evaluator = task.tests.evaluator
    if evaluator is None:
        raise SandboxError(f"{task.id}: the task has no verifier flow of its own")
    files: dict[str, str | bytes] = dict(tests_files(evaluator))
    patch = patch_for(task, kind, trial)
    if patch is not None:
        files[PATCH_PATH] = patch if not patch or patch.endswith("\n") else patch + "\n"
    put_files(container, files)
    argv = ["bash", f"{TESTS_MOUNT}/test.sh"]
    if on_start:
        on_start(" ".join(argv))
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    collector = OutputCollector(f"t0-{world_name}", on_output)
    result: ExecResult = run_exec(handle, argv, cwd=task.environment.workdir, env={},
                                  timeout=evaluator.timeout_sec, collector=collector)
    found = get_dir(container, VERIFIER_DIR)
    parsed = read_reports((_report_bytes(container, p, found) for p in evaluator.reports),
                          evaluator.report_format, evaluator.node_id)
    ids = list(dict.fromkeys(task.tests.ids))
    outcomes: dict[str, TestOutcome] = {}
    for test_id in ids:
        hit = parsed.get(test_id.strip())
        if hit is not None:
            outcomes[test_id] = TestOutcome(test_id, hit[0], hit[1])
        elif result.timed_out:
            outcomes[test_id] = TestOutcome(test_id, "timed_out",
                                            f"the verifier hit its timeout ({evaluator.timeout_sec:g}s)")
        else:
            outcomes[test_id] = TestOutcome(test_id, "not_found", MISSING)
    reward = read_reward(found.get("reward.json"), found.get("reward.txt"))
    return TestRun(world=world_name, test_ids=ids, outcomes=outcomes, exec=result, flow="official",
                   reward=reward, reported=len(parsed))
