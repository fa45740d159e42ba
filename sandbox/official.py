"""T0 the way the benchmark runs it: the task's own verifier flow in a fresh container.

Harbor (DeepSWE and friends): the container starts from the task image R at its base state
(or, with `environment_mode = "separate"`, from the verifier image built from `tests/Dockerfile`
on top of R when no verifier image is named or present), the task's `tests/` folder goes to
`/tests`, the patch to `/logs/artifacts/model.patch` (none for the null world, G for the
reference world, s for a model world), and `bash /tests/test.sh` runs with the verifier's
timeout. The task's own script applies the patches and runs the suites; per-test outcomes are
read from the reports its `grade` section names, exactly as its grader reads them
(testjack_tui.sandbox.grader_reports), and the reward from `/logs/verifier/reward.json` or `reward.txt`.

Containers keep our limits whatever the task asks: no network (a task's `network_mode` that
allows it is not honoured, trial code is hostile), our memory/pids/CPU caps.

No canaries in this flow, on purpose. The task's `test.sh` chooses what runs (real DeepSWE
scripts name their files and `-run` patterns) and its grader turns *every* collected result into
the reward: a canary collected by it would change the benchmark's verdict (a must-fail canary
makes the reward 0), and one it does not collect proves nothing about its run. This holds for
every report format we read (JUnit, CTRF, reward files). So a trial that forges this flow's
reports can at most make its own T0 "reproduce"; it cannot certify itself: every witness run
(our runner, sandbox/testruns.py) carries canaries, runs unprivileged on a read-only root and
under unpredictable names.

Entry points: `Sandbox.run_official(task, kind, trial)` (async) runs this flow, its wrapper as the
container's main process held at a gate until its turn (sandbox/main_process.py), or as an exec
when the image cannot start it (`run_official_in`); both read the results with `read_official`;
`testjack_tui.sandbox.t0.run_t0` picks it for every task whose `task.tests.evaluator` is set and our own
runner otherwise.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from podman.domain.containers import Container

from testjack_tui.model import Evaluator, Task, Trial

from .api import ExecResult, TestOutcome, TestRun
from .containers import ClientFactory, get_dir, get_file, init_pid, put_files
from .errors import SandboxError
from .execs import ExecHandle, Killable, run_exec
from .grader_reports import MISSING, read_reports, read_reward
from .output import Collector, OutputCollector
from .runners.gate import GATE
from .trailer import INLINE_LIMIT, TrailerSplitter, encode_files, inline_size, new_mark

VERIFIER_DIR = "/logs/verifier"
PATCH_PATH = "/logs/artifacts/model.patch"
TESTS_MOUNT = "/tests"
MAX_TESTS_BYTES = 32 * 1024 * 1024
REPORT_CAP = 48 * 1024 * 1024  # bytes of /logs/verifier brought back through the trailer

# Runs as `python3 -I -S -c WRAPPER` (isolated: none of the repo's code loads in it; the verifier images of Harbor tasks that grade with a Python
# grader have python3): writes the files passed in TJ_FILES, runs the task's test.sh with our
# variables removed from its environment, then writes /logs/verifier back as a stdout trailer
# (sandbox/trailer.py). No archive round trips for small tests folders.
WRAPPER = GATE + r"""
import base64, json, os, subprocess, sys
try:  # the trailer's mark stays out of the verifier's reach (see runners/run_wrapper.WRAPPER)
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
except Exception:
    pass
spec = json.loads(os.environ.pop("TJ_WRAP"))
files = json.loads(os.environ.pop("TJ_FILES", None) or "{}")
for path, b64 in files.items():
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder)
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    with open(path, "wb") as fh:
        fh.write(base64.b64decode(b64))
sys.stdout.flush()
def limit_cpu():
    # Each process of the flow gets the run's CPU-time limit (SIGXCPU past it): a trial that
    # spins frees its slot long before the verifier's wall-clock timeout. Without
    # CAP_SYS_RESOURCE nothing in the flow can raise it again.
    if spec.get("cpu"):
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (int(spec["cpu"]), int(spec["cpu"]) + 2))
code = subprocess.call(spec["argv"], preexec_fn=limit_cpu)
reports, total = {}, 0
root = spec["collect"]
for folder, _dirs, names in os.walk(root):
    for name in sorted(names):
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read(spec["cap"] - total + 1)
        except (IOError, OSError):
            continue
        total += len(data)
        if total > spec["cap"]:
            break
        reports[os.path.relpath(path, root)] = base64.b64encode(data).decode()
for path in spec["extra"]:
    try:
        with open(path, "rb") as fh:
            reports[path] = base64.b64encode(fh.read(spec["cap"])).decode()
    except (IOError, OSError):
        reports[path] = None
sys.stdout.flush()
sys.stderr.flush()
# The exit status goes with the reports (as sys.exit gives it): as a container's main process
# the run needs no `wait` round trip to podman for it.
out = (spec["mark"] + base64.b64encode(json.dumps({"reports": reports, "code": code % 256}).encode()).decode()
       + spec["mark"] + "END\n").encode()
while out:
    out = out[os.write(1, out):]
sys.exit(code)
"""


def tests_files(evaluator: Evaluator) -> dict[str, bytes]:
    """The task's tests/ folder as container paths under /tests (as Harbor uploads it)."""
    if evaluator.tests_dir is None:
        raise SandboxError("the task's verifier flow names no tests/ folder")
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


def _exec(client_factory: ClientFactory, container: Container, handles: list[Killable], argv: list[str], task: Task,
          evaluator: Evaluator, env: dict[str, str], collector: Collector) -> ExecResult:
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    return run_exec(handle, argv, cwd=task.environment.workdir, env=env,
                    timeout=evaluator.timeout_sec, collector=collector)


def _report_bytes(container: Container, path: str, found: dict[str, bytes]) -> bytes | None:
    """A report by its configured path; Harbor frames move native reports to reports/ at the end."""
    if path in found:  # a report outside /logs/verifier, brought back by the wrapper
        return found[path]
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


@dataclass
class OfficialPlan:
    """What one run of the task's verifier flow sends into its container, worked out before the
    container exists: the files (tests/ and the patch), the flow's command, the wrapper's spec."""

    task: Task
    evaluator: Evaluator
    world_name: str
    files: dict[str, str | bytes]
    argv: list[str]
    cpu_seconds: int | None

    def inline_ok(self) -> bool:
        """Whether the files can travel in the wrapper's environment."""
        return inline_size(self.files) <= INLINE_LIMIT

    def inline(self) -> tuple[list[str], dict[str, str], str]:
        """argv, env and trailer mark of the wrapper: files in through its environment,
        /logs/verifier back as a trailer."""
        mark = new_mark()
        extra = [p for p in self.evaluator.reports if not p.startswith(VERIFIER_DIR + "/")]
        wrap = {"mark": mark, "argv": self.argv, "collect": VERIFIER_DIR, "extra": extra, "cap": REPORT_CAP,
                "cpu": self.cpu_seconds}
        return (["python3", "-I", "-S", "-c", WRAPPER],
                {"TJ_WRAP": json.dumps(wrap), "TJ_FILES": encode_files(self.files)}, mark)


def plan_official(task: Task, kind: str, trial: Trial | None, world_name: str,
                  cpu_seconds: int | None = None) -> OfficialPlan:
    """`cpu_seconds`: the CPU-time limit of each process of the flow (Limits.cpu_seconds_for)."""
    evaluator = task.tests.evaluator
    if evaluator is None:
        raise SandboxError(f"{task.id}: the task has no verifier flow of its own")
    files: dict[str, str | bytes] = dict(tests_files(evaluator))
    patch = patch_for(task, kind, trial)
    if patch is not None:
        files[PATCH_PATH] = patch if not patch or patch.endswith("\n") else patch + "\n"
    return OfficialPlan(task=task, evaluator=evaluator, world_name=world_name, files=files,
                        argv=["bash", f"{TESTS_MOUNT}/test.sh"], cpu_seconds=cpu_seconds)


def run_official_in(client_factory: ClientFactory, container: Container, plan: OfficialPlan,
                    handles: list[Killable], on_output: Callable[[str], None] | None = None,
                    on_start: Callable[[str], None] | None = None) -> TestRun:
    """Run the task's verifier script as an exec in a started container and read its reports
    (blocking)."""
    task, evaluator, argv = plan.task, plan.evaluator, plan.argv
    if on_start:
        on_start(" ".join(argv))
    found: dict[str, bytes] | None = None
    result: ExecResult | None = None
    if plan.inline_ok():
        wrapper, env, mark = plan.inline()
        splitter = TrailerSplitter(OutputCollector(f"t0-{plan.world_name}", on_output), mark)
        result = _exec(client_factory, container, handles, wrapper, task, evaluator, env, splitter)
        found = trailer_reports(splitter.report)
        if found is None and result.exit_code == 127 and not result.timed_out:
            result = None  # no python3 in the image: the plain way below
    if result is None:
        put_files(container, plan.files)
        collector = OutputCollector(f"t0-{plan.world_name}", on_output)
        cpu_seconds = plan.cpu_seconds
        plain = argv if not cpu_seconds else ["bash", "-c", f"ulimit -t {int(cpu_seconds)}; exec \"$@\"",
                                              "t0", *argv]
        result = _exec(client_factory, container, handles, plain, task, evaluator, {}, collector)
    return read_official(container, plan, result, found)


def trailer_reports(report: dict[str, Any] | None) -> dict[str, bytes] | None:
    """The files the wrapper brought back in its trailer (None: no trailer came)."""
    if report is None:
        return None
    return {k: v for k, v in report["reports"].items() if v is not None}


def read_official(container: Container, plan: OfficialPlan, result: ExecResult,
                  found: dict[str, bytes] | None) -> TestRun:
    """The run's outcomes, keyed by T0's ids, from its reports: those the wrapper brought back
    (`found`), else copied out of the container."""
    task, evaluator = plan.task, plan.evaluator
    result.argv = list(plan.argv)
    if found is None:
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
    return TestRun(world=plan.world_name, test_ids=ids, outcomes=outcomes, exec=result, flow="official",
                   reward=reward, reported=len(parsed), reported_ids=tuple(parsed))
