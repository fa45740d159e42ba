"""A task's files as one object for the cluster's object store: nodes share no disk with the
operator. The environment's Containerfile and build context travel as a tar archive (modes and
symlinks kept, so the node's content-hash image tag equals the operator's); patches, test patch
and scripts are already text inside the Task."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testjack_tui.model import Task


@dataclass(frozen=True)
class TaskBundle:
    task: Task
    archive: bytes  # b"" when the environment is a named image only
    digest: str


def _folders(task: Task) -> dict[str, Path]:
    """Folders of the operator's disk the task's sandbox work reads, by their name in the archive."""
    env = task.environment
    out: dict[str, Path] = {}
    if env.containerfile is not None:
        out["context"] = Path(env.context or Path(env.containerfile).parent)
        out["containerfile"] = Path(env.containerfile).parent
    ev = task.tests.evaluator
    if ev is not None and ev.tests_dir is not None:
        out["evaluator-tests"] = Path(ev.tests_dir)
    if ev is not None and ev.verifier_containerfile is not None:
        out["verifier"] = Path(ev.verifier_containerfile).parent
    return out


def pack_task(task: Task) -> TaskBundle:
    buf = io.BytesIO()
    folders = _folders(task)
    if folders:
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, folder in sorted(folders.items()):
                if name == "containerfile":  # just the file: its folder may be large
                    path = Path(task.environment.containerfile)  # type: ignore[arg-type]
                    tar.add(str(path), arcname=f"containerfile/{path.name}")
                elif name == "verifier" and folder == folders.get("evaluator-tests"):
                    continue  # tests/Dockerfile: already inside the tests folder
                else:
                    tar.add(str(folder), arcname=name, recursive=True)
    archive = buf.getvalue()
    digest = hashlib.sha256(archive + repr(task.environment).encode()
                            + repr(task.tests.evaluator).encode()).hexdigest()[:20]
    return TaskBundle(task=task, archive=archive, digest=digest)


def bundle_root() -> Path:
    root = Path(tempfile.gettempdir()) / f"testjack-ray-{os.getuid()}" / "bundles"
    root.mkdir(parents=True, exist_ok=True)
    return root


def unpack_task(bundle: TaskBundle, root: Path | None = None) -> Task:
    """The task with its file paths pointing at this node's copy of the files."""
    task = bundle.task
    if not bundle.archive:
        return task
    target = (root or bundle_root()) / bundle.digest
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
        with tarfile.open(fileobj=io.BytesIO(bundle.archive), mode="r") as tar:
            # The operator packed these files from its own benchmark folder: trusted input.
            tar.extractall(staging, filter="fully_trusted")
        try:
            staging.rename(target)
        except OSError:  # another worker of this node unpacked it first
            pass
    env = task.environment
    if env.containerfile is not None:
        env = dataclasses.replace(env, containerfile=target / "containerfile" / Path(env.containerfile).name,
                                  context=target / "context")
    tests = task.tests
    ev = tests.evaluator
    if ev is not None and (ev.tests_dir is not None or ev.verifier_containerfile is not None):
        changes: dict[str, Any] = {}
        if ev.tests_dir is not None:
            changes["tests_dir"] = target / "evaluator-tests"
        if ev.verifier_containerfile is not None:
            vf = Path(ev.verifier_containerfile)
            inside = ev.tests_dir is not None and vf.parent == Path(ev.tests_dir)
            changes["verifier_containerfile"] = (target / ("evaluator-tests" if inside else "verifier") / vf.name)
        tests = dataclasses.replace(tests, evaluator=dataclasses.replace(ev, **changes))
    return dataclasses.replace(task, environment=env, tests=tests)
