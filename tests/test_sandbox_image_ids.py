"""Image ids come from the podman service's API the Sandbox already talks to, not from podman CLI
processes (each one about 0.3 s, three per Sandbox start before): the same ids, the same world
tags, and no CLI process between a Sandbox's start and a world of a cached task. Real podman."""
from __future__ import annotations

import subprocess

import pytest

from testjack_tui.sandbox import Sandbox, base_image
from testjack_tui.sandbox.images import _image_id, api_image_id, api_images, resolve_env_image
from testjack_tui.sandbox.podman_conf import podman_env
from testjack_tui.sandbox.selftest import tiny_task, trial_for, FIXED_CALC

pytestmark = pytest.mark.podman


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("image-ids"))


def podman_processes(monkeypatch) -> list[list[str]]:
    """Every podman CLI process started from now on (argv)."""
    started: list[list[str]] = []
    real = subprocess.Popen.__init__

    def counted(self, args, *a, **kw):
        argv = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
        if argv and argv[0].rsplit("/", 1)[-1] == "podman":
            started.append(argv)
        return real(self, args, *a, **kw)
    monkeypatch.setattr(subprocess.Popen, "__init__", counted)
    return started


async def test_a_cached_world_is_found_with_no_podman_cli_process_and_the_same_ids(task, monkeypatch):
    trial = trial_for(task, "fixed", {"calc/__init__.py": FIXED_CALC})
    async with Sandbox(session="t-image-ids") as sb:  # builds what is missing (CLI builds allowed)
        first = {kind: await sb.prepare(task, kind, trial if kind == "model" else None)
                 for kind in ("reference", "model")}
        client = sb.service.client
        env = podman_env()
        # The API's answers are the CLI's, byte for byte (they name cached images and worlds).
        for name in (base_image.BASE_IMAGE, first["reference"].image, "localhost/tj-no-such-image:1"):
            assert api_image_id(client)(name) == _image_id(name, env), name
        assert base_image.base_image_id(api_images(client)) == base_image.base_image_id()
        tag, found = resolve_env_image(task.environment, None, lambda m: None, "", api_images(client))
        assert (tag, found) == resolve_env_image(task.environment)

    async with Sandbox(session="t-image-ids") as sb:
        started = podman_processes(monkeypatch)  # after the service is up: the start's own work
        again = {kind: await sb.prepare(task, kind, trial if kind == "model" else None)
                 for kind in ("reference", "model")}
        await sb.verifier_image(task)
    assert [w.image for w in again.values()] == [w.image for w in first.values()]
    assert [argv for argv in started if "system" not in argv] == []  # was 3 `podman image inspect`
