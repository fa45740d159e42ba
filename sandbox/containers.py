"""Creating, filling and removing our containers (blocking; called from worker threads).

Every container: network none, memory+swap, pids and CPU limits, nofile and nproc ulimits
together (passing one replaces the defaults and the other then fails to apply), catatonit as
init (killed exec children are reaped; stop is instant), our labels, and no host mounts:
files go in with put_archive and come out with get_archive.
"""
from __future__ import annotations

import io
import tarfile
import time
from dataclasses import dataclass

from podman import PodmanClient
from podman.errors import NotFound

from .errors import SandboxError

KEEPALIVE = ["sleep", "infinity"]


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    pids: int = 256
    cpus: float = 1.0
    nofile: int = 1024
    nproc: int = 1024
    network: str = "none"

    def create_kwargs(self) -> dict:
        period = 100_000
        mem = f"{self.memory_mb}m"
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
            ],
            "init": True,
        }


def start_container(client: PodmanClient, image: str, labels: dict[str, str], limits: Limits,
                    name: str | None = None):
    """Create and start a keep-alive container from image. Returns the container object.

    Uses the create endpoint directly: podman-py's create() inspects the new container once
    more, which costs a round trip on every test run.
    """
    from podman import api
    from podman.errors import ImageNotFound

    manager = client.containers
    payload = {"image": image, "command": list(KEEPALIVE), "labels": labels, "name": name,
               **limits.create_kwargs()}
    body = api.prepare_body(manager._render_payload(payload))
    response = client.api.post("/containers/create", headers={"content-type": "application/json"},
                               data=body)
    response.raise_for_status(not_found=ImageNotFound)
    container = manager.prepare_model({"Id": response.json()["Id"]})
    try:
        container.start()  # no reload: the init pid is looked up only if a kill needs it
    except Exception:
        remove_container(client, container.id)
        raise
    return container


def init_pid(container) -> int | None:
    try:
        return int(container.attrs.get("State", {}).get("Pid") or 0) or None
    except (TypeError, ValueError):
        return None


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


def tar_files(files: dict[str, str | bytes], mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = now
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def put_files(container, files: dict[str, str | bytes], base: str = "/", mode: int = 0o644) -> None:
    """Write files (paths relative to base, or absolute) into the container."""
    if not files:
        return
    rel = {}
    for path, content in files.items():
        if path.startswith("/"):
            rel[path.lstrip("/")] = content
        else:
            rel[f"{base.rstrip('/')}/{path}".lstrip("/")] = content
    if not container.put_archive("/", tar_files(rel, mode)):
        raise SandboxError(f"could not copy {', '.join(sorted(files))} into container "
                           f"{container.id[:12]}")


def get_file(container, path: str, max_bytes: int = 64 * 1024 * 1024) -> bytes:
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


def get_dir(container, path: str, max_bytes: int = 64 * 1024 * 1024) -> dict[str, bytes]:
    """Regular files under a directory in the container, by path relative to it ({} if missing)."""
    try:
        stream, _stat = container.get_archive(path)
    except NotFound:
        return {}
    data = bytearray()
    for chunk in stream:
        data += chunk
        if len(data) > max_bytes + 1024 * 1024:
            raise SandboxError(f"{path} is larger than {max_bytes} bytes")
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        for member in tar:
            if member.isfile():
                fh = tar.extractfile(member)
                rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[rel] = fh.read() if fh else b""
    return files
