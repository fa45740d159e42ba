"""Worlds, test runs and execs against real podman, on a tiny task built in the test."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from testjack_tui.sandbox import Limits, PatchError, Sandbox
from testjack_tui.sandbox.labels import APP_FILTER, L_PID
from testjack_tui.sandbox.selftest import F2P, FIXED_CALC, P2P, tiny_task, trial_for

pytestmark = pytest.mark.podman

T0 = list(F2P + P2P)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return tiny_task(tmp_path_factory.mktemp("tiny"))


def podman_ids(*filters: str) -> list[str]:
    args = ["podman", "ps", "-aq"] + [a for f in filters for a in ("--filter", f)]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()


async def test_t0_outcomes_on_null_and_reference_worlds(task):
    async with Sandbox(session="t-worlds") as sb:
        null = await sb.prepare(task, "null")
        ref = await sb.prepare(task, "reference")
        assert null.kind == "null" and ref.kind == "reference" and null.image != ref.image
        assert ref.applied_with == "git apply" and ref.workdir == "/app"
        ids = T0 + ["tests/test_add.py::test_missing", "tests/test_nofile.py::test_x"]
        on_null = await sb.run_tests(null, ids)
        on_ref = await sb.run_tests(ref, ids)
    assert {i: on_null.status(i) for i in T0} == {F2P[0]: "failed", F2P[1]: "failed", P2P[0]: "passed"}
    assert all(on_ref.status(i) == "passed" for i in T0)
    assert "assert" in on_null.outcomes[F2P[0]].message
    for run in (on_null, on_ref):
        assert run.status("tests/test_add.py::test_missing") == "not_found"
        assert run.status("tests/test_nofile.py::test_x") == "not_found"


async def test_second_prepare_builds_nothing_even_in_a_new_process_state(task, podman_calls):
    async with Sandbox(session="t-cache") as sb:
        first = await sb.prepare(task, "reference")
    events = []
    async with Sandbox(listener=events.append, session="t-cache2") as sb:
        before = len(podman_calls())
        again = await sb.prepare(task, "reference")
        calls = podman_calls()[before:]
    assert again == first
    assert not [e for e in events if e.kind == "created"]  # found by its tag: no container started
    # Cached: the base image's id and recipe in one inspect, the env image's and the world's by
    # their tags; nothing built, nothing run.
    assert len(calls) <= 3 and all(c.startswith("image inspect") for c in calls), calls


async def test_patch_that_does_not_apply_is_a_patch_error(task):
    trial = trial_for(task, "broken", {"calc/__init__.py": FIXED_CALC})
    trial.patch = trial.patch.replace("def sub(a, b):", "def subtract(a, b):")
    async with Sandbox(session="t-patch") as sb:
        with pytest.raises(PatchError) as info:
            await sb.prepare(task, "model", trial)
    err = info.value
    assert err.world_name == "tiny/model/broken" and err.stage == "trial patch"
    assert not err.result.applied and err.result.method == ""
    assert "calc/__init__.py" in err.result.message


async def test_whitespace_damaged_patch_applies_with_a_fallback(task):
    trial = trial_for(task, "ws", {"calc/__init__.py": FIXED_CALC})
    # A context line with changed inner spacing: plain `git apply` refuses, the fallback accepts.
    trial.patch = trial.patch.replace(" def sub(a, b):", " def  sub(a,  b):")
    async with Sandbox(session="t-ws") as sb:
        world = await sb.prepare(task, "model", trial)
        run = await sb.run_tests(world, T0)
    assert world.applied_with == "git apply --ignore-whitespace"
    assert run.all_passed


async def test_timeout_gives_timed_out_and_keeps_finished_outcomes(task):
    slow = ("import time\n\ndef test_fast():\n    assert True\n\n"
            "def test_slow():\n    time.sleep(600)\n")
    async with Sandbox(session="t-timeout") as sb:
        ref = await sb.prepare(task, "reference")
        run = await sb.run_tests(ref, ["tests/test_tj_slow.py::test_fast", "tests/test_tj_slow.py::test_slow"],
                                 files={"tests/test_tj_slow.py": slow}, timeout=4)
    assert run.exec.timed_out and run.exec.exit_code is None
    assert run.status("tests/test_tj_slow.py::test_fast") == "passed"
    assert run.status("tests/test_tj_slow.py::test_slow") == "timed_out"


async def test_file_ids_candidates_and_batched_witnesses_in_one_process(task):
    a = "from calc import add\n\ndef test_neg():\n    assert add(-1, -1) == -2\n"
    b = ("import pytest\nfrom calc import add\n\n@pytest.mark.parametrize('x', [1, 2.5])\n"
         "def test_param(x):\n    assert add(x, 0) == x\n")
    files = {"tests/test_tj_a.py": a, "tests/test_tj_b.py": b}
    async with Sandbox(session="t-batch") as sb:
        null = await sb.prepare(task, "null")
        ref = await sb.prepare(task, "reference")
        on_ref = await sb.run_tests(ref, ["tests/test_tj_a.py", "tests/test_tj_b.py::test_param"], files=files)
        on_null = await sb.run_tests(null, ["tests/test_tj_a.py", "tests/test_tj_b.py::test_param"], files=files)
    assert on_ref.status("tests/test_tj_a.py") == "passed"
    assert on_ref.status("tests/test_tj_a.py::test_neg") == "passed"
    assert on_ref.status("tests/test_tj_b.py::test_param[2.5]") == "passed"
    assert on_ref.status("tests/test_tj_b.py::test_param") == "passed"
    assert on_null.status("tests/test_tj_a.py") == "failed"
    assert on_null.status("tests/test_tj_b.py::test_param[1]") == "passed"  # add(x, 0) == x - 0
    assert on_ref.files == files
    # one process: the launcher ran once and both files were collected by it
    assert on_ref.exec.stdout_head.count("TJ_FILES") == 1


async def test_exec_argv_shell_cwd_env_stdin_and_streaming(task, podman_requests):
    sent = podman_requests
    events = []
    async with Sandbox(listener=events.append, session="t-exec") as sb:
        ref = await sb.prepare(task, "reference")
        sent.clear()
        res = await sb.exec(ref, "pwd; echo $GREETING; echo oops >&2; exit 3", env={"GREETING": "hi"})
        assert res.exit_code == 3 and res.stdout_head == "/app\nhi\n" and res.stderr_head == "oops\n"
        res = await sb.exec(ref, ["cat"], stdin="from stdin")
        assert res.output == "from stdin"
        res = await sb.exec(ref, ["pwd"], cwd="calc")
        assert res.stdout_head.strip() == "/app/calc"
        events.clear()
        released = []

        def release_on_first_output(e):
            # The command waits for this go-ahead, sent only once its first line has reached us:
            # unless output streams while the command runs, the run ends by its timeout.
            events.append(e)
            if e.kind == "output" and not released:
                released.append(subprocess.Popen(["podman", "exec", e.container, "touch", "/tmp/tj-go"],
                                                 env=sb.service.cli_env()))
        sb.listener = release_on_first_output
        res = await sb.exec(ref, "echo line1; while [ ! -e /tmp/tj-go ]; do sleep 0.05; done; "
                                 "echo line2; echo line3", timeout=120)
        assert released and released[0].wait(60) == 0
    assert res.exit_code == 0 and not res.timed_out
    outputs = [e.text for e in events if e.kind == "output"]
    assert "".join(outputs) == "line1\nline2\nline3\n"
    # Removal of a finished run's container happens in the background: look at this run's events.
    container = next(e.container for e in events if e.kind == "running")
    kinds = [e.kind for e in events if e.container == container and e.kind != "output"]
    assert kinds == ["created", "running", "exited", "removed"]
    exited = next(e for e in events if e.kind == "exited" and e.container == container)
    assert exited.exit_code == 0 and "line" in exited.command
    # Each command is its fresh container's main process: podman makes no exec for it.
    assert sent and not [r for r in sent if "/exec" in r], [r for r in sent if "/exec" in r]


async def test_exec_timeout_kills_the_tree_and_the_container_survives(task):
    async with Sandbox(session="t-kill") as sb:
        ref = await sb.prepare(task, "reference")
        async with sb.open(ref) as live:
            res = await live.exec("sleep 300 & (sleep 301 &) ; setsid sleep 302 & sleep 303", timeout=1)
            assert res.timed_out and res.exit_code is None
            left = await live.exec("for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done")
            assert left.exit_code == 0
            assert not [line for line in left.stdout_head.splitlines() if line.startswith("sleep 30")]
            again = await live.exec(["echo", "still here"])
            assert again.stdout_head == "still here\n"


async def test_output_is_capped_in_memory_and_on_disk(task):
    async with Sandbox(session="t-caps") as sb:
        ref = await sb.prepare(task, "reference")
        res = await sb.exec(ref, "head -c 30000000 /dev/zero | tr '\\0' y", timeout=60)
    assert res.exit_code == 0
    assert len(res.stdout_head) == 64 * 1024
    assert len(res.stdout_tail) < 64 * 1024 + 100 and "bytes not kept" in res.stdout_tail
    assert res.log_path is not None and res.log_path.stat().st_size < 21 * 1024 * 1024


async def test_live_world_files_and_tests(task):
    async with Sandbox(session="t-live") as sb:
        ref = await sb.prepare(task, "reference")
        async with sb.open(ref) as live:
            assert "def add" in await live.read_file("calc/__init__.py")
            await live.write_file("notes/todo.txt", "remember\n")
            assert await live.read_file("/app/notes/todo.txt") == "remember\n"
            entries = await live.list_files(".")
            assert "calc/" in entries and "notes/" in entries and "setup.cfg" in entries
            with pytest.raises(FileNotFoundError):
                await live.read_file("nope.txt")
            with pytest.raises(FileNotFoundError):
                await live.list_files("nope")
            run = await live.run_tests(["tests/test_tj_live.py::test_live"], files={
                "tests/test_tj_live.py": "from calc import add\n\ndef test_live():\n    assert add(1, 2) == 3\n"})
            assert run.all_passed
            # the file stays in the live container for the next command
            res = await live.exec(["test", "-f", "tests/test_tj_live.py"])
            assert res.exit_code == 0


async def test_isolate_harness_neutralises_a_conftest_that_passes_everything(task):
    hook = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
            "    report = outcome.get_result()\n    report.outcome = 'passed'\n")
    trial = trial_for(task, "hook", {"tests/conftest.py": hook})
    witness = {"tests/test_tj_w.py": "from calc import add\n\ndef test_w():\n    assert add(2, 2) == 4\n"}
    async with Sandbox(session="t-iso") as sb:
        world = await sb.prepare(task, "model", trial)
        assert world.tampered == ("tests/conftest.py",)
        fooled = await sb.run_tests(world, ["tests/test_tj_w.py::test_w"], files=witness)
        isolated = await sb.run_tests(world, ["tests/test_tj_w.py::test_w"], files=witness,
                                      isolate_harness=True)
        ref = await sb.prepare(task, "reference")
        on_ref = await sb.run_tests(ref, ["tests/test_tj_w.py::test_w"], files=witness, isolate_harness=True)
    # The hook would fool a plain run: its canaries prove the tampering and void it.
    assert fooled.status("tests/test_tj_w.py::test_w") == "unverifiable" and fooled.canaries == "tampered"
    assert isolated.canaries == "ok"
    assert isolated.status("tests/test_tj_w.py::test_w") == "failed"
    assert isolated.neutralised == ["tests/conftest.py"] and fooled.neutralised == []
    assert on_ref.all_passed and on_ref.neutralised == []


async def test_cancelling_a_run_removes_its_container(task):
    async with Sandbox(session="t-cancel") as sb:
        ref = await sb.prepare(task, "reference")
        job = asyncio.create_task(sb.run_tests(ref, ["tests/test_tj_hang.py::test_hang"], files={
            "tests/test_tj_hang.py": "import time\n\ndef test_hang():\n    time.sleep(600)\n"}, timeout=600))
        ours = f"label=testjack.session={sb.session}"
        for _ in range(600):  # cancelled once its container exists (a hang guard bounds the wait)
            if podman_ids(ours):
                break
            await asyncio.sleep(0.2)
        job.cancel()
        await asyncio.wait([job], timeout=120)  # a hang guard: the cancellation itself must end
        with pytest.raises(asyncio.CancelledError):
            job.result()
        # A container still starting when the run was cancelled is removed as soon as it exists,
        # in the background: its removal is one of the sandbox's pending cleanups.
        await asyncio.gather(*list(sb._cleanups), return_exceptions=True)
        assert podman_ids(ours) == []
        # the sandbox still works after a cancellation
        res = await sb.exec(ref, ["true"])
        assert res.exit_code == 0


async def test_prestarted_containers_wait_idle_and_none_leak_on_cancel_or_error(task):
    hang = {"tests/test_tj_hang.py": "import time\n\ndef test_hang():\n    time.sleep(600)\n"}
    async with Sandbox(session="t-pool", concurrency=1, prestart=1) as sb:
        ref = await sb.prepare(task, "reference")
        ours = f"label=testjack.session={sb.session}"
        jobs = [asyncio.create_task(sb.run_tests(ref, ["tests/test_tj_hang.py::test_hang"], files=hang,
                                                 timeout=600)) for _ in range(3)]
        # One run works, the next one's container is started and waits; the third starts nothing.
        deadline = time.monotonic() + 60
        while len(podman_ids(ours)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.3)
        await asyncio.sleep(1.0)
        running = podman_ids(ours)
        assert len(running) == 2
        # Nothing runs in the waiting container before its turn: its wrapper waits at its gate.
        # Read once the working run has reached its tests: on a loaded machine a container listed
        # a second ago may not be started yet (`podman top` refuses it) or its wrapper not yet at
        # pytest_launch.py (a hang guard bounds the wait).
        deadline = time.monotonic() + 120
        while True:
            tops = [subprocess.run(["podman", "top", cid, "args"], capture_output=True, text=True)
                    for cid in running]
            ready = all(top.returncode == 0 for top in tops) and \
                any("pytest_launch.py" in top.stdout for top in tops)
            if ready or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.3)
        assert sorted(podman_ids(ours)) == sorted(running)  # still these two: the third run starts nothing
        assert sorted("pytest_launch.py" in top.stdout for top in tops) == [False, True], \
            [(top.returncode, top.stdout, top.stderr) for top in tops]
        for job in jobs:
            job.cancel()
        for job in jobs:
            with pytest.raises(asyncio.CancelledError):
                await job
        await asyncio.gather(*list(sb._cleanups), return_exceptions=True)
        assert podman_ids(ours) == []

        def broken(container, handles):
            raise RuntimeError("work failed")
        results = await asyncio.gather(*(sb._with_fresh(ref, broken) for _ in range(3)),
                                       return_exceptions=True)
        assert [type(r) for r in results] == [RuntimeError] * 3
        assert podman_ids(ours) == []


async def test_sweep_removes_leftovers_of_dead_owners_only(task):
    # A container "left by a crashed process": labelled with the pid of a process that has exited.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    base = ["podman", "create", "--label", "testjack.app=testjack-tui", "--label",
            "testjack.session=crashed", "localhost/testjack-base:bookworm", "true"]
    left = subprocess.run(base[:2] + ["--label", f"{L_PID}={dead.pid}"] + base[2:],
                          capture_output=True, text=True, check=True).stdout.strip()
    alive = subprocess.run(base[:2] + ["--label", f"{L_PID}=1"] + base[2:],  # pid 1 never dies
                           capture_output=True, text=True, check=True).stdout.strip()
    try:
        async with Sandbox(session="t-sweep") as sb:
            # Ours swept it, unless a parallel process's start-up sweep (the other podman lane:
            # the same rule) came first; either way it is gone, and the live owner's is not.
            assert left in sb.swept_at_start or left[:12] not in [r[:12] for r in podman_ids(APP_FILTER)]
            assert alive not in sb.swept_at_start
        remaining = podman_ids(APP_FILTER)
        assert left[:12] not in [r[:12] for r in remaining]
        assert alive[:12] in [r[:12] for r in remaining]
    finally:
        for cid in (left, alive):  # one by one: a missing id makes `podman rm` skip the rest
            subprocess.run(["podman", "rm", "-f", cid], capture_output=True)
        assert alive[:12] not in [r[:12] for r in podman_ids(APP_FILTER)]


async def test_a_container_started_by_hand_from_one_of_our_images_is_not_swept(task):
    """A maintainer re-runs a witness with `podman run` of the task's environment image: that
    container inherits the image's app label but is theirs, so no session may remove it."""
    async with Sandbox(session="t-by-hand-1") as sb:
        image = await sb.env_image(task)
    from testjack_tui.sandbox.podman_conf import podman

    # As the README's re-run command does it: our containers.conf, the image, a command.
    by_hand = podman("run", "-d", "--rm", image, "sleep", "60").stdout.decode().strip()
    try:
        labels = subprocess.run(["podman", "inspect", "--format", "{{json .Config.Labels}}", by_hand],
                                capture_output=True, text=True, check=True).stdout
        assert "testjack.app" in labels  # inherited from the image: the case this guards
        async with Sandbox(session="t-by-hand-2") as sb:
            assert by_hand not in sb.swept_at_start
        state = subprocess.run(["podman", "inspect", "--format", "{{.State.Status}}", by_hand],
                               capture_output=True, text=True)
        assert state.stdout.strip() == "running", state.stdout + state.stderr
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", by_hand], capture_output=True)


async def test_limits_are_applied_to_world_containers(task):
    async with Sandbox(session="t-limits", limits=Limits(memory_mb=128, pids=32, cpus=0.5)) as sb:
        ref = await sb.prepare(task, "reference")
        res = await sb.exec(ref, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || "
                                 "cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null "
                                 "|| cat /sys/fs/cgroup/pids.max; ls /sys/class/net; ulimit -n")
    assert res.stdout_head.split() == [str(128 * 1024 * 1024), "32", "lo", "1024"]


def test_no_container_of_this_process_is_left():
    assert podman_ids(f"label={L_PID}={__import__('os').getpid()}") == []


@pytest.fixture(scope="module")
def fresh_task(tmp_path_factory):
    """A tiny task with a 3 MB file, on an environment image of its own (a fresh tag): its world
    base is built in this module, by the code under test, not found from an earlier run. The
    snapshot-size and the bytecode claims read the same base (one build, not two)."""
    import secrets

    from testjack_tui.sandbox.selftest import BASE_FILES

    files = {**BASE_FILES, "data/blob.txt": secrets.token_hex(1_500_000)}  # 3 MB
    return tiny_task(tmp_path_factory.mktemp("fresh"), task_id="fresh-repo", files=files, tag=secrets.token_hex(4))


async def test_a_trial_snapshot_holds_the_files_its_patch_changed_not_a_copy_of_the_repo(fresh_task):
    """The repo belongs to the trial user from the world's base image on: a snapshot's own layer
    is about the size of what its patches wrote, not the 3 MB file they never touched."""
    from testjack_tui.sandbox.podman_conf import podman

    big = fresh_task
    trial = trial_for(big, "fresh-repo__a__1", {"calc/__init__.py": FIXED_CALC})
    async with Sandbox(session="t-snapshot-size") as sb:
        world = await sb.prepare(big, "model", trial)
        base, _ = await sb._world_base(big)
        run = await sb.run_tests(world, list(F2P))

    def size(image: str) -> int:
        return int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.decode().strip())

    added = size(world.image) - size(base)
    assert world.user == "10001:10001"
    assert 0 < added < 512 * 1024, added  # the blob alone is 3 MB
    assert run.status(F2P[0]) == "passed", run.exec.output[-1500:]  # the trial user can run it


async def test_the_repo_bytecode_is_compiled_once_and_a_patched_module_still_wins(fresh_task):
    """A world's base holds the repository's bytecode, so runs do not compile it again; the trial's
    patch keeps calc/__init__.py's size (a - b -> a + b), and the patched source still runs."""
    from testjack_tui.sandbox.selftest import BASE_FILES

    assert len(FIXED_CALC) == len(BASE_FILES["calc/__init__.py"])
    task = fresh_task
    trial = trial_for(task, "fresh-repo__b__1", {"calc/__init__.py": FIXED_CALC})
    async with Sandbox(session="t-bytecode") as sb:
        null = await sb.prepare(task, "null")
        world = await sb.prepare(task, "model", trial)
        cached = await sb.exec(null, "ls calc/__pycache__ tests/__pycache__")
        on_null = await sb.run_tests(null, list(F2P))
        on_trial = await sb.run_tests(world, list(F2P))
        status = await sb.exec(world, ["git", "status", "--porcelain"])
    assert cached.exit_code == 0 and "__init__.cpython-" in cached.stdout_head, cached.output
    assert on_null.status(F2P[0]) == "failed" and on_trial.status(F2P[0]) == "passed"
    assert "__pycache__" not in status.stdout_head and "calc/__init__.py" in status.stdout_head, status.output
