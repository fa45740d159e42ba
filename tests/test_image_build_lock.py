"""Two processes that need the same environment image at once (two sessions, two test workers)
build it once: a machine-wide lock on the image's tag makes the second wait and find it built.
Counted by the podman CLI calls, not by time."""
from __future__ import annotations

import threading
import uuid

import pytest

from testjack_tui.model import Environment
from testjack_tui.sandbox.images import resolve_env_image
from testjack_tui.sandbox.podman_conf import podman

pytestmark = pytest.mark.podman


def test_two_builders_of_one_environment_image_build_it_once(tmp_path, podman_calls):
    context = tmp_path / "env"
    context.mkdir()
    # A recipe no one built before (a fresh tag), whose build takes long enough to overlap.
    (context / "Containerfile").write_text(
        f"FROM localhost/testjack-base:bookworm\nRUN sleep 2 && echo {uuid.uuid4().hex} > /tj-build-lock\n")
    environment = Environment(containerfile=context / "Containerfile", context=context)
    start = threading.Barrier(2, timeout=60)
    results: list[tuple[str, str | None]] = []
    errors: list[BaseException] = []

    def build() -> None:
        try:
            start.wait()
            results.append(resolve_env_image(environment))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(900)  # a hang guard
    try:
        assert not errors, errors
        assert len(results) == 2 and results[0] == results[1] and results[0][1]
        builds = [call for call in podman_calls() if call.startswith("build ")]
        # The environment image once; the base image under it at most once (built only when
        # the cached one is of another recipe).
        assert len([b for b in builds if f"-t {results[0][0]} " in b]) == 1, builds
        assert len([b for b in builds if "-t localhost/testjack-base:" in b]) <= 1, builds
    finally:
        for tag in {tag for tag, _ in results}:
            podman("rmi", "-f", tag, check=False)
