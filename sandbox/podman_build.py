"""`podman build` for every image the sandbox builds (task environments, toolchains): labelled as
ours, bounded in time, retried when a package registry failed it for a moment, and failing with
one line that names what was built and the build's last lines."""
from __future__ import annotations

import re
import subprocess
import sys

from .errors import SandboxError
from .labels import APP, L_APP

BUILD_TIMEOUT = 1800
BUILD_ATTEMPTS = 3

# A registry or mirror that answers wrongly for a moment fails a build that passes a minute later
# (seen here: npm answering `notarget` for jest 29.7.0, then serving it). Only these lines earn a
# retry: a build that fails on its own steps fails at once.
TRANSIENT = re.compile(
    r"npm ERR! (?:code )?(?:notarget|ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN|ENOTFOUND|E5\d\d)"
    r"|npm ERR! network|socket hang up"
    r"|Temporary failure (?:resolving|in name resolution)|Hash Sum mismatch|Failed to fetch http"
    r"|Read timed out|Connection reset by peer|ConnectionResetError|IncompleteRead"
    r"|spurious network error|failed to download from|TLS handshake timeout|i/o timeout"
    r"|unexpected EOF|503 Service Unavailable|502 Bad Gateway")


def transient_failure(output: str) -> bool:
    """Whether a failed build's output says a registry or the network failed it, not its steps."""
    return TRANSIENT.search(output) is not None


def podman_build(what: str, args: list[str], env: dict[str, str]) -> None:
    """Run `podman build --label testjack.app=... ARGS`; SandboxError naming `what` on failure."""
    argv = ["podman", "build", "--label", f"{L_APP}={APP}", *args]
    for attempt in range(1, BUILD_ATTEMPTS + 1):
        try:
            res = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise SandboxError(f"{what}: podman build timed out") from exc
        if res.returncode == 0:
            return
        output = res.stdout.decode(errors="replace")
        tail = output.strip().splitlines()[-5:]
        if attempt < BUILD_ATTEMPTS and transient_failure(output):
            print(f"testjack: {what}: a registry failed the build for a moment; "
                  f"building again ({attempt + 1} of {BUILD_ATTEMPTS})", file=sys.stderr)
            continue
        tries = f" ({attempt} attempts; a registry kept failing it)" if attempt > 1 else ""
        raise SandboxError(f"{what}: podman build failed{tries}: " + " | ".join(tail))
