"""6b. Memory at scale: peak RSS of a headless audit of 1,000 trials (target <= 400 MB, our process).

The benchmark is generated here in Harbor layout (nothing downloaded): TASKS tasks x PER_TASK
passing trials by six models, each trial a real unified diff of about 150 lines (one of three
implementation styles, names varied per trial), a third of them with a planted defect. It is
loaded by the real loader and audited exactly as `testjack-tui audit --headless --auto-approve`
runs a session (`audit_cmd.run_session`: progress lines, summary.json), per-trial mode (every
trial audited and every witness replayed on every trial of its task: the most the engine keeps
per trial), with the real witness classifier, on the engine's simulated sandbox and fake roles
(tests/engine_fakes.py): no containers and no LLM, so 1,000 trials take minutes, and what is
measured is our process -- engine, session store, events, evidence, sampler state. Containers and
the podman service are other processes and never count; row 6 audits the demo on real podman.

Baseline, side by side: `testjack-tui list` of the same generated benchmark (the interpreter with
the benchmark loaded: the CLI's floor for that benchmark). The full run also audits a tenth of
the size and states the growth per trial between the two, so 10,000 trials can be judged.

    python -m tests.perf --only 6           # rows 6 and 6b
    python -m tests.perf.audit_rss BENCH OUT MODE   # the child the row measures (one audit)
"""
from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
from testjack_tui.compose import session_deps
from pathlib import Path

from .common import PYTHON, ROOT, child_peak_rss_mb, fmt_mb, fmt_s, ratio, row

TARGET_MB = 400.0
TASKS, PER_TASK = 20, 50  # 1,000 trials
MODELS = ("m-alpha", "m-beta", "m-gamma", "m-delta", "m-eps", "m-zeta")
REQS = ("alias", "quoting", "empty", "unicode")

_STYLES = {
    "table": ["TABLE_{n} = {{", *[f"    'k{i}': {i}," for i in range(12)], "}}",
              "def {fn}(value, strict=False):", "    key = value.strip().lower()",
              "    if key not in TABLE_{n}:", "        if strict:", "            raise KeyError(key)",
              "        return None", "    return TABLE_{n}[key]"],
    "branches": ["def {fn}(value, strict=False):", "    key = value.strip()",
                 *[f"    if key == 'k{i}':\n        return {i}" for i in range(12)],
                 "    if strict:", "        raise KeyError(key)", "    return None"],
    "regex": ["import re", "_PART_{n} = re.compile(r'k(\\d+)')", "def {fn}(value, strict=False):",
              "    m = _PART_{n}.fullmatch(value.strip())", "    if m is None:",
              "        if strict:", "            raise KeyError(value)", "        return None",
              "    return int(m.group(1))"],
}


def _trial_patch(rng: random.Random, task: int, defect: str | None) -> str:
    """A unified diff adding a module of helpers (about 150 lines) in one of the styles."""
    lines: list[str] = [f'"""Helpers for task {task}."""', ""]
    style = rng.choice(sorted(_STYLES))
    for n in range(8):
        fn = f"{rng.choice(('parse', 'read', 'lookup', 'decode'))}_{n}"
        lines += [x.format(n=n, fn=fn) for x in _STYLES[style]] + ["", ""]
    if defect:  # the simulated sandbox reads "defect:<req>": witnesses of <req> fail here
        lines.insert(2, f"# defect:{defect}")
    body = "\n".join(lines).split("\n")
    return (f"diff --git a/pkg/task{task}.py b/pkg/task{task}.py\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/pkg/task{task}.py\n@@ -0,0 +1,{len(body)} @@\n"
            + "".join(f"+{x}\n" for x in body))


def generate(root: Path, tasks: int = TASKS, per_task: int = PER_TASK, seed: int = 0) -> int:
    """Write the benchmark under root; the number of passing trials."""
    rng = random.Random(seed)
    (root / "benchmark.toml").write_text('name = "perf-1k"\nformat = "harbor"\ntasks = "tasks"\n'
                                         'jobs = ["jobs"]\n')
    count = 0
    for t in range(tasks):
        task_id = f"task-{t:03d}"
        folder = root / "tasks" / task_id
        (folder / "tests").mkdir(parents=True)
        (folder / "solution").mkdir()
        (folder / "task.toml").write_text(
            f'schema_version = "1.0"\n[task]\nname = "{task_id}"\n[verifier]\ntimeout_sec = 300\n'
            '[environment]\ndocker_image = "localhost/none"\nworkdir = "/app"\n')
        (folder / "instruction.md").write_text(
            f"Add the helpers of task {t} to pkg/task{t}.py. They must handle "
            + ", ".join(REQS) + " input.\n")
        (folder / "solution" / "solution.patch").write_text(_trial_patch(random.Random(t), t, None))
        test = (f"diff --git a/tests/test_task{t}.py b/tests/test_task{t}.py\nnew file mode 100644\n"
                f"--- /dev/null\n+++ b/tests/test_task{t}.py\n@@ -0,0 +1,2 @@\n"
                f"+def test_f2p():\n+    assert True\n")
        (folder / "tests" / "test.patch").write_text(test)
        (folder / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
        (folder / "tests" / "config.json").write_text(json.dumps({
            "f2p_node_ids": [f"tests/test_task{t}.py::test_f2p"],
            "p2p_node_ids": [f"tests/test_task{t}.py::test_p2p_{k}" for k in range(20)]}))
        for i in range(per_task):
            model = MODELS[i % len(MODELS)]
            trial_id = f"{task_id}__{model}__{i}"
            defect = rng.choice(REQS) if rng.random() < 1 / 3 else None
            job = root / "jobs" / "job-1" / trial_id
            (job / "artifacts").mkdir(parents=True)
            (job / "artifacts" / "model.patch").write_text(_trial_patch(rng, t, defect))
            (job / "result.json").write_text(json.dumps({
                "task_name": task_id, "trial_name": trial_id,
                "agent_info": {"name": "perf-agent", "model_info": {"name": model}},
                "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None}))
            count += 1
    return count


def _child(bench_dir: str, out_dir: str, mode: str) -> int:
    """One headless audit of the generated benchmark (runs in the measured process)."""
    from collections import deque

    sys.path.insert(0, str(ROOT / "tests"))
    from engine_fakes import FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, cand, tools_factory

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.commands.audit_cmd import run_session
    from testjack_tui.engine.session import AuditSession, SessionConfig

    bench = load_benchmark(bench_dir)
    trials = [t for t in bench.trials if t.official_pass]
    # Each audit hands in two candidates: one of the requirements at random (a witness when the
    # trial misses it) and "alias" (a witness only on the trials that miss alias).
    rng = random.Random(1)
    chains = {t.id: [[cand(t.task_id, t.id, 1, rng.choice(REQS))], [cand(t.task_id, t.id, 2, "alias")]]
              for t in trials}
    roles = FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst({}))
    # The fake's call log is for tests' assertions, not part of the engine: keep none of it.
    sandbox = FakeSandbox(dict(bench.tasks), {t.id: t for t in trials}, calls=deque(maxlen=1))  # type: ignore[arg-type]
    cfg = SessionConfig(benchmark=bench_dir, mode=mode, sampler="cluster", seed=0, backend="local")
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=bench, roles=roles, sandbox_factory=sandbox,
                                               tools_factory=tools_factory))
    with open(Path(out_dir) / "progress.txt", "w") as progress:
        return run_session(session, Path(out_dir), verbose=False, ask_operator=False, stream=progress)


def _audit(bench: Path, mode: str) -> tuple[float, float, dict]:
    out = Path(tempfile.mkdtemp(prefix="tj-perf-1k-out-"))
    try:
        res, wall, rss = child_peak_rss_mb([PYTHON, "-m", "tests.perf.audit_rss", str(bench), str(out), mode],
                                           cwd=ROOT)
        if res.returncode != 0:
            raise RuntimeError(f"audit exited {res.returncode}: {res.stderr.decode()[-500:]!r}")
        summary = json.loads((out / "summary.json").read_text())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return rss, wall, summary


def run(quick: bool = False) -> list[dict]:
    root = Path(tempfile.mkdtemp(prefix="tj-perf-1k-"))
    try:
        full_dir = root / "full"
        full_dir.mkdir()
        full = generate(full_dir)
        rss, wall, summary = _audit(full_dir, "per-trial")
        base, _, base_rss = child_peak_rss_mb([PYTHON, "-m", "testjack_tui.cli", "list", str(full_dir)], cwd=ROOT)
        if base.returncode != 0:
            raise RuntimeError(f"list exited {base.returncode}: {base.stderr.decode()[-300:]!r}")
        growth = ""
        if not quick:  # CI time: the growth per trial in the full run only
            small_dir = root / "small"
            small_dir.mkdir()
            small = generate(small_dir, max(1, TASKS // 10), PER_TASK)
            small_rss, _, _ = _audit(small_dir, "per-trial")
            growth = (f"; {fmt_mb(small_rss)} for {small} trials, so about "
                      f"{(rss - small_rss) / (full - small) * 1024:.0f} KB more per trial")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    tasks = summary.get("tasks") or {}
    audited = sum(len(t.get("trials") or {}) for t in tasks.values()) if isinstance(tasks, dict) else 0
    return [row(f"6b peak RSS, headless audit of {full:,} trials", fmt_mb(rss), fmt_mb(base_rss),
                ratio(rss, base_rss), f"<= {TARGET_MB:g} MB", rss <= TARGET_MB,
                note=f"generated Harbor benchmark, {TASKS} tasks x {PER_TASK} trials (~150-line diffs); "
                     f"per-trial mode, the engine's simulated sandbox and fake roles (no containers, "
                     f"no LLM); {audited} trials in the summary, {summary.get('usage', {}).get('test_runs')} "
                     f"test runs, {fmt_s(wall)}{growth}; baseline = `testjack-tui list` of the same "
                     f"benchmark; our process only")]


if __name__ == "__main__":
    sys.exit(_child(*sys.argv[1:4]))
