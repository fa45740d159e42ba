"""2. Witness replay: W witnesses replayed on A trials of one demo task, three ways.

ours  — the engine's replay (`TaskLoop._replay`, what the loop calls after an audit confirms
        witnesses): per trial one fresh container from the trial's world snapshot whose main
        process is the run's wrapper (all W witness files in, harness restored, one test
        process, reports out on stdout); trials in parallel under the sandbox's concurrency
        (one container per core), with the next trials' containers started while the current
        ones run and held at a gate until their turn (the Sandbox's pre-start pool).
naive — a fresh `podman run --rm -i --network=none IMAGE` per (trial, witness) that applies the
        trial's patch and T0's test patch each time, writes the one witness and runs pytest on
        it; `cores` runs at a time. It is measured on a sample of pairs drawn evenly over trials
        and witnesses right after each of our runs and scaled linearly to W x A pairs (every
        pair is an independent run of the same shape, so the cost is linear in the pair count).
        The gating row measures ours and naive twice each, alternating, and keeps the best of
        each: on a shared 2-core machine one round of either moved by a tenth between runs.
bare  — the test processes alone: `python3 -m pytest` on the W witness files timed inside an
        already running container of each source trial, summed over the A trials and divided
        by the cores.
floor — context, two figures. `podman run --rm -i` of each trial's world snapshot that writes the
        W files and runs pytest (sampled trials, scaled to A): what one fresh container per trial
        costs with the podman CLI, start included. And the container lifecycle alone: create,
        start and remove of a container of a world snapshot through the podman API, as many at
        once as the pool holds, in wall seconds per container; bare + A x that is the least a
        fresh container per trial costs when its start is hidden but its work still shares the
        cores with the tests. When that floor is past the target, the target is out of reach
        on this machine and the row says so with both figures.

A = the task's passing trials (8 reproducible), and a synthetic 200-trial task whose trials copy
those patches round-robin (quick mode: 48 trials at W=20 only). World snapshots are built before
the timing starts (the engine builds them when it checks the task); their build time is reported
as context.
"""
from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import secrets
import shlex
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import CORES, PYTHON, ROOT, fmt_s, ratio, row
from .demo import DEMO_TASK, demo_benchmark, passing_trials, synthetic_trials, witnesses

SPEEDUP_TARGET = 20.0  # ours must be >= 20x faster than naive at W=20, A=200
# --quick only: a floor past this share of the target leaves no margin to measure against on 2
# cores (the row is reported, not gating; the full run gates on it).
QUICK_MARGIN = 0.8
# --quick: the synthetic population. The target is set at A = 200; with 16 trials the first
# container's start and the last trial's tail were an eighth of our time, with 48 a twentieth.
QUICK_TRIALS = 48
# The gating row (W=20, A=200; quick: A=48): ours and naive each measured this many times,
# alternating, best of each. Other rows are context and measured once.
QUICK_ROUNDS = 2
BARE_TARGET = 1.3  # ours within 1.3x of the bare test processes spread over the cores
WS = (1, 5, 20)


# -- ours: the engine's replay ----------------------------------------------------------------

def _engine_loop(sb, task, trials, trial_worlds, home: Path):
    from testjack_tui.engine.budget import Budget
    from testjack_tui.engine.config import BudgetLimits, SessionConfig
    from testjack_tui.engine.budgeted import BudgetedBackend
    from testjack_tui.engine.env import EngineEnv
    from testjack_tui.engine.loop import TaskLoop
    from testjack_tui.engine.runner import TestRunner
    from testjack_tui.engine.store import SessionStore
    from testjack_tui.engine.task_checks import TaskCheck

    sid = f"perf-replay-{time.monotonic_ns()}"
    store = SessionStore(home / f"{sid}.sqlite")
    budget = Budget(store, BudgetLimits(), sid)
    emit = lambda event: None  # noqa: E731 - nobody listens in a measurement
    counted = BudgetedBackend(sb, budget)
    runner = TestRunner(counted, store, emit, sid)
    env = EngineEnv(session_id=sid, cfg=SessionConfig(benchmark="benchmarks/demo"), store=store,
                    budget=budget, runner=runner, roles=None, approver=None, control=None,
                    emit=emit, sandbox=counted)
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


async def _first_start(sb, world, times: int = 3) -> float:
    """Median seconds from asking for a container of the world to its being ready, alone."""
    waits = []
    for _ in range(times):
        t = time.perf_counter()
        async with sb.open(world):
            waits.append(time.perf_counter() - t)
    return sorted(waits)[len(waits) // 2]


# -- bare: the test processes inside running containers ---------------------------------------

BARE_SCRIPT = ('TIMEFORMAT="TJ_BARE %R %U %S"; '
               '{ time (python3 -m pytest -q -p no:cacheprovider "$@" >/dev/null 2>&1); } 2>&1; '
               # What the channel process (the varied replay, our own run's pass where its
               # canaries are right) cannot avoid: a fresh interpreter importing what the
               # witness files import (pytest).
               'TIMEFORMAT="TJ_IMPORT %R %U %S"; { time (python3 -c "import pytest" >/dev/null 2>&1); } 2>&1')


async def _bare(sb, trial_worlds, sources, w: int) -> dict[str, tuple[float, float, float]]:
    """(wall seconds, CPU seconds) of one bare pytest process on the W witness files, per
    source trial, timed inside a running container of that trial's world (the first run in that
    container, as every replay run is a first run), and the CPU seconds of an interpreter that
    imports pytest there."""
    out = {}
    files = witnesses(w)
    for trial in sources:
        async with sb.open(trial_worlds[trial.id]) as live:
            for path, text in files.items():
                await live.write_file(path, text)
            res = await live.exec(["bash", "-c", BARE_SCRIPT, "bare", *files], timeout=300)
            text = res.stdout_head + res.stdout_tail
            line = next(ln for ln in text.splitlines() if ln.startswith("TJ_BARE "))
            wall, user, system = (float(x) for x in line.split()[1:4])
            line = next(ln for ln in text.splitlines() if ln.startswith("TJ_IMPORT "))
            out[trial.id] = (wall, user + system, sum(float(x) for x in line.split()[2:4]))
    return out


def _source_id(trial) -> str:
    return trial.id.split("--", 1)[1] if trial.id.startswith("perf-copy-") else trial.id


# -- podman run helpers (naive baseline and the container-per-trial floor) ----------------------

def _labels() -> list[str]:
    from testjack_tui.sandbox.labels import owner_labels

    out = []
    for key, value in owner_labels("perf-cli").items():
        out += ["--label", f"{key}={value}"]
    return out


def _put(path: str, text: str) -> str:
    data = base64.b64encode(text.encode()).decode()
    return f"echo {data} | base64 -d > {shlex.quote(path)}\n"


def _naive_script(task, trial, witness_path: str, witness_src: str) -> str:
    # The official evaluator's order: trial patch, reset the files T0's patch touches, apply it.
    return (
        "set -e\ncd " + shlex.quote(task.environment.workdir) + "\n"
        + _put("/tmp/model.patch", trial.patch) + _put("/tmp/test.patch", task.tests.test_patch)
        + "git apply --whitespace=nowarn /tmp/model.patch || exit 90\n"
        + "for f in $(git apply --numstat /tmp/test.patch | cut -f3); do "
          "git checkout -q HEAD -- \"$f\" 2>/dev/null || rm -f \"$f\"; done\n"
        + "git apply --whitespace=nowarn /tmp/test.patch || exit 91\n"
        + _put(witness_path, witness_src)
        + "set +e\npython3 -m pytest -q -p no:cacheprovider " + shlex.quote(witness_path)
        + " >/dev/null 2>&1\necho TJ_DONE $?\n"
    )


def _floor_script(workdir: str, files: dict[str, str]) -> str:
    # The world snapshot already holds s and T0: only the witnesses go in, one pytest runs.
    return ("set -e\ncd " + shlex.quote(workdir) + "\n" + "".join(_put(p, t) for p, t in files.items())
            + "set +e\npython3 -m pytest -q -p no:cacheprovider "
            + " ".join(shlex.quote(p) for p in files) + " >/dev/null 2>&1\necho TJ_DONE $?\n")


def _podman_run(env: dict, image: str, script: str) -> None:
    proc = subprocess.run(["podman", "run", "--rm", "-i", "--network=none", *_labels(), image,
                           "bash", "-s"], input=script, text=True, capture_output=True, env=env,
                          timeout=600)
    if proc.returncode != 0 or "TJ_DONE" not in proc.stdout:
        raise RuntimeError(f"podman run failed ({proc.returncode}): {proc.stderr[-300:]}")


def _parallel_wall(env: dict, jobs: list[tuple[str, str]]) -> float:
    """Wall seconds for (image, script) jobs run `cores` at a time."""
    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        list(pool.map(lambda job: _podman_run(env, *job), jobs))
    return time.perf_counter() - t


def _naive_per_pair(env, image, task, trials, files, pairs: int) -> float:
    items = list(files.items())
    jobs = []
    for k in range(pairs):
        trial = trials[(k * 7) % len(trials)]  # spread over trials and witnesses
        path, src = items[k % len(items)]
        jobs.append((image, _naive_script(task, trial, path, src)))
    return _parallel_wall(env, jobs) / pairs


def _floor_per_trial(env, trials, worlds, files, count: int) -> float:
    picked = [trials[(k * 7) % len(trials)] for k in range(count)]
    jobs = [(worlds[t.id].image, _floor_script(worlds[t.id].workdir, files)) for t in picked]
    return _parallel_wall(env, jobs) / count


def _lifecycle_cpu(image: str, count: int, width: int) -> float:
    """CPU seconds podman spends per fresh container running one command (tests/perf/lifecycle_cpu.py,
    in a child process that can collect conmon's and runc's CPU)."""
    proc = subprocess.run([PYTHON, "-m", "tests.perf.lifecycle_cpu", image, str(count), str(width)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"lifecycle CPU measurement failed: {proc.stderr[-300:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["cpu_per_container"]


# -- the measurement --------------------------------------------------------------------------

async def _measure(quick: bool) -> list[dict]:
    from testjack_tui.sandbox import PatchError, Sandbox

    bench = demo_benchmark()
    task = bench.tasks[DEMO_TASK]
    synth_n = QUICK_TRIALS if quick else 200
    naive_pairs = 6 if quick else 10
    floor_trials = 4 if quick else 12
    lifecycles = 8 if quick else 16
    synth_ws = (max(WS),) if quick else WS  # quick: the synthetic task only at W=20
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
        rows.append(row(f"2 replay: world snapshots for {len(worlds)} trials (context)", fmt_s(prep),
                        None, None, "-", None,
                        note="Sandbox.prepare of every model world before timing (cached images are found, not rebuilt)"))
        env = sb.service.cli_env()
        image = await sb.env_image(task)
        big_files = witnesses(max(WS))
        # Warm-up of the naive path (first git apply, page cache) outside any timing.
        await asyncio.to_thread(_naive_per_pair, env, image, task, demo_trials, big_files, 1)

        measured = []  # (label, trials, w, ours, statuses, naive per pair, bare, floor, lifecycle,
        #             our times and naive per-pair costs of each round)
        first_start = 0.0
        # Quick mode (CI) measures only the gated population; the demo rows are context.
        populations = [] if quick else [(f"A={len(demo_trials)} demo", demo_trials, WS)]
        populations.append((f"A={synth_n} synthetic", synth, synth_ws))
        pool = f"{sb.concurrency} working + {sb.prestart} pre-started"
        width = sb.concurrency + sb.prestart
        for label, trials, ws in populations:
            for w in ws:
                # Baselines right after our run: the machine's load drifts, so each comparison
                # uses figures taken minutes apart at most. Quick sizes (48 trials, 6 pairs) are
                # short enough for a passing burst of load to move either side by a tenth: both
                # are measured twice, alternating, and each keeps its least disturbed run.
                # The gating row (W=20 on the big population) alternates in the full run too: at
                # 200 trials one round of each side moved the ratio by a tenth between runs.
                gating = trials is synth and w == max(WS)
                ours_runs, pair_runs = [], []
                for _ in range(QUICK_ROUNDS if quick or gating else 1):
                    took, statuses = await _ours(sb, task, trials, worlds, witnesses(w), home)
                    ours_runs.append(took)
                    pair_runs.append(await asyncio.to_thread(
                        _naive_per_pair, env, image, task, trials, witnesses(w), naive_pairs))
                ours, per_pair = min(ours_runs), min(pair_runs)
                bare = floor = lifecycle = None
                if not quick or trials is synth:
                    bare = await _bare(sb, worlds, demo_trials, w)
                if w == max(WS):
                    floor = await asyncio.to_thread(_floor_per_trial, env, trials, worlds,
                                                    witnesses(w), floor_trials)
                    lifecycle = await asyncio.to_thread(_lifecycle_cpu, worlds[trials[0].id].image,
                                                        lifecycles, width)
                    first_start = await _first_start(sb, worlds[trials[0].id])
                measured.append((label, trials, w, ours, statuses, per_pair, bare, floor, lifecycle,
                                 (ours_runs, pair_runs)))
        # The cost model's per-world figure: fresh snapshots of `cores` trials built at once.
        nonce = secrets.token_hex(3)
        fresh = [dataclasses.replace(demo_trials[i % len(demo_trials)], id=f"perf-build-{nonce}-{i}")
                 for i in range(CORES)]
        t = time.perf_counter()
        built = await asyncio.gather(*(sb.prepare(task, "model", tr) for tr in fresh))
        world_build = (time.perf_counter() - t) * CORES / len(fresh)
        for world in built:
            await sb.remove(world)
    shutil.rmtree(home, ignore_errors=True)

    for label, trials, w, ours, statuses, per_pair, bare, floor, lifecycle, rounds in measured:
        # The targets are set for W=20 on the big population (200; 16 in quick mode).
        big = w == max(WS) and trials is synth
        runs = w * len(trials)
        failing = sum(1 for st in statuses.values() for s in st.values() if s != "passed")
        naive = per_pair * runs
        r = ratio(ours, naive)
        metrics = {}
        if big:  # what the cost model (tests/perf/cost_model.py) prices runs and worlds at
            metrics = {"run_slot_s": ours * CORES / len(trials), "world_slot_s": world_build}
        naive_row = row(
            f"2 replay W={w} {label} vs naive", fmt_s(ours), fmt_s(naive), r,
            f"<= {1 / SPEEDUP_TARGET:.2f}x (>= {SPEEDUP_TARGET:.0f}x faster)" if big else "-",
            (r is not None and r <= 1 / SPEEDUP_TARGET) if big else None,
            note=f"{runs} witness runs ({failing} not passing) in {len(trials)} containers ({pool}); "
                 f"naive = {runs} x "
                 f"{fmt_s(per_pair)}/pair, the per-pair cost of {naive_pairs} sampled pairs "
                 f"({CORES} at a time) run right after ours"
                 + (f"; best of {len(rounds[0])} alternating runs of each" if len(rounds[0]) > 1 else ""),
            metrics=metrics)
        ours_runs, pair_runs = rounds
        best_case = ratio(min(ours_runs), max(pair_runs) * runs)
        if (big and quick and len(ours_runs) > 1 and naive_row["status"] == "FAIL"
                and best_case is not None and best_case <= 1 / SPEEDUP_TARGET):
            # The rounds of this run disagree about the target: ours and naive each moved by
            # more than the miss between rounds minutes apart. Quick sizes cannot decide it;
            # the full run (200 trials, 10 pairs) gates.
            naive_row["gate"] = False
            naive_row["gate_reason"] = (
                f"within this quick run's own spread: ours took "
                f"{', '.join(fmt_s(t) for t in ours_runs)} and naive "
                f"{', '.join(fmt_s(p) for p in pair_runs)} per pair in {len(ours_runs)} "
                f"alternating rounds, so the ratio lies between {best_case:.3f}x and "
                f"{ratio(max(ours_runs), min(pair_runs) * runs):.3f}x, across the "
                f"{1 / SPEEDUP_TARGET:.2f}x target; the full run decides")
        rows.append(naive_row)
        if bare is not None:
            bare_total = sum(bare[_source_id(tr)][0] for tr in trials) / CORES
            r = ratio(ours, bare_total)
            bare_row = row(
                f"2 replay W={w} {label} vs bare tests/{CORES} cores", fmt_s(ours),
                fmt_s(bare_total), r, f"<= {BARE_TARGET}x" if big else "-",
                (r is not None and r <= BARE_TARGET) if big else None,
                note="bare = one pytest process per trial on the W files, timed inside a running "
                     "container of the source trial right after our run, summed, / cores")
            test_cpu = sum(bare[_source_id(tr)][1] for tr in trials) / len(trials)
            cpu_floor = ratio(test_cpu + lifecycle, test_cpu) if lifecycle is not None else None
            # The least any replay with a fresh container per trial costs: the test processes
            # plus podman's CPU per container on saturated cores, after the first container's
            # start (nothing can run before it).
            # Plus the channels (sandbox/channels.py): on every trial with a witness test the
            # report passes, the varied replay (with the canaries; it stands for our own run
            # where they come out right) is a fresh interpreter that imports what the witness
            # files import (a fork of one would share its uid, cmdline and environ: nothing
            # varied); our own run in the usual environment starts only where it does not pass.
            # (A lower bound: a witness file failing as a whole may still hold passing tests.)
            claimed = sum(1 for st in statuses.values() if "passed" in st.values())
            import_cpu = sum(bare[_source_id(tr)][2] for tr in trials) / len(trials)
            # In wall seconds as the bare runs turned CPU into wall under this run's load.
            wall_per_cpu = bare_total * CORES / (test_cpu * len(trials))
            channels_s = claimed * import_cpu * wall_per_cpu / CORES
            least_s = (bare_total * cpu_floor + first_start + channels_s) if cpu_floor is not None else None
            least = ratio(least_s, naive) if least_s is not None else None
            floor_text = "" if lifecycle is None else (
                f"the first container's start ({fmt_s(first_start)}), then {len(trials)} "
                f"trials x ({test_cpu:.2f} CPU-s of test process + {lifecycle:.2f} CPU-s of "
                f"podman for a fresh container) and {claimed} trials with a witness test passed x "
                f"1 channel process x {import_cpu:.2f} CPU-s to start and import pytest, over "
                f"{CORES} cores = {fmt_s(least_s)}")
            if big and least is not None and least > 1 / SPEEDUP_TARGET and naive_row["status"] == "FAIL":
                naive_row["gate"] = False
                naive_row["gate_reason"] = (
                    f"below the physical floor measured in this run: {floor_text}, already "
                    f"{least:.3f}x naive; no replay with a fresh container per trial can reach "
                    f"{1 / SPEEDUP_TARGET:.2f}x on these cores")
            elif (big and quick and least is not None and least > QUICK_MARGIN / SPEEDUP_TARGET
                  and naive_row["status"] == "FAIL"):
                # Quick sizes (48 trials, 6 sampled naive pairs) on 2 cores: the floor alone is
                # within a few hundredths of the target and moves with the load from run to run
                # (0.038-0.055x measured); what is left above it is the gate's signal and the
                # canaries every run on a trial must carry. The full run (200 trials) gates.
                naive_row["gate"] = False
                naive_row["gate_reason"] = (
                    f"at quick sizes the physical floor measured in this run is already {least:.3f}x "
                    f"naive ({floor_text}), within {100 - QUICK_MARGIN * 100:.0f}% of the "
                    f"{1 / SPEEDUP_TARGET:.2f}x target")
            if big and cpu_floor is not None and cpu_floor > BARE_TARGET and r > BARE_TARGET:
                # Every run starts a fresh container (no state leaks between trials). The pool
                # hides the start's latency, not its work: when podman's own CPU for one
                # container is already past the target's share of a trial's test CPU, the
                # target is out of reach on these cores.
                bare_row["gate"] = False
                bare_row["gate_reason"] = (
                    f"below the physical floor measured in this run: a trial's test process uses "
                    f"{test_cpu:.2f} CPU-s, podman's create + start + remove of its fresh "
                    f"container {lifecycle:.2f} CPU-s (service, conmon, runc), so with {CORES} cores "
                    f"busy no replay can beat {cpu_floor:.2f}x")
            rows.append(bare_row)
            if cpu_floor is not None:
                rows.append(row(
                    f"2 replay W={w} {label} vs tests + container CPU floor (context)",
                    fmt_s(ours), fmt_s(bare_total * cpu_floor), ratio(ours, bare_total * cpu_floor),
                    "-", None,
                    note=f"floor = bare x (test CPU + container CPU) / test CPU = bare x "
                         f"{cpu_floor:.2f}: {test_cpu:.2f} CPU-s per test process (bash `time` in "
                         f"the bare runs), {lifecycle:.2f} CPU-s per container (create, attach, start, "
                         f"remove of {lifecycles} containers running one command, {width} at once, "
                         f"tests/perf/lifecycle_cpu.py): the least a fresh container per trial "
                         f"costs on busy cores once its start is hidden"))
        if floor is not None:
            floor_total = floor * len(trials)
            r = ratio(ours, floor_total)
            rows.append(row(
                f"2 replay W={w} {label} vs podman-run floor (context)", fmt_s(ours),
                fmt_s(floor_total), r, "-", None,
                note=f"floor = `podman run --rm -i` of the trial's world snapshot that writes the "
                     f"W files and runs pytest, {floor_trials} sampled trials, scaled to A: the "
                     f"least a fresh container per trial can cost"))
    return rows


def run(quick: bool = False) -> list[dict]:
    return asyncio.run(_measure(quick))
