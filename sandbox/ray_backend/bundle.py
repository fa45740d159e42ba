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

from testjack_tui.model import Task


@dataclass(frozen=True)
class TaskBundle:
    task: Task
    archive: bytes  # b"" when the environment is a named image only
    digest: str


def pack_task(task: Task) -> TaskBundle:
    env = task.environment
    buf = io.BytesIO()
    if env.containerfile is not None:
        containerfile = Path(env.containerfile)
        context = Path(env.context or containerfile.parent)
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(str(context), arcname="context", recursive=True)
            tar.add(str(containerfile), arcname=f"containerfile/{containerfile.name}")
    archive = buf.getvalue()
    digest = hashlib.sha256(archive + repr(dataclasses.astuple(env)).encode()).hexdigest()[:20]
    return TaskBundle(task=task, archive=archive, digest=digest)


def bundle_root() -> Path:
    root = Path(tempfile.gettempdir()) / f"testjack-ray-{os.getuid()}" / "bundles"
    root.mkdir(parents=True, exist_ok=True)
    return root


def unpack_task(bundle: TaskBundle, root: Path | None = None) -> Task:
    """The task with its environment paths pointing at this node's copy of the files."""
    env = bundle.task.environment
    if env.containerfile is None:
        return bundle.task
    target = (root or bundle_root()) / bundle.digest
    if not target.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
        with tarfile.open(fileobj=io.BytesIO(bundle.archive), mode="r") as tar:
            # The operator packed these files from its own benchmark folder: trusted input.
            tar.extractall(staging, filter="fully_trusted")
        try:
            staging.rename(target)
        except OSError:  # another worker of this node unpacked it first
            pass
    name = Path(env.containerfile).name
    local_env = dataclasses.replace(env, containerfile=target / "containerfile" / name,
                                    context=target / "context")
    return dataclasses.replace(bundle.task, environment=local_env)
