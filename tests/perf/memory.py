"""6. Memory: peak RSS of a headless audit of the whole demo benchmark
(`testjack-tui audit benchmarks/demo --headless --auto-approve --agent scripted --seed 0 --out DIR`;
quick mode: one task), for our process alone (wait4 rusage of that process: the podman service
it starts and the containers are excluded). Target <= 300 MB. Baseline for context: the same
interpreter listing the demo (`testjack-tui list benchmarks/demo`), i.e. the CLI's floor.
6b, the same at scale (1,000 trials, the engine's simulated sandbox), is tests/perf/audit_rss.py.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import traceback
from pathlib import Path

from .common import PYTHON, ROOT, child_peak_rss_mb, fmt_mb, fmt_s, ratio, row
from .demo import DEMO, DEMO_TASK

TARGET_MB = 300.0


def run(quick: bool = False) -> list[dict]:
    """Row 6 (real podman) and row 6b (no containers): one failing does not hide the other."""
    from .audit_rss import run as at_scale

    rows = []
    for measure in (_demo_audit, at_scale):
        try:
            rows += measure(quick)
        except Exception as exc:  # noqa: BLE001 - reported as the row's ERROR, like the runner does
            traceback.print_exc()
            name = "6 peak RSS, demo" if measure is _demo_audit else "6b peak RSS at scale"
            rows.append({"name": name, "ours": None, "baseline": None, "ratio": None, "target": "-",
                         "status": "ERROR", "gate": True, "note": f"{type(exc).__name__}: {str(exc)[:200]}"})
    return rows


def _demo_audit(quick: bool) -> list[dict]:
    out = Path(tempfile.mkdtemp(prefix="tj-perf-audit-"))
    try:
        argv = [PYTHON, "-m", "testjack_tui.cli", "audit", str(DEMO), "--headless", "--auto-approve",
                "--agent", "scripted", "--seed", "0", "--out", str(out)]
        if quick:
            argv += ["--task", DEMO_TASK]
        res, wall, rss = child_peak_rss_mb(argv, cwd=ROOT)
        if res.returncode != 0:
            raise RuntimeError(f"audit exited {res.returncode}: {res.stderr.decode()[-500:]!r}")
        summary = json.loads((out / "summary.json").read_text())
        base, _, base_rss = child_peak_rss_mb([PYTHON, "-m", "testjack_tui.cli", "list", str(DEMO)], cwd=ROOT)
        if base.returncode != 0:
            raise RuntimeError(f"list exited {base.returncode}: {base.stderr.decode()[-300:]!r}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    tasks = len(summary.get("tasks", {})) if isinstance(summary.get("tasks"), dict) else "?"
    audited = [t for t in (summary.get("tasks") or {}).values() if t.get("rounds")]
    metrics = {}
    if audited:  # the cost model's counts: what a lightweight audit of a task ran, measured
        metrics = {"audit_tasks": len(audited),
                   "audit_trials": sum(len(t.get("trials") or {}) for t in audited),
                   "audit_rounds": sum(len(t["rounds"]) for t in audited),
                   "audit_test_runs": int((summary.get("usage") or {}).get("test_runs") or 0),
                   "audit_mode": summary.get("mode") or ""}
    scope = f"task {DEMO_TASK}" if quick else "whole demo"
    return [row(f"6 peak RSS, headless audit of the {scope}", fmt_mb(rss), fmt_mb(base_rss),
                ratio(rss, base_rss), f"<= {TARGET_MB:g} MB", rss <= TARGET_MB, metrics=metrics,
                note=f"scripted agents, auto-approve, seed 0; {tasks} tasks audited in {fmt_s(wall)}; "
                     f"baseline = `testjack-tui list benchmarks/demo`; our process only")]
