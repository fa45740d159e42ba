"""`podman build` for every image the sandbox builds (task environments, toolchains): labelled as
ours, bounded in time, and failing with one line that names what was built and the build's last
lines."""
from __future__ import annotations

import subprocess

from .errors import SandboxError
from .labels import APP, L_APP

BUILD_TIMEOUT = 1800


def podman_build(what: str, args: list[str], env: dict[str, str]) -> None:
    """Run `podman build --label testjack.app=... ARGS`; SandboxError naming `what` on failure."""
    argv = ["podman", "build", "--label", f"{L_APP}={APP}", *args]
    try:
        res = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"{what}: podman build timed out") from exc
    if res.returncode != 0:
        tail = res.stdout.decode(errors="replace").strip().splitlines()[-5:]
        raise SandboxError(f"{what}: podman build failed: " + " | ".join(tail))
