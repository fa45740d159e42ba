"""The task's environment image R: built from a Containerfile (cached by content hash) or named.

A Containerfile build is tagged `localhost/testjack-env-<name>:<hash of the context>`, so a
second run finds the tag and builds nothing; the name the task gives the image is never tagged
(a user's image of that name stays where it was). Builds run with `--network=none` unless the manifest's `[[images]]` entry sets
`build_network = true` (a repo whose dependencies come from a registry such as npm). A
Containerfile that starts FROM our base image gets the base built first, and one FROM a
toolchain image (sandbox/toolchains.py: Go, Node, Rust from Debian packages) gets that first.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

from testjack_tui.model import Environment

from . import base_image, machine_lock, toolchains
from .containers import ClientFactory
from .errors import SandboxError
from .labels import slug
from .podman_build import BUILD_TIMEOUT, podman_build
from .podman_conf import podman_env

HOST_CA = "/etc/ssl/certs/ca-certificates.crt"


def context_hash(containerfile: Path, context: Path, extra: str = "") -> str:
    """Hash of the Containerfile and every file of the context (paths, modes, contents)."""
    digest = hashlib.sha256()
    digest.update(b"containerfile\0" + containerfile.read_bytes() + b"\0")
    digest.update(extra.encode() + b"\0")
    for root, dirs, files in os.walk(context):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(context).as_posix()
            digest.update(rel.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode() + b"\0")
                continue
            digest.update(oct(path.stat().st_mode & 0o777).encode() + b"\0")
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
    return digest.hexdigest()


# An image's inspect record by name (None when there is no such image).
ImageRecords = Callable[[str], "dict[str, Any] | None"]


def _image_id(name: str, env: dict[str, str]) -> str | None:
    res = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", name], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if res.returncode != 0:
        return None
    return res.stdout.decode().strip() or None


def api_images(client_factory: ClientFactory) -> ImageRecords:
    """Image records through the podman service the Sandbox already talks to: one HTTP round
    trip instead of a podman CLI process (~0.3 s each, three per Sandbox start). Same ids."""
    def record(name: str) -> dict[str, Any] | None:
        response = client_factory().api.get(f"/images/{name}/json")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        found: dict[str, Any] = response.json()
        return found
    return record


def api_image_id(client_factory: ClientFactory) -> Callable[[str], str | None]:
    records = api_images(client_factory)
    return lambda name: ((records(name) or {}).get("Id") or None)


def _uses_base(containerfile: Path) -> bool:
    return base_image.BASE_IMAGE.split(":")[0] in containerfile.read_text(errors="replace")


def env_image_tag(environment: Environment, parent: str = "", base_id: str | None = None) -> str | None:
    """The content-hash tag a Containerfile environment builds to (None for named images).
    base_id: the base image's id when the caller has it (else it is looked up)."""
    if environment.containerfile is None:
        return None
    containerfile = Path(environment.containerfile)
    context = Path(environment.context or containerfile.parent)
    name = environment.image.split("/")[-1].split(":")[0] if environment.image else context.name
    # A rebuilt base image changes what FROM means: include its id when it is ours.
    extra = parent  # the id of the image it starts FROM, when the caller knows it
    if _uses_base(containerfile):
        extra += base_id if base_id is not None else (_image_id(base_image.BASE_IMAGE, podman_env()) or "")
    for toolchain in toolchains.named_in(containerfile.read_text(errors="replace")):
        extra += "|" + (_image_id(toolchains.image_name(toolchain), podman_env()) or toolchain)
    digest = context_hash(containerfile, context, extra)[:16]
    return f"localhost/testjack-env-{slug(name, 40)}:{digest}"


def ensure_env_image(environment: Environment, cli_env: dict[str, str] | None = None,
                     log: Callable[[str], None] = lambda msg: None, parent: str = "",
                     images: ImageRecords | None = None) -> str:
    """Return a local image for the environment, building or pulling it when needed."""
    return resolve_env_image(environment, cli_env, log, parent, images)[0]


def resolve_env_image(environment: Environment, cli_env: dict[str, str] | None = None,
                      log: Callable[[str], None] = lambda msg: None, parent: str = "",
                      images: ImageRecords | None = None) -> tuple[str, str | None]:
    """(image, its id) for the environment, building or pulling it when needed. A cached image
    is inspected once: its id comes with the answer. `images`: how to read an image's record
    (the Sandbox's API client); without it, the podman CLI."""
    env = cli_env or podman_env()

    def image_id(name: str) -> str | None:
        if images is None:
            return _image_id(name, env)
        return (images(name) or {}).get("Id") or None

    if environment.containerfile is not None:
        containerfile = Path(environment.containerfile)
        if not containerfile.is_file():
            raise SandboxError(f"{containerfile}: Containerfile not found")
        context = Path(environment.context or containerfile.parent)
        base_id = None
        if _uses_base(containerfile):
            base_id = base_image.base_image_id(images)
            if base_id is None:
                log(f"building the base image {base_image.BASE_IMAGE}")
                base_image.build_base_image(log=log)
                base_id = image_id(base_image.BASE_IMAGE) or ""
        for toolchain in toolchains.named_in(containerfile.read_text(errors="replace")):
            toolchains.build(toolchain, log=log)  # cached by recipe hash
        tag = env_image_tag(environment, parent, base_id)
        assert tag is not None  # a Containerfile environment always has one
        if cached := image_id(tag):
            return tag, cached
        # Machine-wide: another process (a second session, a parallel test worker) may be
        # building this very tag; the second one waits and finds it built.
        with machine_lock.held(f"env-image:{tag}"):
            if cached := image_id(tag):
                return tag, cached
            return _build_env_image(environment, containerfile, context, tag, parent, env, log, image_id)
    if environment.image:
        if cached := image_id(environment.image):
            return environment.image, cached
        log(f"pulling {environment.image}")
        res = subprocess.run(["podman", "pull", "-q", environment.image], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=BUILD_TIMEOUT)
        if res.returncode != 0:
            msg = res.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise SandboxError(f"image {environment.image} is not present and could not be pulled: "
                               + " ".join(msg))
        return environment.image, image_id(environment.image)
    raise SandboxError("the task's environment names neither an image nor a Containerfile")


def _build_env_image(environment: Environment, containerfile: Path, context: Path, tag: str, parent: str,
                     env: dict[str, str], log: Callable[[str], None],
                     image_id: Callable[[str], str | None]) -> tuple[str, str | None]:
    log(f"building {tag} from {containerfile}")
    network = ["--network=none"]
    if environment.build_network:
        # The host's trust store for the build's RUN steps, so a registry reached through
        # the host's (possibly intercepting) proxy verifies as it does on the host.
        network = [f"--volume={HOST_CA}:{HOST_CA}:ro"] if os.path.isfile(HOST_CA) else []
    # Only our own content-hash tag: the name the task gives (`[[images]] name`, e.g. the
    # user's `localhost/swe-flask-5014:1`) is never moved to what we built. A recipe built on
    # top of another image (a separate verifier's tests/Dockerfile on R) gets that image as
    # its first FROM, so it never depends on that name either.
    args = [*network, "-f", str(containerfile), "-t", tag]
    if parent:
        args.append(f"--from={parent}")
    podman_build(str(containerfile), [*args, str(context)], env)
    return tag, image_id(tag)
