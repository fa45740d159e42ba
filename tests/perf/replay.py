"""2. Witness replay: W witnesses replayed on A trials of one demo task, three ways.

ours  — the engine's replay (`TaskLoop._replay`, what the loop calls after an audit confirms
        witnesses): per trial one fresh container from the trial's world snapshot, all W
        witness files copied in, one test process, harness restored; trials in parallel under
        the sandbox's concurrency (one container per core).
naive — a fresh `podman run --rm -i --network=none IMAGE` per (trial, witness) that applies the
        trial's patch and T0's test patch each time, writes the one witness and runs pytest on
        it; `cores` runs at a time. It is measured on a sample of pairs drawn evenly over trials
        and witnesses and scaled linearly to W x A pairs (every pair is an independent run of the
        same shape, so the cost is linear in the pair count).
bare  — the test processes alone: `python3 -m pytest` on the W witness files timed inside an
        already running container of each source trial, summed over the A trials and divided
        by the cores.

A = the task's passing trials (9), and a synthetic 200-trial task whose trials copy those
patches round-robin (quick mode: 24). World snapshots are built before the timing starts (the
engine builds them when it checks the task); their build time is reported as context.
"""
from __future__ import annotations

import asyncio
import base64
import shlex
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import CORES, fmt_s, median, ratio, row
from .demo import DEMO_TASK, demo_benchmark, passing_trials, synthetic_trials, witnesses

SPEEDUP_TARGET = 5.0  # ours must be >= 5x faster than naive at W=20, A=200
BARE_TARGET = 1.5  # ours within 1.5x of the bare test processes spread over the cores
WS = (1, 5, 20)


# -- ours: the engine's replay ----------------------------------------------------------------

def _engine_loop(sb, task, trials, trial_worlds, home: Path):
    from testjack_tui.engine.budget import Budget
    from testjack_tui.engine.config import BudgetLimits, SessionConfig
    from testjack_tui.engine.loop import EngineEnv, TaskLoop
    from testjack_tui.engine.runner import TestRunner
    from testjack_tui.engine.store import SessionStore
    from testjack_tui.engine.task_checks import TaskCheck

    sid = f"perf-replay-{time.monotonic_ns()}"
    store = SessionStore(home / f"{sid}.sqlite")
    budget = Budget(store, BudgetLimits(), sid)
    emit = lambda event: None  # noqa: E731 - nobody listens in a measurement
    runner = TestRunner(sb, store, budget, emit, sid)
    env = EngineEnv(session_id=sid, cfg=SessionConfig(benchmark="benchmarks/demo"), store=store,
                    budget=budget, runner=runner, roles=None, approver=None, control=None,
                    emit=emit, sandbox=sb)
    check = TaskCheck(task_id=task.id, well_formed=True, trial_worlds=trial_worlds,
                      reproducible=list(trials))
    return TaskLoop(env, task, check), store


def _candidates(files: dict[str, str]):
    from testjack_tui.engine.roles import Candidate

    return [(f"perf:w{i}", Candidate(id=f"perf:w{i}", path=path, source=src, requirement="perf",
                                     author="audit"))
            for i, (path, src) in enumerate(files.items())]


async def _ours(sb, task, trials, trial_worlds, files, home) -> tuple[float, dict]:
    loop, store = _engine_loop(sb, task, trials, trial_worlds, home)
    try:
        t = time.perf_counter()
        statuses = await loop._replay(_candidates(files), [tr.id for tr in trials])
        wall = time.perf_counter() - t
    finally:
        store.close()
    await _drain(sb)
    if len(statuses) != len(trials):
        raise RuntimeError(f"replay answered for {len(statuses)} of {len(trials)} trials")
    return wall, statuses


async def _drain(sb) -> None:
    # Containers are removed in the background after each result; let that finish so it does
    # not slow the next measurement.
    pending = list(getattr(sb, "_cleanups", ()))
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


# -- bare: the test processes inside running containers ---------------------------------------

BARE_SCRIPT = ('s=$(date +%s%N); python3 -m pytest -q -p no:cacheprovider "$@" >/dev/null 2>&1; '
               'e=$(date +%s%N); echo "TJ_BARE $(( (e - s) / 1000 ))"')


async def _bare(sb, trial_worlds, sources, ws) -> dict[tuple[int, str], float]:
    """Seconds of the bare pytest process per (W, source trial id): median of `repeats`."""
    out = {}
    for trial in sources:
        async with sb.open(trial_worlds[trial.id]) as live:
            for w in ws:
                files = witnesses(w)
                for path, text in files.items():
                    await live.write_file(path, text)
                samples = []
                for _ in range(2):
                    res = await live.exec(["sh", "-c", BARE_SCRIPT, "bare", *files], timeout=300)
                    text = res.stdout_head + res.stdout_tail
                    line = next(ln for ln in text.splitlines() if ln.startswith("TJ_BARE "))
                    samples.append(int(line.split()[1]) / 1e6)
                out[(w, trial.id)] = min(samples)
    return out


def _source_id(trial) -> str:
    return trial.id.split("--", 1)[1] if trial.id.startswith("perf-copy-") else trial.id


# -- naive: podman run per (trial, witness) ---------------------------------------------------

def _naive_script(task, trial, witness_path: str, witness_src: str) -> str:
    def put(path: str, text: str) -> str:
        data = base64.b64encode(text.encode()).decode()
        return f"echo {data} | base64 -d > {shlex.quote(path)}\n"

    # The official evaluator's order: trial patch, reset the files T0's patch touches, apply it.
    return (
        "set -e\ncd " + shlex.quote(task.environment.workdir) + "\n"
        + put("/tmp/model.patch", trial.patch) + put("/tmp/test.patch", task.tests.test_patch)
        + "git apply --whitespace=nowarn /tmp/model.patch || exit 90\n"
        + "for f in $(git apply --numstat /tmp/test.patch | cut -f3); do "
          "git checkout -q HEAD -- \"$f\" 2>/dev/null || rm -f \"$f\"; done\n"
        + "git apply --whitespace=nowarn /tmp/test.patch || exit 91\n"
        + put(witness_path, witness_src)
        + "set +e\npython3 -m pytest -q -p no:cacheprovider " + shlex.quote(witness_path)
        + " >/dev/null 2>&1\necho TJ_NAIVE $?\n"
    )


def _naive_one(env: dict, image: str, script: str) -> None:
    proc = subprocess.run(["podman", "run", "--rm", "-i", "--network=none", image, "bash", "-s"],
                          input=script, text=True, capture_output=True, env=env, timeout=600)
    if proc.returncode != 0 or "TJ_NAIVE" not in proc.stdout:
        raise RuntimeError(f"naive replay run failed ({proc.returncode}): {proc.stderr[-300:]}")


def _naive_sample(env, image, task, trials, files, pairs: int) -> tuple[float, int]:
    """(wall seconds per pair with `cores` at a time, pairs run)."""
    items = list(files.items())
    jobs = []
    for k in range(pairs):
        trial = trials[(k * 7) % len(trials)]  # spread over trials and witnesses
        path, src = items[k % len(items)]
        jobs.append(_naive_script(task, trial, path, src))
    _naive_one(env, image, jobs[0])  # warm-up
    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        list(pool.map(lambda s: _naive_one(env, image, s), jobs))
    return (time.perf_counter() - t) / pairs, pairs


# -- the measurement --------------------------------------------------------------------------

async def _measure(quick: bool) -> list[dict]:
    from sandbox import Sandbox

    from sandbox import PatchError

    bench = demo_benchmark()
    task = bench.tasks[DEMO_TASK]
    synth_n = 24 if quick else 200
    rows: list[dict] = []
    home = Path(tempfile.mkdtemp(prefix="tj-perf-replay-"))
    async with Sandbox(session="perf-replay") as sb:
        # World snapshots (cached by tag: a second run finds them). A passing trial whose patch
        # does not apply is not reproducible: the engine excludes it, so do we.
        t = time.perf_counter()
        demo_trials = []
        for tr, w in zip(passing_trials(), await asyncio.gather(
                *(sb.prepare(task, "model", tr) for tr in passing_trials()), return_exceptions=True)):
            if isinstance(w, PatchError):
                continue
            if isinstance(w, BaseException):
                raise w
            demo_trials.append(tr)
        synth = synthetic_trials(synth_n, demo_trials)
        worlds = {}
        prepared = await asyncio.gather(*(sb.prepare(task, "model", tr) for tr in demo_trials + synth))
        for tr, w in zip(demo_trials + synth, prepared):
            worlds[tr.id] = w
        prep = time.perf_counter() - t
        populations = [(f"A={len(demo_trials)} (demo, reproducible passing)", demo_trials),
                       (f"A={synth_n} (synthetic copies)", synth)]
        rows.append(row(f"2 replay: world snapshots for {len(worlds)} trials (context)", fmt_s(prep),
                        None, None, "-", None,
                        note="Sandbox.prepare of every model world before timing (cached images are found, not rebuilt)"))
        env = sb.service.cli_env()
        image = await sb.env_image(task)

        bare = await _bare(sb, worlds, demo_trials, WS)
        naive_pairs = 8 if quick else 30
        per_pair, n_pairs = await asyncio.to_thread(
            _naive_sample, env, image, task, demo_trials, witnesses(max(WS)), naive_pairs)

        for label, trials in populations:
            for w in WS:
                files = witnesses(w)
                ours, statuses = await _ours(sb, task, trials, worlds, files, home)
                naive = per_pair * w * len(trials)
                bare_total = sum(bare[(w, _source_id(tr))] for tr in trials) / CORES
                # The targets are set for W=20 on the big population (200; 24 in quick mode).
                big = w == max(WS) and trials is synth
                failed = sum(1 for st in statuses.values() for s in st.values() if s != "passed")
                r_naive = ratio(ours, naive)
                rows.append(row(
                    f"2 replay W={w} {label} vs naive", fmt_s(ours), fmt_s(naive), r_naive,
                    f"<= {1 / SPEEDUP_TARGET:.1f}x (>= {SPEEDUP_TARGET:.0f}x faster)" if big else "-",
                    (r_naive is not None and r_naive <= 1 / SPEEDUP_TARGET) if big else None,
                    note=f"{w * len(trials)} witness runs ({failed} failing); naive scaled from "
                         f"{n_pairs} sampled pairs at {fmt_s(per_pair)}/pair, {CORES} at a time"))
                r_bare = ratio(ours, bare_total)
                rows.append(row(
                    f"2 replay W={w} {label} vs bare tests/{CORES} cores", fmt_s(ours),
                    fmt_s(bare_total), r_bare, f"<= {BARE_TARGET}x" if big else "-",
                    (r_bare is not None and r_bare <= BARE_TARGET) if big else None,
                    note="bare = pytest process time inside running containers, summed, / cores"))
    return rows


def run(quick: bool = False) -> list[dict]:
    return asyncio.run(_measure(quick))
