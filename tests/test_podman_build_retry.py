"""A build that a package registry failed for a moment is built again; one that fails on its own
steps fails at once, naming the Containerfile (real podman builds on our base image)."""
from __future__ import annotations

import os

import pytest

from testjack_tui.errors import SandboxError
from testjack_tui.sandbox.base_image import BASE_IMAGE
from testjack_tui.sandbox.podman_build import BUILD_ATTEMPTS, podman_build, transient_failure


@pytest.mark.parametrize("line", [
    "npm ERR! code notarget", "npm ERR! code ETIMEDOUT", "npm ERR! network request failed",
    "E: Failed to fetch http://deb.debian.org/debian/pool/main/x.deb  Hash Sum mismatch",
    "warning: spurious network error (2 tries remaining): [28] Timeout was reached",
    "ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out.",
    "go: github.com/x/y@v1.0.0: Get \"https://proxy.golang.org/...\": dial tcp: i/o timeout",
])
def test_registry_hiccups_are_transient(line):
    assert transient_failure(f"STEP 3/4: RUN install\n{line}\nError: building at STEP")


@pytest.mark.parametrize("line", [
    "npm ERR! code ERESOLVE", "error[E0425]: cannot find value `x` in this scope",
    "ModuleNotFoundError: No module named 'foo'", "/bin/sh: 1: false: not found", "exit status 1",
])
def test_a_build_failing_on_its_own_steps_is_not_transient(line):
    assert not transient_failure(f"STEP 3/4: RUN make\n{line}\nError: building at STEP")


def _build(tmp_path, run_line: str) -> None:
    (tmp_path / "Containerfile").write_text(f"FROM {BASE_IMAGE}\nRUN {run_line}\n")
    podman_build("Containerfile", ["--network=none", "-f", str(tmp_path / "Containerfile"),
                                   "-t", "localhost/testjack-retry-probe:never", str(tmp_path)], dict(os.environ))


@pytest.mark.podman
def test_a_registry_failure_is_built_again_then_reported_with_its_attempts(tmp_path, podman_calls):
    with pytest.raises(SandboxError) as err:
        _build(tmp_path, "echo 'npm ERR! code notarget' && false")
    builds = [c for c in podman_calls() if c.startswith("build ")]
    assert len(builds) == BUILD_ATTEMPTS
    assert f"({BUILD_ATTEMPTS} attempts; a registry kept failing it)" in str(err.value)
    assert str(err.value).startswith("Containerfile: podman build failed")


@pytest.mark.podman
def test_a_failing_step_is_built_once(tmp_path, podman_calls):
    with pytest.raises(SandboxError) as err:
        _build(tmp_path, "echo 'cc: error: no such file' && false")
    assert len([c for c in podman_calls() if c.startswith("build ")]) == 1
    assert "attempts" not in str(err.value) and "no such file" in str(err.value)
