"""Canaries in an agent's world, on real podman: a test run there carries canaries (the trial's
code runs in it and could forge reports), but once the run is over nothing of them is left in
the world the agent explores (`git status`, `find`, bytecode), and they still catch a trial that
forges every result."""
from __future__ import annotations

import pytest

from testjack_tui.agents import SandboxTools
from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.selftest import F2P, tiny_task, trial_for
from test_hostile_trials import WITNESS, calc_with, hostile_source

pytestmark = [pytest.mark.podman, pytest.mark.timeout(300)]

STATUS = "git status --porcelain --untracked-files=all"
LIST = "find . -path ./.git -prune -o -print | sort"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("live-canaries"))


def files_of(listing: str) -> set[str]:
    return {line for line in listing.splitlines()[1:] if line.startswith("./")}


async def test_an_agents_world_shows_no_canary_after_its_test_runs(task):
    trial = trial_for(task, "plain", {"calc/__init__.py": calc_with("return a - b")})
    [(path, source)] = WITNESS.items()
    witness = f"{path}::test_add_sums"
    async with Sandbox(session="tj-live-canaries", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        async with SandboxTools(sb, task, trial, {"model": world}) as tools:
            before = files_of(await tools.run("model", LIST))
            status_before = await tools.run("model", STATUS)
            tools.candidates[path] = source
            shown = await tools.run_tests("model", [witness, *F2P], files={path: source})
            after = files_of(await tools.run("model", LIST))
            status = await tools.run("model", STATUS)
            live = tools._live["model"]
            run = await live.run_tests([witness], files={path: source})
    assert f"FAILED    {witness}" in shown and run.canaries == "ok"
    assert run.status(witness) == "failed"
    new = after - before
    # Only the agent's own file and the bytecode of modules it ran; no canary, nowhere.
    assert f"./{path}" in new
    strays = [f for f in new if f != f"./{path}" and "__pycache__" not in f]
    assert strays == [], strays
    modules = {f.rsplit("/", 1)[-1].split(".", 1)[0] for f in new if f.endswith(".pyc")}
    assert modules <= {"test_witness_add", "test_add", "conftest", "__init__"}, modules
    untracked = set(status.splitlines()) - set(status_before.splitlines())
    assert all(path in line or "__pycache__" in line for line in untracked), status


async def test_canaries_in_an_agents_world_still_catch_a_forging_trial(task):
    trial = trial_for(task, "live-hooker", {"calc/__init__.py": calc_with("return 42"),
                                            "conftest.py": hostile_source("conftest_pass_all.py")})
    async with Sandbox(session="tj-live-canaries-hook", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        async with sb.open(world) as live:
            before = await live.exec(["sh", "-c", LIST])
            run = await live.run_tests(list(F2P))
            after = await live.exec(["sh", "-c", LIST])
    assert run.canaries == "tampered"
    assert {run.status(i) for i in F2P} == {"unverifiable"}
    new = files_of("\n" + after.output) - files_of("\n" + before.output)
    assert [f for f in new if "__pycache__" not in f] == []
    assert {f.rsplit("/", 1)[-1].split(".", 1)[0] for f in new if f.endswith(".pyc")} <= {
        "test_add", "conftest", "__init__"}


async def test_a_go_canary_leaves_nothing_in_an_agents_world():
    """go test: the launcher rewrites a canary's package clause (and may move it to its
    package's folder); the file goes all the same, found by its random stem."""
    from test_canaries_langs_podman import FIXTURES, fixture_trial

    task, trial = fixture_trial("golang", "slugify-separators__kestrel__1")
    witness = "underscore_tj_test.go"
    text = (FIXTURES / "golang" / "agent-scripts" / "slugify-separators" / "candidates"
            / "au_underscore_v1.go").read_text()
    test_id = f"{witness}::TestTJSlugifyUnderscore"
    async with Sandbox(session="tj-live-canaries-go", concurrency=1) as sb:
        world = await sb.prepare(task, "model", trial)
        async with sb.open(world) as live:
            before = await live.exec(["sh", "-c", LIST])
            run = await live.run_tests([witness, test_id], files={witness: text}, timeout=120)
            after = await live.exec(["sh", "-c", LIST])
    assert run.canaries == "ok" and run.status(test_id) in ("passed", "failed"), run.tampering
    new = files_of("\n" + after.output) - files_of("\n" + before.output)
    assert new == {f"./{witness}"}, new
