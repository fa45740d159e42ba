"""What auditing N trials costs on this machine, from the figures measured in the same perf run.

Inputs (each row that measures one hands it over in its `metrics`):
- r: slot-seconds of one test run (row 2: the engine's replay at W=20, wall x cores / trials);
- b: slot-seconds of one world snapshot build (row 2: `cores` fresh trial snapshots built at once);
- a lightweight scripted audit of the demo (row 6): trials and audit rounds per task, and the
  test runs it made in all.
- Ray (row 9, when it ran): the overhead it adds per run and the operator's dispatch time per call.

Model, per task of T trials (both modes check every trial: its world and its T0 run, plus the
null and reference worlds and their T0 runs):
    check      = T x (b + r) + 2 x (b + r)
    per round  = u runs, u = (runs the audit made - check runs) / its rounds: validation of the
                 round's candidates and replay of its witnesses over the task's trials
    lightweight = check + R x u x r      (R = the audit's rounds per task)
    per-trial   = check + T x u x r      (every trial is audited: T rounds)
Local wall = slot-seconds / cores. Ray: (slot-seconds + ops x overhead) / (nodes x slots), but no
less than ops x dispatch time. Test execution only: the agents' LLM time and dollars come on top
(the report's usage section has them per session).
"""
from __future__ import annotations

import sys

from .common import CORES

SIZES = (100, 1_000, 10_000)
RAY_NODES, RAY_SLOTS = 10, 8


def fmt_duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def collect(rows: list[dict]) -> dict:
    metrics: dict = {}
    for r in rows:
        metrics.update(r.get("metrics") or {})
    return metrics


def plan(m: dict, n: int) -> dict[str, tuple[float, int]]:
    """mode -> (slot-seconds, container operations) for n trials."""
    r, b = m["run_slot_s"], m["world_slot_s"]
    tasks = m["audit_tasks"]
    t = m["audit_trials"] / tasks
    rounds = m["audit_rounds"] / tasks
    check_runs = tasks * (t + 2)
    per_round = max(0.0, m["audit_test_runs"] - check_runs) / m["audit_rounds"]
    task_count = n / t
    check_s, check_ops = task_count * (t + 2) * (b + r), task_count * (t + 2) * 2
    out = {}
    for mode, audited in (("per-trial", t), ("lightweight", rounds)):
        runs = task_count * audited * per_round
        out[mode] = (check_s + runs * r, int(check_ops + runs))
    return out


def lines(rows: list[dict]) -> list[str]:
    m = collect(rows)
    needed = ("run_slot_s", "world_slot_s", "audit_tasks", "audit_trials", "audit_rounds",
              "audit_test_runs")
    missing = [k for k in needed if k not in m]
    if missing:
        return ["Cost model: needs rows 2 and 6 of the same run (e.g. `--only 2 6 9`); "
                f"missing {', '.join(missing)}."]
    ray = "ray_overhead_slot_s" in m
    tasks = m["audit_tasks"]
    t, rounds = m["audit_trials"] / tasks, m["audit_rounds"] / tasks
    per_round = max(0.0, m["audit_test_runs"] - tasks * (t + 2)) / m["audit_rounds"]
    out = [f"Cost model: test execution for auditing N trials, from this run's measured costs "
           f"(a run {m['run_slot_s']:.2f} slot-s, a world build {m['world_slot_s']:.2f} slot-s; "
           f"per task: {t:.0f} trials, {rounds:.1f} lightweight rounds of {per_round:.1f} runs, "
           f"from a {m.get('audit_mode') or 'lightweight'} scripted audit of {tasks} demo task(s)). "
           f"Agents' LLM time and dollars come on top."]
    header = ["N trials", f"per-trial, {CORES} cores", f"lightweight, {CORES} cores"]
    if ray:
        header += [f"per-trial, ray {RAY_NODES}x{RAY_SLOTS}", f"lightweight, ray {RAY_NODES}x{RAY_SLOTS}"]
    table = [header]
    for n in SIZES:
        p = plan(m, n)
        cells = [f"{n:,}"] + [fmt_duration(p[mode][0] / CORES) for mode in ("per-trial", "lightweight")]
        if ray:
            o, d = m["ray_overhead_slot_s"], m.get("ray_dispatch_s", 0.0)
            for mode in ("per-trial", "lightweight"):
                slot_s, ops = p[mode]
                cells.append(fmt_duration(max((slot_s + ops * o) / (RAY_NODES * RAY_SLOTS), ops * d)))
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, cells in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    if not ray:
        out.append("(Ray columns: add row 9 to the run, `--only 2 6 9`.)")
    return out


def print_cost_model(rows: list[dict], out=sys.stdout) -> None:
    print("", file=out)
    for line in lines(rows):
        print(line, file=out)
