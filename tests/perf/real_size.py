"""10. A task the size of a real one: a generated repository of about 1,000 tests and 50 k lines
with a 600-line patch (built here from generated code, nothing downloaded). Full run only.

10  world build per trial — `Sandbox.prepare` of a fresh model world (container from the task's
    image, patch and T0 applied, committed to a snapshot image) vs the same `git apply` +
    `git commit` of the patch timed inside an already running container of the task's image.
    Median of alternating rounds; target <= 1.5x. Context: a snapshot needs at least a container
    and a commit of it; the row measures that floor (create + start + `commit` + remove of a
    container that runs nothing, through the podman API) and, when floor + git alone is past the
    target, says so with both figures.
10c-10e T0 of this task through the benchmark's own flow (tests/perf/real_size_t0.py).
10b disk per trial snapshot — the bytes the trial's snapshot adds on top of the image it is built
    on, the task's world base (its own layer, `podman image inspect` Size difference) vs the bytes of the files the patch
    changes and the repository's bytes. Target: a trial costs its changed files (plus git's index
    and objects for them, at most 1 MiB more), not a copy of the repository.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path

from .common import fmt_s, median, ratio, row

MODULES, FUNCS, TEST_FILES, TESTS_PER_FILE = 50, 36, 50, 20
PATCH_MODULES, PATCH_FUNCS = 5, 3  # about 600 patch lines
BUILD_TARGET = 1.5
SLACK_BYTES = 1024 * 1024


def _function(m: int, f: int, variant: int = 0) -> str:
    body = [f"def f_{m}_{f}(x, y=0):", f'    """Function {f} of module {m}."""', "    total = 0"]
    for k in range(18):
        body.append(f"    total += (x * {k + variant} + y) % {k + 7}")
    body += ["    if total < 0:", "        return -total", "    return total", "", ""]
    return "\n".join(body)


def _module(m: int, changed: bool = False) -> str:
    return "\n".join(_function(m, f, 1 if changed and f < PATCH_FUNCS else 0) for f in range(FUNCS))


def _test_file(t: int) -> str:
    lines = [f"from pkg.mod_{t:02d} import *  # noqa: F401,F403", "", ""]
    for k in range(TESTS_PER_FILE):
        f = k % FUNCS
        lines += [f"def test_f_{t}_{k}():", f"    assert f_{t}_{f}({k}, 1) >= 0",
                  f"    assert isinstance(f_{t}_{f}(1), int)", "", ""]
    return "\n".join(lines)


def generated() -> tuple[dict[str, str], dict[str, str | None], dict[str, str | None]]:
    """(repository files, files before the patch, files after it)."""
    from testjack_tui.sandbox.selftest import BASE_FILES

    files = dict(BASE_FILES)
    files["pkg/__init__.py"] = ""
    for m in range(MODULES):
        files[f"pkg/mod_{m:02d}.py"] = _module(m)
    for t in range(TEST_FILES):
        files[f"tests/test_mod_{t:02d}.py"] = _test_file(t)
    before = {f"pkg/mod_{m:02d}.py": files[f"pkg/mod_{m:02d}.py"] for m in range(PATCH_MODULES)}
    after = {p: _module(int(p[8:10]), changed=True) for p in before}
    return files, before, after


def _snapshot_floor(sb, image: str, nonce: str) -> float:
    """Seconds of create + start + commit + remove of a container that runs nothing (blocking)."""
    from testjack_tui.sandbox.containers import remove_container, start_container
    from testjack_tui.sandbox.podman_conf import podman

    client = sb.service.client()
    t = time.perf_counter()
    container = start_container(client, image, sb._labels("perf-real-floor"), sb.limits)
    try:
        container.commit(repository="localhost/testjack-perf-floor", tag=nonce, pause=False)
    finally:
        remove_container(client, container.id)
    took = time.perf_counter() - t
    podman("rmi", f"localhost/testjack-perf-floor:{nonce}", check=False)
    return took


GIT_APPLY = ('git apply --whitespace=nowarn /tmp/trial.patch && git -c user.name=t -c user.email=t@t '
             'commit -qam trial')


async def _measure(rounds: int):
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.podman_conf import podman
    from testjack_tui.sandbox.selftest import make_patch, tiny_task, trial_for

    root = Path(tempfile.mkdtemp(prefix="tj-perf-real-"))
    files, before, after = generated()
    patch = make_patch(before, after)
    task = tiny_task(root, task_id="perf-real-size", files=files, tag="perf-real-size")
    repo_bytes = sum(len(t.encode()) for t in files.values())
    changed_bytes = sum(len(t.encode()) for t in after.values())
    ours, base, layers, floors = [], [], [], []
    try:
        async with Sandbox(session="perf-real-size", concurrency=1) as sb:
            null = await sb.prepare(task, "null")  # builds the task's image once, outside timing
            env_image = await sb.env_image(task)
            # Snapshots build on the world base (the repo given to the trial user once per
            # task, sandbox/user_base.py): a per-task cost, stated beside the row.
            parent, _ = await sb._world_base(task)
            once = []
            for image in (parent, env_image):
                out = await sb._call(podman, "image", "inspect", image, check=True)
                once.append(int(json.loads(out.stdout)[0]["Size"]))
            base_bytes = once[0] - once[1]
            nonce = secrets.token_hex(3)
            for i in range(rounds + 1):
                trial = dataclasses.replace(trial_for(task, f"perf-real-{nonce}-{i}", {}), patch=patch)
                t = time.perf_counter()
                world = await sb.prepare(task, "model", trial)
                a = time.perf_counter() - t
                async with sb.open(null) as live:
                    await live.write_file("/tmp/trial.patch", patch)
                    res = await live.exec(["bash", "-c", GIT_APPLY], timeout=300)
                    if res.exit_code != 0:
                        raise RuntimeError(f"git apply in a running container failed: {res.output[-300:]}")
                    b = res.duration
                sizes = []
                for image in (world.image, parent):
                    out = await sb._call(podman, "image", "inspect", image, check=True)
                    sizes.append(int(json.loads(out.stdout)[0]["Size"]))
                await sb.remove(world)
                floor = await sb._call(_snapshot_floor, sb, parent, f"{nonce}-{i}")
                if i:  # the first round warms caches
                    floors.append(floor)
                    ours.append(a)
                    base.append(b)
                    layers.append(sizes[0] - sizes[1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    lines = sum(t.count("\n") for t in files.values())
    tests = TEST_FILES * TESTS_PER_FILE
    patch_lines = len(patch.splitlines())
    return ours, base, layers, floors, repo_bytes, changed_bytes, lines, tests, patch_lines, base_bytes


def run(quick: bool = False) -> list[dict]:
    if quick:
        return []  # CI time: the full run only
    (ours, base, layers, floors, repo_bytes, changed_bytes, lines, tests,
     patch_lines, base_bytes) = asyncio.run(_measure(3))
    a, b, f = median(ours), median(base), median(floors)
    r = ratio(a, b)
    layer = max(layers)
    size = f"{tests} tests, {lines:,} lines, a {patch_lines}-line patch"
    build = row("10 real-size world build per trial vs git apply+commit", fmt_s(a), fmt_s(b), r,
                f"<= {BUILD_TARGET}x", r is not None and r <= BUILD_TARGET,
                note=f"{size}; Sandbox.prepare of a fresh model world vs `git apply` + `git commit` "
                     f"timed inside a running container of the task's image, median of {len(ours)} "
                     f"rounds; snapshot floor (container create + start + commit + remove, nothing "
                     f"run) {fmt_s(f)}")
    floor_ratio = ratio(b + f, b)
    if build["status"] == "FAIL" and floor_ratio is not None and floor_ratio > BUILD_TARGET:
        build["gate_reason"] = (f"below the physical floor measured in this run: a snapshot needs a "
                                f"container and a commit of it, {fmt_s(f)} with nothing run in it, so "
                                f"git + that floor is already {floor_ratio:.2f}x")
    from .real_size_t0 import run as t0_rows

    return [
        build,
        row("10b real-size disk per trial snapshot", f"{layer:,} B", f"{changed_bytes:,} B changed",
            ratio(layer, changed_bytes), f"<= changed + {SLACK_BYTES // 1024} KiB",
            layer <= changed_bytes + SLACK_BYTES,
            note=f"{size}; the snapshot's own bytes over the image it is built on (largest of "
                 f"{len(layers)}), vs the bytes of the files the patch changes; the repository is "
                 f"{repo_bytes:,} B; once per task, the world base (the repo given to the trial "
                 f"user) adds {base_bytes:,} B over the task's image"),
        *t0_rows(quick),
    ]
