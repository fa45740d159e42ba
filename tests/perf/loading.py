"""3. Loading: a synthetic SWE-bench-shaped benchmark (2,000 tasks, 20,000 trials from 10 models;
the same size in quick mode, 2 rounds instead of 3) loaded and listed by `testjack-tui list` in
a fresh process, vs a plain `json` parse of the same files in a fresh process (the floor).
Targets: <= 3 s and <= 400 MB peak RSS, and <= 3x the floor's time.

The files: `dataset.jsonl` (SWE-bench rows: patch, test_patch, problem statement, hints,
FAIL_TO_PASS / PASS_TO_PASS as JSON-encoded strings), one predictions `.jsonl` per model, and
the harness's verdicts as `logs/run_evaluation/<run>/<model>/<instance>/report.json` for half of
the models and a results file (`resolved_ids`) for the other half. Sizes follow SWE-bench
Verified's medians (patch ~1.5 KB, test patch ~2.5 KB, statement ~1.5 KB, ~40 P2P ids).
"""
from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from .common import PYTHON, ROOT, child_peak_rss_mb, fmt_mb, fmt_s, ratio, row

TIME_TARGET = 3.0
RSS_TARGET = 400.0
RATIO_TARGET = 3.0
MODELS = 10
REPOS = ["astropy/astropy", "django/django", "matplotlib/matplotlib", "psf/requests",
         "pydata/xarray", "pytest-dev/pytest", "scikit-learn/scikit-learn", "sphinx-doc/sphinx",
         "sympy/sympy", "pylint-dev/pylint"]


def _patch(rng: random.Random, path: str, lines: int) -> str:
    body = "".join(f"+    value_{rng.randrange(10**6)} = compute_{rng.randrange(999)}(arg, key={i})\n"
                   for i in range(lines))
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -10,3 +10,{lines + 3} @@ def handler(arg):\n     pass\n{body}     return arg\n")


def generate(root: Path, tasks: int, models: int = MODELS, seed: int = 0) -> Path:
    """Write the benchmark under root; returns its manifest."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    ids = []
    with open(root / "dataset.jsonl", "w") as fh:
        for i in range(tasks):
            repo = REPOS[i % len(REPOS)]
            iid = f"{repo.replace('/', '__')}-{10000 + i}"
            ids.append(iid)
            src = f"{repo.split('/')[1]}/module_{i % 50}.py"
            test = f"tests/test_module_{i % 50}.py"
            fh.write(json.dumps({
                "instance_id": iid, "repo": repo, "base_commit": f"{rng.getrandbits(160):040x}",
                "patch": _patch(rng, src, 20), "test_patch": _patch(rng, test, 35),
                "problem_statement": " ".join(f"word{rng.randrange(5000)}" for _ in range(220)),
                "hints_text": " ".join(f"hint{rng.randrange(5000)}" for _ in range(40)),
                "version": f"{rng.randrange(1, 5)}.{rng.randrange(10)}",
                "created_at": "2023-01-01T00:00:00Z", "environment_setup_commit": f"{rng.getrandbits(160):040x}",
                "FAIL_TO_PASS": json.dumps([f"{test}::test_new_{k}" for k in range(3)]),
                "PASS_TO_PASS": json.dumps([f"{test}::test_old_{k}" for k in range(40)]),
            }) + "\n")
    manifest = ["name = \"synthetic-swebench\"", "format = \"swebench\"", "dataset = \"dataset.jsonl\"",
                "predictions = [" + ", ".join(f'"preds/model-{m}.jsonl"' for m in range(models)) + "]",
                "reports = \"logs/run_evaluation\""]
    (root / "preds").mkdir(exist_ok=True)
    for m in range(models):
        name = f"org/model-{m}"
        resolved = []
        with open(root / "preds" / f"model-{m}.jsonl", "w") as fh:
            for i, iid in enumerate(ids):
                src = f"{REPOS[i % len(REPOS)].split('/')[1]}/module_{i % 50}.py"
                fh.write(json.dumps({"instance_id": iid, "model_name_or_path": name,
                                     "model_patch": _patch(rng, src, rng.randrange(10, 40))}) + "\n")
                if rng.random() < 0.4:
                    resolved.append(iid)
        if m % 2 == 0:  # harness report tree
            for iid in ids:
                folder = root / "logs" / "run_evaluation" / "run1" / name.replace("/", "__") / iid
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "report.json").write_text(json.dumps({iid: {
                    "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                    "resolved": iid in resolved, "tests_status": {}}}))
        else:  # harness summary with resolved ids
            (root / f"model-{m}.run1.json").write_text(json.dumps({
                "total_instances": len(ids), "resolved_ids": resolved}))
            manifest.append(f"[[results]]\nfile = \"model-{m}.run1.json\"\nmodel = \"{name}\"")
    path = root / "benchmark.toml"
    path.write_text("\n".join(manifest) + "\n")
    return path


# The floor: read and json-parse every file the loader reads, keep the rows, count them.
FLOOR = r"""
import json, os, sys
root = sys.argv[1]
rows = [json.loads(line) for line in open(os.path.join(root, "dataset.jsonl"))]
preds = []
for name in sorted(os.listdir(os.path.join(root, "preds"))):
    preds += [json.loads(line) for line in open(os.path.join(root, "preds", name))]
reports = []
for folder, _, files in os.walk(os.path.join(root, "logs")):
    for name in files:
        with open(os.path.join(folder, name)) as fh:
            reports.append(json.load(fh))
results = [json.load(open(os.path.join(root, n))) for n in os.listdir(root) if n.endswith(".run1.json")]
print(len(rows), len(preds), len(reports), len(results))
"""


def run(quick: bool = False) -> list[dict]:
    tasks = 2000  # quick mode too: the targets are for this size (at a quarter, start-up dominates)
    root = Path(tempfile.mkdtemp(prefix="tj-perf-load-"))
    try:
        manifest = generate(root, tasks)
        trials = tasks * MODELS
        ours_argv = [PYTHON, "-m", "testjack_tui.cli", "list", str(manifest)]
        floor_argv = [PYTHON, "-c", FLOOR, str(root)]
        ours_t, ours_rss, floor_t, floor_rss = [], [], [], []
        # Warm the page cache once for both, then interleave.
        child_peak_rss_mb(floor_argv, cwd=ROOT)
        for _ in range(2 if quick else 3):
            res, wall, rss = child_peak_rss_mb(floor_argv, cwd=ROOT)
            if res.returncode != 0:
                raise RuntimeError(f"json floor failed: {res.stderr[-300:]!r}")
            floor_t.append(wall)
            floor_rss.append(rss)
            res, wall, rss = child_peak_rss_mb(ours_argv, cwd=ROOT)
            if res.returncode != 0:
                raise RuntimeError(f"testjack-tui list failed: {res.stderr[-500:]!r}")
            out = res.stdout.decode()
            if f"{tasks} tasks, {trials} trials" not in out:
                raise RuntimeError(f"listing does not show {tasks} tasks / {trials} trials: {out[-300:]!r}")
            ours_t.append(wall)
            ours_rss.append(rss)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    o, b = min(ours_t), min(floor_t)  # best of n: the least disturbed run of each
    r = ratio(o, b)
    what = (f"{tasks} tasks / {trials} trials ({MODELS} models, {trials // 2} report.json files); "
            f"fresh process each, best of {len(ours_t)} interleaved")
    size = ""
    return [
        row(f"3 load+list {tasks} tasks/{trials} trials vs json floor", fmt_s(o), fmt_s(b), r,
            f"<= {RATIO_TARGET}x", r is not None and r <= RATIO_TARGET, note=what),
        row(f"3 load+list {tasks} tasks/{trials} trials wall time", fmt_s(o), fmt_s(b), r,
            f"<= {TIME_TARGET:g} s{size}", o <= TIME_TARGET, gate=False, note=what),
        row(f"3 load+list {tasks} tasks/{trials} trials peak RSS", fmt_mb(max(ours_rss)),
            fmt_mb(max(floor_rss)), ratio(max(ours_rss), max(floor_rss)),
            f"<= {RSS_TARGET:g} MB{size}", max(ours_rss) <= RSS_TARGET,
            note=what + "; peak RSS (VmHWM) of the listing process itself"),
    ]


if __name__ == "__main__":  # generate a benchmark to look at: python -m tests.perf.loading DIR [TASKS]
    print(generate(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2000))
