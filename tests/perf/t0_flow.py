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
    done = podman("run", "--rm", "--network", "none", "-v", f"{tests}:{TESTS_MOUNT}",
                  "-v", f"{artifacts}:{Path(PATCH_PATH).parent}", "-v", f"{logs}:/logs/verifier",
                  image, "bash", f"{TESTS_MOUNT}/test.sh", timeout=600, check=False)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"test.sh by hand exited {done.returncode}: "
                           f"{(done.stdout + done.stderr).decode(errors='replace')[-1500:]}")
    def read(name: str) -> bytes | None:
        return (logs / name).read_bytes() if (logs / name).exists() else None
    assert read_reward(read("reward.json"), read("reward.txt")) == 1.0, "the by-hand run did not pass G"
    return elapsed


async def measure(task, reps: int, session: str) -> dict[str, list[float]]:
    """Alternating runs of T0 through the task's flow (ours), our direct runner (base) and the
    task's test.sh by hand (hand), after one warm-up triple; plus the part around each command."""
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.t0 import run_direct

    ids = list(task.tests.ids)
    got: dict[str, list[float]] = {k: [] for k in ("ours", "base", "hand", "ours_around", "base_around")}
    scratch = Path(tempfile.mkdtemp(prefix="tj-perf-t0-hand-"))
    async with Sandbox(session=session, concurrency=1) as sb:
        world = await sb.prepare(task, "reference")
        image = await sb.verifier_image(task)
        for i in range(reps + 1):
            t = time.perf_counter()
            official = await sb.run_official(task, "reference")
            a = time.perf_counter() - t
            t = time.perf_counter()
            direct = await run_direct(sb, task, world, ids)
            b = time.perf_counter() - t
            assert official.reward == 1.0 and all(official.status(x) == "passed" for x in ids), \
                official.exec.output[-1500:]
            assert all(direct.status(x) == "passed" for x in ids), direct.exec.output[-1500:]
            c = await asyncio.to_thread(_by_hand, image, task, scratch / str(i))
            if i:  # the first triple warms caches
                for key, value in (("ours", a), ("base", b), ("hand", c),
                                   ("ours_around", max(a - official.exec.duration, 0.0)),
                                   ("base_around", max(b - direct.exec.duration, 0.0))):
                    got[key].append(value)
    return got


def flow_rows(names: tuple[str, str, str], what: str, got: dict[str, list[float]]) -> list[dict]:
    """Three rows of one measure(), numbered by `names`: the flow vs the direct runner (not gating
    when the task's own script by hand is already past the target), the flow vs the same script
    by hand, and our time around the command."""
    number, by_hand, around = names
    a, b, h = median(got["ours"]), median(got["base"]), median(got["hand"])
    r, floor, rh = ratio(a, b), ratio(h, b), ratio(a, h)
    # The smallest of each: what the part around the command costs without the machine's noise
    # (container starts vary by seconds under load; the command itself is in the first row).
    ca, cb = min(got["ours_around"]), min(got["base_around"])
    rc = ratio(ca, cb)
    first = row(f"{number} T0 flow: benchmark's own vs direct runner", fmt_s(a), fmt_s(b), r, f"<= {TARGET}x",
                r is not None and r <= TARGET,
                note=f"{what}, median of {len(got['ours'])} alternating runs each: the task's test.sh + "
                     "grader in a fresh container from its verifier image vs our pytest runner in the "
                     "prepared world snapshot (tests/perf/t0_flow.py)")
    if first["status"] == "FAIL" and floor is not None and floor > TARGET:
        first.update(gate=False, gate_reason=f"physical on this task: its own test.sh typed by hand "
                     f"(podman run) measured {floor:.2f}x the direct runner, past the target by itself; it runs "
                     "two pytest sessions and two grader processes where the direct runner runs one session "
                     f"({by_hand} and {around} are the parts that are ours)")
    return [first,
            row(f"{by_hand} T0 flow: ours vs the same test.sh by hand", fmt_s(a), fmt_s(h), rh, f"<= {TARGET}x",
                rh is not None and rh <= TARGET,
                note="the benchmark's flow through our sandbox vs `podman run --rm --network none` of the "
                     "task's test.sh with tests/ and the reference patch mounted, same verifier image, "
                     "alternating runs, medians"),
            row(f"{around} T0 flow: our time around the test command", fmt_s(ca), fmt_s(cb), rc, f"<= {TARGET}x",
                rc is not None and rc <= TARGET,
                note="total minus the in-container command, best of the same runs: container start, "
                     "files in, reports out and parsing for the benchmark's flow vs for the direct runner")]


def run(quick: bool) -> list[dict]:
    from testjack_tui.benchmarks import load_benchmark

    task = load_benchmark(FIXTURE).tasks[TASK]
    got = asyncio.run(measure(task, 4 if quick else 6, "perf-t0-flow"))
    return flow_rows(("8", "8c", "8b"), f"{len(task.tests.ids)} T0 tests of {TASK} on the reference world", got)
