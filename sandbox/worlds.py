"""Preparing a world: a snapshot image of the repo in state null R, reference R[G] or model R[s],
each with T0 applied the way the official evaluator applies it.

Blocking code, run in a worker thread by the Sandbox. Snapshots are tagged by task, kind,
trial and a hash of everything that went into them, so a second prepare (in this process or
another) finds the tag and does nothing. What the snapshot needs to be described again
(tampered files, how the patch applied) is kept in the image's labels.
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable

from podman import PodmanClient
from podman.domain.images import Image
from podman.errors import ImageNotFound, NotFound

from testjack_tui.model import Task, Trial

from . import prepare_script
from .api import PatchResult, WorldKind, WorldRef
from .containers import (ClientFactory, Limits, get_file, init_pid, put_files,
                         remove_container, start_container)
from .errors import PatchError, SandboxError
from .execs import ExecHandle, run_exec
from .integrity import harness_reasons
from .labels import APP, L_APP, L_TASK, L_TRIAL, L_WORLD, slug
from .output import OutputCollector
from testjack_tui.diffs import touched_files
from .runners import get_runner
from .runners.build_flags import t0_build_flags
from .trial_user import TRIAL_HOME, TRIAL_NAME, TRIAL_UID

WORLD_REPO = "localhost/testjack-world"
L_TAMPERED = "testjack.tampered"
L_HOME = "testjack.home"  # which TESTJACK_HOME built the snapshot (prune touches only its own)


def home_id() -> str:
    from testjack_tui.paths import cache_dir

    return hashlib.sha256(str(cache_dir().resolve()).encode()).hexdigest()[:16]
L_APPLIED = "testjack.applied"
L_WORKDIR = "testjack.workdir"
L_USER = "testjack.user"  # uid:gid trial code runs as in this snapshot (owner of the repo)
L_REPO_KB = "testjack.repo_kb"
PREPARE_TIMEOUT = 900  # solve scripts may build things


def runner_support_files(framework: str | None) -> dict[str, str]:
    """The runner's files to bake into snapshots; none for a framework without a runner yet
    (such worlds still serve exec and agent sessions)."""
    try:
        return get_runner(framework or "pytest").support_files()
    except SandboxError:
        return {}


@dataclass
class WorldPlan:
    """What goes into one world, and its cache tag."""

    task: Task
    kind: WorldKind
    trial: Trial | None
    env_image: str
    env_image_id: str

    @property
    def name(self) -> str:
        return f"{self.task.id}/{self.kind}" + (f"/{self.trial.id}" if self.trial else "")

    def main_patch(self) -> tuple[str, str]:
        """(stage, content): how the repo changes before T0 is applied."""
        if self.kind == "reference":
            ref = self.task.reference
            if ref.patch:
                return "patch", ref.patch
            if ref.solve_script:
                return "solve", ref.solve_script
            raise SandboxError(f"{self.task.id}: the task has no reference solution (G)")
        if self.kind == "model":
            if self.trial is None:
                raise SandboxError(f"{self.task.id}: a model world needs a trial")
            return "patch", self.trial.patch or ""
        return "none", ""

    def test_files(self) -> list[str]:
        tests = self.task.tests
        return list(tests.test_files or touched_files(tests.test_patch or ""))

    def harness_candidates(self) -> dict[str, str]:
        if self.kind != "model" or self.trial is None:
            return {}
        return harness_reasons(self.trial.patch or "")

    def digest(self) -> str:
        stage, content = self.main_patch()
        support = "".join(k + v for k, v in sorted(runner_support_files(self.task.tests.framework).items()))
        parts = [prepare_script.VERSION, support, self.env_image_id, self.kind, stage, content,
                 self.task.tests.test_patch or "", "\n".join(self.test_files()),
                 self.task.base_commit or "", self.task.environment.workdir]
        if self.kind == "model":
            parts.append(self.task.reference.patch or "")  # reference versions of harness files
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]

    def tag(self) -> str:
        trial = f"-{slug(self.trial.id, 40)}" if self.trial else ""
        return f"{WORLD_REPO}:{slug(self.task.id, 40)}-{self.kind}{trial}-{self.digest()}"


def world_from_image(plan: WorldPlan, image: Image) -> WorldRef:
    labels = image.labels or {}
    tampered: tuple[str, ...] = ()
    if labels.get(L_TAMPERED):
        tampered = tuple(json.loads(base64.b64decode(labels[L_TAMPERED]).decode()))
    return WorldRef(task_id=plan.task.id, kind=plan.kind,
                    trial_id=plan.trial.id if plan.trial else None, image=plan.tag(),
                    workdir=plan.task.environment.workdir, tampered=tampered,
                    framework=plan.task.tests.framework or "pytest",
                    memory_mb=plan.task.environment.memory_mb,
                    applied_with=labels.get(L_APPLIED, ""), user=labels.get(L_USER, ""),
                    repo_mb=_int(labels.get(L_REPO_KB)) // 1024,
                    build_flags=t0_build_flags(plan.task))


def _int(text: str | None) -> int:
    try:
        return max(0, int(text or 0))
    except ValueError:
        return 0


def find_world(client: PodmanClient, plan: WorldPlan) -> WorldRef | None:
    try:
        image = client.images.get(plan.tag())
    except (ImageNotFound, NotFound):
        return None
    return world_from_image(plan, image)


def _parse_markers(text: str) -> dict[str, Any]:
    info: dict[str, Any] = {"applied": {}, "failed": None, "message": [], "tampered": [], "done": False,
                  "warn": [], "user": "", "repo_kb": ""}
    collecting = False
    for line in text.splitlines():
        if line.startswith("TJ_APPLIED "):
            _, stage, method = line.split(" ", 2)
            info["applied"][stage] = method
        elif line.startswith("TJ_NOTAPPLIED "):
            info["failed"] = line.split(" ", 1)[1].strip()
            collecting = True
        elif line.startswith("TJ_TAMPERED "):
            info["tampered"].append(line.split(" ", 1)[1])
        elif line.startswith("TJ_WARN "):
            info["warn"].append(line.split(" ", 1)[1])
        elif line.startswith("TJ_REPO_KB "):
            info["repo_kb"] = line.split(" ", 1)[1].strip()
        elif line.startswith("TJ_TRIAL_USER "):
            info["user"] = line.split(" ", 1)[1].strip()
        elif line.startswith("TJ_DONE"):
            info["done"] = True
        elif line.startswith("TJ_FAIL "):
            info["message"].append(line[8:])
        elif collecting:
            info["message"].append(line)
    return info


def build_world(client_factory: ClientFactory, plan: WorldPlan, labels: dict[str, str], limits: Limits,
                on_output: Callable[[str], None] | None = None,
                on_container: Callable[[str, str], None] | None = None,
                remove_later: Callable[[str], None] | None = None) -> WorldRef:
    """Create the snapshot for plan (blocking). Raises PatchError when a patch does not apply.
    remove_later: hands the used container over for removal after the snapshot is returned (its
    removal is off the build's path); without it the container is removed before returning."""
    client = client_factory()
    task = plan.task
    container = start_container(client, plan.env_image, labels, limits)
    if on_container:
        on_container("created", container.id)
    try:
        stage, content = plan.main_patch()
        candidates = plan.harness_candidates()
        files = {
            "/tmp/tj/prepare.sh": prepare_script.SCRIPT,
            "/tmp/tj/test.patch": _with_newline(task.tests.test_patch or ""),
            "/tmp/tj/test_files": "".join(f + "\n" for f in plan.test_files()),
            "/tmp/tj/harness_candidates": "".join(
                f"{'test' if why == 'test file' else 'hook'} {path}\n" for path, why in candidates.items()),
        }
        # The test runner's launcher and plugin live in the snapshot: no copy-in per test run.
        files.update(runner_support_files(task.tests.framework))
        if stage == "patch":
            files["/tmp/tj/main.patch"] = _with_newline(content)
        elif stage == "solve":
            files["/tmp/tj/solve.sh"] = content
        if candidates and task.reference.patch:
            files["/tmp/tj/ref.patch"] = _with_newline(task.reference.patch)
        put_files(container, files)
        env = {"TJ_WORKDIR": task.environment.workdir, "TJ_BASE": task.base_commit or "",
               "TJ_STAGE_MAIN": stage, "TJ_TRIAL_UID": str(TRIAL_UID), "TJ_TRIAL_NAME": TRIAL_NAME,
               "TJ_TRIAL_HOME": TRIAL_HOME}
        collector = OutputCollector(f"prepare-{plan.name}", on_output)
        handle = ExecHandle(client_factory, container.id, init_pid(container))
        result = run_exec(handle, ["bash", "/tmp/tj/prepare.sh"], cwd="/", env=env,
                          timeout=PREPARE_TIMEOUT, collector=collector)
        text = result.stdout_head + result.stdout_tail + result.stderr_head
        info = _parse_markers(text)
        if result.timed_out:
            raise SandboxError(f"{plan.name}: preparing the world timed out after {PREPARE_TIMEOUT}s")
        if info["failed"] is not None:
            failed_stage = info["failed"]
            what = {"main": {"reference": "reference solution", "model": "trial patch"}.get(plan.kind, "patch"),
                    "test": "test patch"}.get(failed_stage, failed_stage)
            if failed_stage == "main" and stage == "solve":
                what = "reference solve script"
            message = "\n".join(info["message"]).strip() or result.output[-2000:]
            raise PatchError(plan.name, PatchResult(applied=False, method="", message=message), what)
        if not info["done"]:
            raise SandboxError(f"{plan.name}: preparing the world failed (exit {result.exit_code}): "
                               + "; ".join(info["message"] or [result.output.strip()[-500:]]))
        applied = info["applied"].get("main", "")
        tampered = info["tampered"]
        changes = [f"LABEL {L_APP}={APP}", f"LABEL {L_WORLD}={slug(plan.name, 120)}",
                   f"LABEL {L_HOME}={home_id()}",
                   f"LABEL {L_TASK}={slug(task.id, 120)}",
                   f'LABEL {L_APPLIED}="{applied}"',
                   f"LABEL {L_WORKDIR}={task.environment.workdir}"]
        if info["user"]:
            changes.append(f"LABEL {L_USER}={info['user']}")
        if info["repo_kb"].isdigit():
            changes.append(f"LABEL {L_REPO_KB}={info['repo_kb']}")
        if plan.trial:
            changes.append(f"LABEL {L_TRIAL}={slug(plan.trial.id, 120)}")
        if tampered:
            changes.append(f"LABEL {L_TAMPERED}={base64.b64encode(json.dumps(tampered).encode()).decode()}")
        repo, tag = plan.tag().rsplit(":", 1)
        container.commit(repository=repo, tag=tag, pause=False, changes=changes)
        image = client.images.get(plan.tag())
        return world_from_image(plan, image)
    finally:
        if remove_later is not None:
            remove_later(container.id)
        else:
            remove_container(client, container.id)
            if on_container:
                on_container("removed", container.id)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def read_restored(text: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("TJ_RESTORED ")]


__all__ = ["WorldPlan", "build_world", "find_world", "get_file", "read_restored"]
