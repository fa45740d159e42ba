"""The local base image: Debian bookworm with python3, pytest, coverage, git and libfaketime.

No registry is needed: debootstrap a rootfs, import it, squash a cleanup layer on top.
Cached by name and recipe hash, so a second call builds nothing.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from typing import Any, Callable
import tempfile
from pathlib import Path

from . import machine_lock
from .errors import SandboxError
from .podman_conf import podman

BASE_IMAGE = "localhost/testjack-base:bookworm"
# libfaketime: the environment-varied replay moves the clock of every runtime that reads it
# through libc (node, cargo's test binaries, C extensions), not only Python's (own_run.FAKETIME_LIB).
PACKAGES = ("python3", "python3-pytest", "python3-coverage", "git", "ca-certificates", "libfaketime")
# Trimmed from the import: caches and docs only make the image bigger.
EXCLUDES = ("./var/cache/apt/archives/*.deb", "./var/lib/apt/lists/*", "./usr/share/doc/*",
            "./usr/share/man/*", "./usr/share/locale/*", "./usr/share/info/*")
RECIPE = "|".join(PACKAGES + EXCLUDES) + "|v2"
RECIPE_HASH = hashlib.sha256(RECIPE.encode()).hexdigest()[:12]


def _mirror() -> str:
    candidates = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in candidates:
        try:
            text = path.read_text()
        except OSError:
            continue
        for match in re.finditer(r"(?:URIs:\s*|^deb\s+(?:\[[^\]]*\]\s+)?)(\S+/debian)/?\s", text, re.M):
            return match.group(1)
    return "http://deb.debian.org/debian"


def image_exists(name: str = BASE_IMAGE) -> bool:
    res = podman("image", "inspect", "--format", "{{index .Labels \"testjack.recipe\"}}", name, check=False)
    return res.returncode == 0


def base_image_id(images: Callable[[str], dict[str, Any] | None] | None = None) -> str | None:
    """The base image's id when it is built from the current recipe, else None (one inspect:
    callers that hash the id need not ask again). `images`: an image-record reader (the
    Sandbox's API client, sandbox/images.py api_images); without it, the podman CLI."""
    if images is not None:
        record = images(BASE_IMAGE) or {}
        found, recipe = record.get("Id") or "", (record.get("Labels") or {}).get("testjack.recipe", "")
        return found if found and recipe == RECIPE_HASH else None
    res = podman("image", "inspect", "--format", "{{.Id}} {{index .Labels \"testjack.recipe\"}}", BASE_IMAGE,
                 check=False)
    image_id, _, recipe = res.stdout.decode().strip().partition(" ")
    return image_id if res.returncode == 0 and image_id and recipe == RECIPE_HASH else None


def base_image_ready() -> bool:
    return base_image_id() is not None


def build_base_image(log: Callable[[str], None] = print) -> str:
    """Build the base image unless the cached one matches the recipe. Returns the image name."""
    if base_image_ready():
        return BASE_IMAGE
    if shutil.which("debootstrap") is None:
        raise SandboxError("base image: debootstrap is not installed: apt-get install -y debootstrap")
    # One tag for every recipe: builders on this machine take turns, the second finds it built.
    with machine_lock.held("base-image"):
        if not base_image_ready():
            try:
                _build(log)
            except subprocess.CalledProcessError as exc:
                raise SandboxError(f"base image: {build_failure(exc)}") from exc
            except OSError as exc:
                raise SandboxError(f"base image: {exc}") from exc
    return BASE_IMAGE


def build_failure(exc: subprocess.CalledProcessError) -> str:
    """One line for a failed build step: the command's name, its status and its last error line
    (a command's whole stderr is the operator's to read in a terminal, not a report line)."""
    cmd = exc.cmd if isinstance(exc.cmd, (list, tuple)) else str(exc.cmd).split()
    name = " ".join(str(part) for part in cmd[:2])
    err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    last = next((line.strip() for line in reversed(err.splitlines()) if line.strip()), "")
    return f"`{name}` exited {exc.returncode}" + (f": {last[:300]}" if last else "")


def _build(log: Callable[[str], None]) -> None:
    with tempfile.TemporaryDirectory(prefix="testjack-base-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        log(f"base image: debootstrap bookworm from {_mirror()} (about a minute)")
        subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES), "bookworm",
             str(rootfs), _mirror()],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        log("base image: importing")
        tar = subprocess.Popen(
            ["tar", "-C", str(rootfs), *[f"--exclude={e}" for e in EXCLUDES], "-c", "."],
            stdout=subprocess.PIPE,
        )
        raw = f"localhost/testjack-base-raw:{RECIPE_HASH}"
        subprocess.run(["podman", "import", "-", raw], stdin=tar.stdout, check=True,
                       stdout=subprocess.DEVNULL, env=_env())
        tar.wait()
        if tar.returncode != 0:
            raise SandboxError("base image: tar of the debootstrap rootfs failed")
        context = Path(tmp) / "ctx"
        context.mkdir()
        (context / "Containerfile").write_text(
            f"FROM {raw}\n"
            f"LABEL testjack.recipe={RECIPE_HASH}\n"
            "ENV PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8\n"
            'CMD ["/bin/bash"]\n'
        )
        log("base image: building")
        podman("build", "--network=none", "-t", BASE_IMAGE, str(context))
        podman("rmi", raw, check=False)


def _env() -> dict[str, str]:
    from .podman_conf import podman_env
    return podman_env()


if __name__ == "__main__":
    print(build_base_image())
