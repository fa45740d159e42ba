"""Creating, filling and removing our containers (blocking; called from worker threads).

Every container: network none, memory+swap, pids and CPU limits, nofile, nproc and fsize
ulimits together (passing one replaces the defaults and the others then fail to apply), all
capabilities dropped but the few tests need (TEST_CAPS), no-new-privileges, catatonit as init
(killed exec children are reaped; stop is instant), our labels, and no host mounts: files go in
with put_archive and come out with get_archive.

With `Limits.read_only`, containers that run trial code from a world snapshot
(`start_container(..., writable=[...])`) also get a read-only root filesystem: the repo and /tmp are sized tmpfs mounts that start as
copies of the snapshot's (podman's tmpcopyup), so a write anywhere else fails with EROFS and
what a run may write is bounded by the tmpfs sizes (and by the memory limit: tmpfs pages count
against it). In worlds prepared as root, trial code runs as TRIAL_UID (sandbox/trial_user.py; see sandbox/prepare_script.py), which
owns the repo and nothing else.
"""
from __future__ import annotations

import dataclasses
import io
import os
import tarfile
import time
from collections.abc import Mapping
from typing import Any, Callable
from dataclasses import dataclass

from podman import PodmanClient
from podman.domain.containers import Container
from podman.errors import APIError, NotFound

from .errors import SandboxError

# Opens a client of our podman service (each thread its own).
ClientFactory = Callable[[], PodmanClient]

KEEPALIVE = ["sleep", "infinity"]

# Tries of one copy into a container (put_files): podman sometimes fails one for its own reasons.
PUT_ATTEMPTS = 3


# What test suites need of root's powers: own/chmod their files, switch users, signal their
# children. Everything else (ptrace, mknod, raw sockets, chroot, setfcap, audit, ...) is dropped.
# Without CAP_SYS_PTRACE the test process cannot read the memory of the wrapper that writes the
# report trailer (sandbox/runners/run_wrapper.py).
TEST_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID")


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    pids: int = 256
    cpus: float = 1.0
    nofile: int = 1024
    nproc: int = 1024
    network: str = "none"
    # A task's own memory_mb may raise memory_mb, but never above this ceiling.
    max_memory_mb: int = 4096
    # The largest file any process may write (RLIMIT_FSIZE; SIGXFSZ / EFBIG beyond it).
    file_mb: int = 1024
    # Bytes a container may add to its writable layer; a run passing it is killed (see
    # disk_used: overlay on ext4 has no quota, so the layer is measured while commands run).
    disk_mb: int = 2048
    caps: tuple[str, ...] = TEST_CAPS
    # CPU seconds a test run's process may use, as a share of the run's wall-clock timeout (at
    # least min_cpu_seconds): a CPU hog frees its slot early instead of holding it to the end.
    cpu_share: float = 0.5
    min_cpu_seconds: int = 20
    # Runs from world snapshots get a read-only root filesystem; the repo and /tmp are tmpfs
    # mounts of disk_mb each (a real quota: ENOSPC past it). Off by default: podman's copy of
    # the repo into the tmpfs does not keep file times, and mtime-based build tools (cargo's
    # fingerprints) then take stale artefacts for fresh ones.
    read_only: bool = False

    def cpu_seconds_for(self, timeout: float | None) -> int | None:
        if timeout is None:
            return None
        return max(self.min_cpu_seconds, int(timeout * self.cpu_share))

    def for_task(self, memory_mb: int | None) -> "Limits":
        """These limits with a task's memory request applied, capped by max_memory_mb."""
        if not memory_mb:
            return self
        return dataclasses.replace(self, memory_mb=max(64, min(int(memory_mb), self.max_memory_mb)))

    def create_kwargs(self) -> dict[str, Any]:
        period = 100_000
        mem = f"{self.memory_mb}m"
        fsize = self.file_mb * 1024 * 1024
        return {
            "network_mode": self.network,
            "mem_limit": mem,
            "memswap_limit": mem,  # no swap beyond the memory limit
            "pids_limit": self.pids,
            "cpu_period": period,
            "cpu_quota": max(1000, int(period * self.cpus)),
            "ulimits": [
                {"Name": "nofile", "Soft": self.nofile, "Hard": self.nofile},
                {"Name": "nproc", "Soft": self.nproc, "Hard": self.nproc},
                {"Name": "fsize", "Soft": fsize, "Hard": fsize},
            ],
            "cap_drop": ["ALL"],
            "cap_add": list(self.caps),
            "no_new_privileges": True,
            "init": True,
        }


def writable_mounts(paths: list[str], limits: Limits) -> list[dict[str, Any]]:
    """Sized tmpfs mounts (copies of the image's content there) for a read-only container."""
    mounts: list[dict[str, Any]] = []
    for path in dict.fromkeys(["/tmp", *paths]):
        options = ["rw", "exec", "nosuid", "nodev", f"size={limits.disk_mb}m"]
        # /tmp is everyone's; a repo's tmpfs belongs to the container's user ("U": podman
        # chowns the mount to it; the files in it keep the snapshot's owners).
        options.append("mode=1777" if path == "/tmp" else "U")
        mounts.append({"destination": path, "type": "tmpfs", "source": "tmpfs", "options": options})
    return mounts


def start_container(client: PodmanClient, image: str, labels: dict[str, str], limits: Limits,
                    name: str | None = None, writable: list[str] | None = None,
                    user: str | None = None) -> Container:
    """Create and start a keep-alive container from image. Returns the container object.
    With `writable` (and limits.read_only) the root filesystem is read-only and only those
    paths and /tmp can be written (writable_mounts). `user` ("uid:gid") is the container's
    user: what its commands run as unless an exec names another."""
    container = create_container(client, image, labels, limits, name=name, writable=writable, user=user)
    try:
        container.start()  # no reload: the init pid is looked up only if a kill needs it
    except Exception:
        remove_container(client, container.id)
        raise
    return container


def create_container(client: PodmanClient, image: str, labels: dict[str, str], limits: Limits,
                     name: str | None = None, writable: list[str] | None = None,
                     user: str | None = None, command: list[str] | None = None,
                     env: dict[str, str] | None = None, workdir: str | None = None) -> Container:
    """Create (not start) a container from image under our limits; its main process is
    `command` (default: keep-alive), run as `user` in `workdir` with `env` added to the image's.

    Uses the create endpoint directly: podman-py's create() inspects the new container once
    more, which costs a round trip on every test run.
    """
    from podman import api
    from podman.errors import ImageNotFound

    manager = client.containers
    # No log file: output is read from the attach or exec stream only, and conmon would write
    # every byte of it to disk again.
    payload: dict[str, Any] = {"image": image, "command": list(command or KEEPALIVE), "labels": labels,
                               "name": name, "log_config": {"Type": "none"}, **limits.create_kwargs()}
    if user:
        payload["user"] = user
    if env:
        payload["environment"] = dict(env)
    if workdir:
        payload["working_dir"] = workdir
    read_only = bool(writable) and limits.read_only
    if read_only:
        payload["read_only"] = True
    rendered = manager._render_payload(payload)
    if read_only:
        rendered["mounts"] = list(rendered.get("mounts") or []) + writable_mounts(list(writable or []), limits)
    body = api.prepare_body(rendered)
    response = client.api.post("/containers/create", headers={"content-type": "application/json"},
                               data=body)
    response.raise_for_status(not_found=ImageNotFound)
    container: Container = manager.prepare_model({"Id": response.json()["Id"]})
    return container


def init_pid(container: Container) -> int | None:
    return pid_in(container.attrs)


def pid_in(info: dict[str, Any]) -> int | None:
    """Host pid of the container's init in an inspect of it (None: not running, not visible)."""
    try:
        return int((info.get("State") or {}).get("Pid") or 0) or None
    except (TypeError, ValueError):
        return None


def upper_dir_in(info: dict[str, Any]) -> str | None:
    """Host path of the writable overlay layer in an inspect of the container, when this host
    can see it."""
    path = ((info.get("GraphDriver") or {}).get("Data") or {}).get("UpperDir")
    return path if path and os.path.isdir(path) else None


def remove_container(client: PodmanClient, container_id: str) -> None:
    """Remove a container, force; missing is fine. Retries once: removal can race an exit."""
    for attempt in range(3):
        try:
            client.containers.remove(container_id, force=True, v=True)
            return
        except NotFound:
            return
        except Exception:
            if attempt == 2:
                raise
            time.sleep(0.2)


def tar_files(files: Mapping[str, str | bytes], mode: int = 0o644, owner: int = 0,
              dirs: tuple[str, ...] = ()) -> bytes:
    """A tar of files (and of empty directories `dirs`), owned by uid/gid `owner`."""
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in dirs:
            info = tarfile.TarInfo(path.strip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
            info.uid = info.gid = owner
            tar.addfile(info)
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = now
            info.uid = info.gid = owner
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def put_files(container: Container, files: Mapping[str, str | bytes], base: str = "/", mode: int = 0o644,
              owner: int = 0, dirs: tuple[str, ...] = ()) -> None:
    """Write files (paths relative to base, or absolute) into the container, owned by `owner`;
    `dirs` (absolute) are created first with that owner."""
    if not files and not dirs:
        return
    rel = {}
    for path, content in files.items():
        if path.startswith("/"):
            rel[path.lstrip("/")] = content
        else:
            rel[f"{base.rstrip('/')}/{path}".lstrip("/")] = content
    data = tar_files(rel, mode, owner, dirs)
    api = container.client
    assert api is not None, "a container model always has its client"
    why = ""
    for attempt in range(PUT_ATTEMPTS):
        if attempt:
            time.sleep(0.1 * attempt)
        try:
            api.put(f"/containers/{container.id}/archive", params={"path": "/"}, data=data).raise_for_status()
            return
        except APIError as error:
            why = error.explanation or str(error)
            # podman 4.3 now and then loses the pipe to its own extracting child ("passing bulk
            # input to subprocess: write |1: broken pipe", about 1 copy in 50 with four at once);
            # the same tar again goes in. A 4xx (no such container, bad path) will not change.
            if not error.is_server_error():
                break
    raise SandboxError(f"could not copy {', '.join(sorted(files))} into container "
                       f"{container.id[:12]}: {why}")


def get_file(container: Container, path: str, max_bytes: int = 64 * 1024 * 1024) -> bytes:
    """Read one regular file out of the container. FileNotFoundError when missing."""
    try:
        stream, _stat = container.get_archive(path)
    except NotFound as exc:
        raise FileNotFoundError(path) from exc
    data = bytearray()
    for chunk in stream:
        data += chunk
        if len(data) > max_bytes + 1024 * 1024:
            raise SandboxError(f"{path} is larger than {max_bytes} bytes")
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        for member in tar:
            if member.isfile():
                fh = tar.extractfile(member)
                return fh.read() if fh else b""
            if member.isdir():
                raise IsADirectoryError(path)
    raise FileNotFoundError(path)


def get_dir(container: Container, path: str, max_bytes: int = 64 * 1024 * 1024) -> dict[str, bytes]:
    """Regular files under a directory in the container, by path relative to it ({} if missing)."""
    for attempt in range(3):
        try:
            stream, _stat = container.get_archive(path)
        except NotFound:
            return {}
        data = bytearray()
        for chunk in stream:
            data += chunk
            if len(data) > max_bytes + 1024 * 1024:
                raise SandboxError(f"{path} is larger than {max_bytes} bytes")
        if data:
            break
        # An empty answer (not even a tar header) while podman unmounts a container that was
        # just killed: asked again once that is over.
        time.sleep(0.3 * (attempt + 1))
    if not data:
        return {}
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        for member in tar:
            if member.isfile():
                fh = tar.extractfile(member)
                rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[rel] = fh.read() if fh else b""
    return files


def upper_dir(client: PodmanClient, container_id: str) -> str | None:
    """Host path of the container's writable overlay layer, when this host can see it."""
    try:
        return upper_dir_in(client.api.get(f"/containers/{container_id}/json").json())
    except Exception:
        return None


def disk_used(path: str, stop_above: int) -> int:
    """Bytes under path (allocated blocks, so sparse files count as what they take), counting
    stopped once past stop_above."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
                    if total > stop_above:
                        return total
        except OSError:
            continue
    return total
