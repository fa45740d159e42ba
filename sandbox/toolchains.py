"""Toolchain images: the base image plus a language toolchain from Debian packages.

`localhost/testjack-toolchain-go:bookworm` (golang-go), `-node` (nodejs, npm) and `-rust`
(rustc, cargo) are built FROM our base image with `apt-get install`, the only build step that
needs the network (Debian's mirror). Each carries the hash of its recipe and of the base image
it was built on, so a second call builds nothing and a rebuilt base rebuilds them. A task's
Containerfile that starts FROM one of them gets it built first (sandbox/images.py).
"""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Callable

from . import base_image, machine_lock
from .errors import SandboxError
from .podman_build import podman_build
from .podman_conf import podman, podman_env

PACKAGES: dict[str, tuple[str, ...]] = {
    "go": ("golang-go",),
    "node": ("nodejs", "npm"),
    "rust": ("rustc", "cargo"),
}
# Which toolchain a task language needs.
LANGUAGE_TOOLCHAIN = {"go": "go", "javascript": "node", "typescript": "node", "rust": "rust"}
L_RECIPE = "testjack.recipe"


def image_name(toolchain: str) -> str:
    return f"localhost/testjack-toolchain-{toolchain}:bookworm"


def _containerfile(toolchain: str) -> str:
    packages = " ".join(PACKAGES[toolchain])
    return (f"FROM {base_image.BASE_IMAGE}\n"
            "RUN apt-get update -q \\\n"
            f" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends {packages} \\\n"
            " && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
            # No module proxy, no telemetry, no toolchain downloads: worlds have no network.
            "ENV GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0 "
            "CARGO_NET_OFFLINE=true npm_config_audit=false npm_config_fund=false\n")


def recipe_hash(toolchain: str) -> str:
    base_id = _image_id(base_image.BASE_IMAGE) or ""
    return hashlib.sha256((_containerfile(toolchain) + "\0" + base_id).encode()).hexdigest()[:16]


def _image_id(name: str) -> str | None:
    res = podman("image", "inspect", "--format", "{{.Id}}", name, check=False)
    return res.stdout.decode().strip() or None if res.returncode == 0 else None


def ready(toolchain: str) -> bool:
    res = podman("image", "inspect", "--format", "{{index .Labels \"%s\"}}" % L_RECIPE,
                 image_name(toolchain), check=False)
    return res.returncode == 0 and res.stdout.decode().strip() == recipe_hash(toolchain)


def build(toolchain: str, log: Callable[[str], None] = lambda m: None) -> str:
    """Build the toolchain image unless the cached one matches its recipe. Returns its name."""
    if toolchain not in PACKAGES:
        raise SandboxError(f"no toolchain image for {toolchain!r} (known: {', '.join(PACKAGES)})")
    if not base_image.base_image_ready():
        log(f"building the base image {base_image.BASE_IMAGE}")
        base_image.build_base_image(log=log)
    if ready(toolchain):
        return image_name(toolchain)
    name = image_name(toolchain)
    with machine_lock.held(f"toolchain:{name}"):  # a parallel process may be building it
        if ready(toolchain):
            return name
        log(f"building {name}: apt-get install {' '.join(PACKAGES[toolchain])} (a few minutes)")
        with tempfile.TemporaryDirectory(prefix="testjack-toolchain-") as tmp:
            recipe = _containerfile(toolchain)
            (Path(tmp) / "Containerfile").write_text(recipe)
            podman_build(name, ["--label", f"{L_RECIPE}={recipe_hash(toolchain)}", "-t", name, tmp],
                         podman_env())
    return name


def named_in(containerfile_text: str) -> list[str]:
    """Toolchains whose image a Containerfile builds on."""
    return [t for t in PACKAGES if image_name(t).split(":")[0] in containerfile_text]


if __name__ == "__main__":
    import sys
    for arg in sys.argv[1:] or list(PACKAGES):
        print(build(arg, log=print))
