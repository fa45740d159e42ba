"""A base image that cannot be built is one line naming the step, never a traceback: every
command that builds worlds (audit, verify, export's check, doctor --fix) reports SandboxError."""
from __future__ import annotations

import subprocess

import pytest

from testjack_tui.errors import SandboxError
from testjack_tui.sandbox import base_image


@pytest.mark.podman  # base_image_ready() asks podman whether the image is there
def test_a_failed_debootstrap_is_one_line_naming_the_step(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "debootstrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'I: Retrieving InRelease' >&2\n"
                    "echo 'E: Failed getting release file http://mirror.invalid/debian/dists/bookworm/Release' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    # A recipe no image on this machine carries: the cached base image is not "ready" for it.
    monkeypatch.setattr(base_image, "RECIPE_HASH", "0000testfail")
    with pytest.raises(SandboxError) as caught:
        base_image.build_base_image(log=lambda _m: None)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("base image: `")
    assert "debootstrap --variant=minbase` exited 1" in message
    assert message.endswith("E: Failed getting release file http://mirror.invalid/debian/dists/bookworm/Release")


def test_a_failed_step_names_the_command_its_status_and_its_last_error_line():
    exc = subprocess.CalledProcessError(125, ["podman", "build", "--network=none", "-t", "x", "/ctx"],
                                        stderr=b"STEP 1/4: FROM raw\nError: creating build container: no space left\n\n")
    assert base_image.build_failure(exc) == "`podman build` exited 125: Error: creating build container: no space left"
    assert base_image.build_failure(subprocess.CalledProcessError(1, "tar -c .")) == "`tar -c` exited 1"
