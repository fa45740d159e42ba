"""Images the tool builds get their own tags and never move the user's (issue 36.7): a task
naming `localhost/<name>:1` with a recipe is built under our content-hash tag only, so a user's
image of that name stays where it was; a recipe built on top of R (a separate verifier's
tests/Dockerfile, whose FROM names the task image) gets R as its first FROM. Real podman."""
from __future__ import annotations

import subprocess
import uuid

import pytest

from testjack_tui.model import Environment
from testjack_tui.sandbox import base_image
from testjack_tui.sandbox.images import _image_id, resolve_env_image
from testjack_tui.sandbox.podman_conf import podman_env

# Real podman builds: a podman test (lane "podman", tests/lanes.py), not one of the pure tests the
# queue ends with (`-m "not podman"` selected them).
pytestmark = pytest.mark.podman


def podman(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture
def base_id() -> str:
    found = base_image.base_image_id()
    if found is None:
        base_image.build_base_image()
        found = base_image.base_image_id()
    assert found
    return found


def test_a_built_image_never_takes_the_users_tag(tmp_path, base_id):
    user = f"localhost/tj-user-image-{uuid.uuid4().hex[:8]}:1"
    assert podman("tag", base_image.BASE_IMAGE, user).returncode == 0
    built = None
    try:
        (tmp_path / "Containerfile").write_text(f"FROM {base_image.BASE_IMAGE}\nRUN touch /built-{uuid.uuid4().hex}\n")
        built, built_id = resolve_env_image(Environment(image=user, containerfile=tmp_path / "Containerfile",
                                                        context=tmp_path))
        assert built != user and built.startswith("localhost/testjack-env-")
        assert built_id and built_id != base_id
        assert _image_id(user, podman_env()) == base_id  # the user's name points where it did
    finally:
        podman("rmi", user)
        if built:
            podman("rmi", built)


def test_a_recipe_on_top_of_r_gets_r_as_its_first_from(tmp_path, base_id):
    """tests/Dockerfile says FROM the task's image name; we never tagged that name, and the
    build does not need it: R's id replaces the first FROM."""
    missing = f"localhost/tj-never-tagged-{uuid.uuid4().hex[:8]}:1"
    marker = f"/verifier-{uuid.uuid4().hex}"
    (tmp_path / "Dockerfile").write_text(f"FROM {missing}\nRUN touch {marker}\n")
    built = None
    try:
        built, _ = resolve_env_image(Environment(containerfile=tmp_path / "Dockerfile", context=tmp_path),
                                     parent=base_id)
        assert _image_id(missing, podman_env()) is None
        check = podman("run", "--rm", "--network=none", built, "test", "-f", marker)
        assert check.returncode == 0, check.stderr
    finally:
        if built:
            podman("rmi", built)
