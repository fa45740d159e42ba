"""8. T0 through the benchmark's own flow vs our direct runner, same tests, same world.

ours     — `Sandbox.run_official` on the reference world of a DeepSWE-layout task
           (tests/fixtures/deepswe, fees-compound: separate verifier image): a fresh container,
           tests/ and the patch copied in, `bash /tests/test.sh` (the task's grader applies G and
           the test patch, two pytest sessions with JUnit reports, grading), reports read back.
baseline — our direct runner (`testjack_tui.sandbox.t0.run_direct`) on the same T0 ids in the prepared
           reference world snapshot (G and T0 already applied): a fresh container, one pytest
           session.

Runs alternate (ours, baseline, ours, ...) after one warm-up of each, so machine noise hits both;
the figure is the median of each. Target: ours <= 1.3x baseline.

A second row (8b) splits off what is ours: the time around the test command (container start, files
in, reports out, parsing) of each, i.e. total minus the in-container exec.

A third row (8c) measures the floor of the first: the same benchmark script typed by hand,
`podman run --rm --network none -v tests:/tests -v artifacts:/logs/artifacts <verifier image>
bash /tests/test.sh`, in the same alternation. The task's own test.sh runs two pytest sessions
(DeepSWE's `base` and `new` modes) and two grader processes where the direct runner runs one
session, so on a suite this small the script itself can cost more than 1.3x the direct runner; when
the by-hand run alone is past the target, row 8 reports that measured floor and does not gate,
and row 8c (ours vs the same script by hand, <= 1.3x) is the part that is ours to meet.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from .common import fmt_s, median, ratio, row

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "deepswe"
TASK = "fixtures/fees-compound"
TARGET = 1.3


def _by_hand(image: str, task, root: Path) -> float:
    """The benchmark's script as a maintainer runs it: one `podman run` of test.sh with the tests
    folder and the reference patch mounted. Returns the wall time; checks the reward it wrote."""
    from testjack_tui.sandbox.grader_reports import read_reward
    from testjack_tui.sandbox.official import PATCH_PATH, TESTS_MOUNT, patch_for, tests_files
    from testjack_tui.sandbox.podman_conf import podman

    tests, artifacts, logs = root / "tests", root / "artifacts", root / "verifier"
    for folder in (tests, artifacts, logs):
        folder.mkdir(parents=True, exist_ok=True)
    for path, data in tests_files(task.tests.evaluator).items():
        target = tests / path[len(TESTS_MOUNT) + 1:]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (artifacts / Path(PATCH_PATH).name).write_text(patch_for(task, "reference", None))
    t = time.perf_counter()
    podman("run", "--rm", "--network", "none", "-v", f"{tests}:{TESTS_MOUNT}",
           "-v", f"{artifacts}:{Path(PATCH_PATH).parent}", "-v", f"{logs}:/logs/verifier",
           image, "bash", f"{TESTS_MOUNT}/test.sh", timeout=600)
    elapsed = time.perf_counter() - t
    def read(name: str) -> bytes | None:
        return (logs / name).read_bytes() if (logs / name).exists() else None
    assert read_reward(read("reward.json"), read("reward.txt")) == 1.0, "the by-hand run did not pass G"
    return elapsed


async def _measure(reps: int) -> tuple[list[float], ...]:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.t0 import run_direct

    task = load_benchmark(FIXTURE).tasks[TASK]
    ids = list(task.tests.ids)
    ours, base, ours_around, base_around, hand = [], [], [], [], []
    scratch = Path(tempfile.mkdtemp(prefix="tj-perf-t0-hand-"))
    async with Sandbox(session="perf-t0-flow", concurrency=1) as sb:
        world = await sb.prepare(task, "reference")
        image = await sb.verifier_image(task)
        for i in range(reps + 1):
            t = time.perf_counter()
            official = await sb.run_official(task, "reference")
            a = time.perf_counter() - t
            t = time.perf_counter()
            direct = await run_direct(sb, task, world, ids)
            b = time.perf_counter() - t
            assert official.reward == 1.0 and all(official.status(x) == "passed" for x in ids)
            assert all(direct.status(x) == "passed" for x in ids)
            c = await asyncio.to_thread(_by_hand, image, task, scratch / str(i))
            if i:  # the first triple warms caches
                ours.append(a)
                base.append(b)
                hand.append(c)
                ours_around.append(max(a - official.exec.duration, 0.0))
                base_around.append(max(b - direct.exec.duration, 0.0))
    return ours, base, ours_around, base_around, hand, [float(len(ids))]


def run(quick: bool) -> list[dict]:
    ours, base, ours_around, base_around, hand, (n,) = asyncio.run(_measure(4 if quick else 6))
    a, b, h = median(ours), median(base), median(hand)
    r = ratio(a, b)
    floor = ratio(h, b)
    # The smallest of each: what the part around the command costs without the machine's noise
    # (container starts vary by seconds under load; the command itself is in row 8).
    ca, cb = min(ours_around), min(base_around)
    rc = ratio(ca, cb)
    first = row("8 T0 flow: benchmark's own vs direct runner", fmt_s(a), fmt_s(b), r, f"<= {TARGET}x",
                r is not None and r <= TARGET,
                note=f"{int(n)} T0 tests of {TASK} on the reference world, median of {len(ours)} alternating "
                     "runs each: the task's test.sh + grader in a fresh container from its verifier "
                     "image vs our pytest runner in the prepared world snapshot (tests/perf/t0_flow.py)")
    if first["status"] == "FAIL" and floor is not None and floor > TARGET:
        first.update(gate=False, gate_reason=f"physical on this fixture: the task's own test.sh typed by hand "
                     f"(podman run) measured {floor:.2f}x the direct runner, past the target by itself; it runs "
                     "two pytest sessions and two grader processes where the direct runner runs one session "
                     "(8b and 8c are the parts that are ours)")
    rh = ratio(a, h)
    return [first,
            row("8c T0 flow: ours vs the same test.sh by hand", fmt_s(a), fmt_s(h), rh, f"<= {TARGET}x",
                rh is not None and rh <= TARGET,
                note="the benchmark's flow through our sandbox vs `podman run --rm --network none` of the "
                     "task's test.sh with tests/ and the reference patch mounted, same verifier image, "
                     "alternating runs, medians"),
            row("8b T0 flow: our time around the test command", fmt_s(ca), fmt_s(cb), rc, f"<= {TARGET}x",
                rc is not None and rc <= TARGET,
                note="total minus the in-container command, best of the same runs: container start, "
                     "files in, reports out and parsing for the benchmark's flow vs for the direct runner")]
