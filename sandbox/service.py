"""The podman API service we talk to.

When the user configured a socket (CONTAINER_HOST, or `[podman] socket` in our config) we use
it. Otherwise we start our own `podman system service` child on a private socket, with our own
containers.conf, in its own session and a scratch cwd (conmon drops an `oom` marker file into
the service's cwd), and stop it on exit. Owned services are registered in a run directory, so
a later process can stop the service of a crashed one.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from podman import PodmanClient

from .errors import SandboxError
from .labels import process_alive, process_start_time
from .podman_conf import podman_env


def _run_root() -> Path:
    # Short and per user: unix socket paths are limited to 108 bytes.
    root = Path(tempfile.gettempdir()) / f"testjack-svc-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def configured_socket() -> str | None:
    """The user's podman service URL, if one is configured."""
    host = os.environ.get("CONTAINER_HOST") or os.environ.get("TESTJACK_PODMAN_SOCKET")
    if host:
        return host if "://" in host else f"unix://{host}"
    # Our config file may name one: [podman] socket = "unix:///run/user/1000/podman/podman.sock"
    try:
        import tomllib

        from testjack_tui.paths import config_dir
        path = config_dir() / "config.toml"
        if path.exists():
            sock = (tomllib.loads(path.read_text()).get("podman") or {}).get("socket")
            if sock:
                return sock if "://" in sock else f"unix://{sock}"
    except (OSError, ValueError):  # an unreadable config is reported by the config module
        pass
    return None


def started_by_us(url: str) -> bool:
    """A service one of our processes started (registered in our run directory; a test session
    shares one this way): it serves this machine's storage with our containers.conf, so podman CLI
    calls reach the same containers and images without going through it."""
    path = Path(url.removeprefix("unix://"))
    return path.parent.parent == _run_root() and (path.parent / "owner.json").is_file()


def reap_orphan_services() -> int:
    """Stop services started by processes that no longer exist. Returns how many."""
    count = 0
    for owner_file in _run_root().glob("*/owner.json"):
        try:
            info = json.loads(owner_file.read_text())
        except (OSError, ValueError):
            continue
        if process_alive(int(info.get("owner_pid", 0)), info.get("owner_start", "")):
            continue
        svc = int(info.get("service_pid", 0))
        if svc and process_alive(svc, info.get("service_start", "")) and _is_podman_service(svc):
            try:
                os.killpg(svc, signal.SIGTERM)
            except OSError:
                pass
            count += 1
        shutil.rmtree(owner_file.parent, ignore_errors=True)
    return count


def _is_podman_service(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(part.endswith(b"podman") for part in cmdline) and b"service" in cmdline


class PodmanService:
    """A podman API endpoint: the user's, or a child we own."""

    def __init__(self, url: str | None = None):
        self.url = url or configured_socket()
        self.owned = self.url is None
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: Path | None = None
        self._local = threading.local()
        self._clients: list[PodmanClient] = []
        self._lock = threading.Lock()

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 20.0) -> "PodmanService":
        if not self.owned:
            self._wait_ping(timeout, what=f"podman service at {self.url}")
            return self
        if shutil.which("podman") is None:
            raise SandboxError("podman is not installed (apt-get install -y podman runc)")
        reap_orphan_services()
        self._dir = Path(tempfile.mkdtemp(prefix="s-", dir=_run_root()))
        sock = self._dir / "podman.sock"
        scratch = self._dir / "cwd"
        scratch.mkdir()
        self.url = f"unix://{sock}"
        log = open(self._dir / "service.log", "wb")
        self._proc = subprocess.Popen(
            ["podman", "system", "service", "--time=0", self.url],
            cwd=scratch, env=podman_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )
        log.close()
        (self._dir / "owner.json").write_text(json.dumps({
            "owner_pid": os.getpid(), "owner_start": process_start_time(os.getpid()),
            "service_pid": self._proc.pid, "service_start": process_start_time(self._proc.pid),
        }))
        try:
            self._wait_ping(timeout, what="our podman service")
        except SandboxError:
            self.stop()
            raise
        return self

    def _wait_ping(self, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                last = self._service_log()
                break
            try:
                with PodmanClient(base_url=self.url) as probe:
                    if probe.ping():
                        return
            except Exception as exc:  # not listening yet
                last = str(exc)
            time.sleep(0.05)
        raise SandboxError(f"{what} did not answer: {last.strip()[-300:]}")

    def _service_log(self) -> str:
        try:
            return (self._dir / "service.log").read_text(errors="replace") if self._dir else ""
        except OSError:
            return ""

    def stop(self) -> None:
        with self._lock:
            for client in self._clients:
                try:
                    client.close()
                except Exception:
                    pass
            self._clients.clear()
        self._local = threading.local()
        if self._proc is not None:
            if self._proc.poll() is None:
                try:
                    os.killpg(self._proc.pid, signal.SIGTERM)
                except OSError:
                    pass
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self._proc.pid, signal.SIGKILL)
                    self._proc.wait(timeout=5)
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def owned_pid(self) -> int | None:
        """The pid (and process group) of the service we started, None for the user's."""
        return self._proc.pid if self._proc is not None else None

    # --- clients ---------------------------------------------------------------------------
    def client(self) -> PodmanClient:
        """A client for the calling thread (requests sessions are not shared across threads)."""
        client = getattr(self._local, "client", None)
        if client is None:
            if self.url is None:
                raise SandboxError("the podman service is not started")
            client = PodmanClient(base_url=self.url, timeout=None)
            self._local.client = client
            with self._lock:
                self._clients.append(client)
        return client

    def cli_env(self) -> dict[str, str]:
        """Environment for podman CLI calls that must reach the same storage/service."""
        env = podman_env()
        if not self.owned and self.url and not started_by_us(self.url):
            env["CONTAINER_HOST"] = self.url
        return env
