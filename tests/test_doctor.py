"""`testjack-tui doctor` on this machine (real podman)."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from testjack_tui.sandbox.diagnostics import check_disk, run_checks
from testjack_tui.cli import app

# doctor checks the service and the runtime a plain install starts on its own, not the session's
# shared socket (a configured socket is remote: `podman --runtime` cannot be probed through it).
pytestmark = [pytest.mark.podman, pytest.mark.usefixtures("own_podman_service")]


def test_doctor_passes_names_every_check_and_reports_the_llm_endpoint(monkeypatch):
    # One doctor run (a service, a container, a timed-out exec) serves both: the endpoint is named
    # in its check, and a configured one is no reason not to be ready.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    for name in ("podman", "runtime", "service", "base image", "container", "limits", "exec timeout",
                 "leftovers", "disk", "llm endpoint"):
        assert f"] {name}:" in result.output
    assert "ready: the sandbox can run audits" in result.output
    [endpoint] = [line for line in result.output.splitlines() if "] llm endpoint:" in line]
    assert "127.0.0.1:9" in endpoint, result.output


@pytest.fixture(scope="module")
def quiet_prune(tmp_path_factory):
    """One `doctor --fix --quiet --prune TASK` (a service, a container, a timed-out exec, as every
    doctor run) read by the quiet claim and the prune claim: world snapshots of TASK in this
    home, another task's and another home's are made first (a build each of this home's and the
    other home's, two tags of the first). (result, TASK, the other task, every tag made, this
    home's snapshots left after it)."""
    import uuid

    from testjack_tui.sandbox.base_image import BASE_IMAGE
    from testjack_tui.sandbox.podman_conf import podman
    from testjack_tui.sandbox.prune import world_snapshots
    from testjack_tui.sandbox.worlds import L_HOME, WORLD_REPO, home_id

    folder = tmp_path_factory.mktemp("prune")
    mine = f"prunetest-{uuid.uuid4().hex[:8]}"
    other = f"prunekeep-{uuid.uuid4().hex[:8]}"
    (folder / "Containerfile").write_text(f"FROM {BASE_IMAGE}\n")
    ours, theirs = f"{WORLD_REPO}:{mine}-null-a", f"{WORLD_REPO}:{mine}-foreign"
    tags = [ours, f"{WORLD_REPO}:{mine}-model-b", f"{WORLD_REPO}:{other}-null-a", theirs]
    try:
        with pytest.MonkeyPatch.context() as mp:  # a home of its own: this home's snapshots are the fixture's
            mp.setenv("TESTJACK_HOME", str(folder / "home"))
            mp.delenv("OPENAI_BASE_URL", raising=False)
            mp.delenv("OPENAI_API_KEY", raising=False)
            podman("build", "-q", "--label", f"{L_HOME}={home_id()}", "-t", ours, str(folder))
            podman("build", "-q", "--label", f"{L_HOME}=another-home", "-t", theirs, str(folder))
            for tag in tags[1:3]:
                podman("tag", ours, tag)
            result = CliRunner().invoke(app, ["doctor", "--fix", "--quiet", "--prune", mine])
            left = world_snapshots()
        yield result, mine, other, tags, left
    finally:
        for tag in tags:
            podman("rmi", tag, check=False)


def test_doctor_quiet_prints_only_problems(quiet_prune):
    result = quiet_prune[0]
    assert result.exit_code == 0, result.output
    # Nothing but what --prune did: no check had a problem.
    assert result.output.strip().splitlines() == ["pruned 2 world snapshot(s)"], result.output


def test_doctor_fails_without_podman(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no podman on PATH
    checks = run_checks()
    assert checks[0].name == "podman" and checks[0].status == "fail" and "apt-get" in checks[0].hint
    result = CliRunner().invoke(app, ["doctor", "--quiet"])
    assert result.exit_code == 1
    assert "FAIL] podman" in result.output


def test_disk_check_reads_free_space():
    check = check_disk()
    assert check.status in ("ok", "warn", "fail") and "GiB free" in check.detail


def test_prune_removes_only_the_named_tasks_world_snapshots_of_this_home(quiet_prune):
    from testjack_tui.sandbox.podman_conf import podman
    from testjack_tui.sandbox.worlds import WORLD_REPO

    result, mine, other, tags, left = quiet_prune
    assert "pruned 2 world snapshot(s)" in result.output, result.output
    assert not [n for n in left if mine in n]
    assert f"{WORLD_REPO}:{other}-null-a" in left
    # Another TESTJACK_HOME's snapshot is not ours to prune, whatever its name.
    assert podman("image", "exists", tags[-1], check=False).returncode == 0
