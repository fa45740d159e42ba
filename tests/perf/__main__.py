"""Performance measurements of TestJack TUI, side by side with their baselines (issue 9).

    python -m tests.perf            # everything, full sizes (< 15 minutes on 2 cores)
    python -m tests.perf --quick    # smaller sizes (CI's perf step); exit 1 only on a regression
    python -m tests.perf --only 2 4 # some measurements (numbers as in the table)

Prints one table: name, our figure, the baseline's figure, ratio (ours / baseline), target,
status; then what each row measured and on what; then the verdict; and last the cost model: what
auditing 100, 1,000 and 10,000 trials takes on this machine (and on a Ray cluster, when row 9
ran), per-trial vs lightweight, from this run's measured per-run and per-world costs
(tests/perf/cost_model.py). Machines are noisy: ratios from the same run
are the figures to trust, absolute times are context. Rows whose target is an absolute wall time
(marked *) and targets out of reach on this machine or recorded as known misses (marked †, with the
reason) do not decide the exit status of --quick; the full run gates on every target. In --quick a
row fails only past its floor, QUICK_MARGIN beyond its target (a regression, not noise); a row
between its target and its floor is shown as NEAR. Every row prints its floor.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from .common import CORES, apply_quick_floors, print_table
from .cost_model import print_cost_model

MEASUREMENTS = {
    "1": ("world start", "world_start"),
    "2": ("witness replay", "replay"),
    "3": ("loading", "loading"),
    "4": ("UI under load, first screen", "ui_lag"),
    "5": ("sampling", "sampling_sim"),
    "6": ("memory", "memory"),
    "7": ("mutation evidence", "mutation"),
    "8": ("T0 through the benchmark's flow", "t0_flow"),
    "9": ("ray backend overhead", "ray_replay"),
    "10": ("real-size repository (full run only)", "real_size"),
    "11": ("Go replay (full run only)", "go_replay"),
    "12": ("own run and environment-varied replay", "varied_replay"),
    "13": ("run path: image ids and flaky re-runs", "run_path"),
    "14": ("CPU and bytes of one test run per runner (full run only)", "run_cpu"),
}
# Names every full table holds (the quick test checks them).
EXPECTED_PREFIXES = ("1 world start", "2 replay", "3 load+list", "4 UI key->screen lag",
                     "4b first screen", "5 sampling", "6 peak RSS", "6b peak RSS", "7 mutation evidence", "8 T0 flow",
                     "9 ray replay", "13 image id", "13b flaky control")


def _run_one(number: str, quick: bool) -> list[dict]:
    title, module_name = MEASUREMENTS[number]
    t = time.perf_counter()
    try:
        module = __import__(f"tests.perf.{module_name}", fromlist=["run"])
        rows = module.run(quick)
    except Exception as exc:  # one broken measurement must not hide the others
        traceback.print_exc()
        return [{"name": f"{number} {title}", "ours": None, "baseline": None, "ratio": None,
                 "target": "-", "status": "ERROR", "gate": True,
                 "note": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}]
    if number == "5":  # sampling_sim names its rows by population; number them like the rest
        for r in rows:
            r["name"] = f"5 sampling {r['name']}"
            r.setdefault("note", "simulated lightweight loop with the labels as a perfect auditor, "
                                 "uniform vs the `cluster` sampler over seeds (tests/perf/sampling_sim.py)")
    elapsed = time.perf_counter() - t
    print(f"[perf] {number} {title}: {elapsed:.0f} s", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.perf", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes; for CI (< 3 minutes)")
    parser.add_argument("--only", nargs="+", choices=sorted(MEASUREMENTS, key=int), help="run only these")
    args = parser.parse_args(argv)
    wanted = sorted(args.only or MEASUREMENTS, key=int)

    own_home = None
    if not os.environ.get("TESTJACK_HOME"):  # sessions and config of this run stay out of yours
        own_home = tempfile.mkdtemp(prefix="tj-perf-home-")
        os.environ["TESTJACK_HOME"] = own_home
    started, load0 = time.perf_counter(), os.getloadavg()[0]
    rows: list[dict] = []
    try:
        # Timing measurements one after another, alone on the machine (as far as we control it).
        for number in [n for n in wanted if n not in ("5", "6")]:
            rows += _run_one(number, args.quick)
        # Sampling (a simulation: counts rounds, not seconds) and memory (peak RSS, not time)
        # are not timings: run them side by side.
        late: dict[str, list[dict]] = {}
        with ThreadPoolExecutor(max_workers=1) as pool:
            memory = pool.submit(_run_one, "6", args.quick) if "6" in wanted else None
            if "5" in wanted:
                late["5"] = _run_one("5", args.quick)
            if memory is not None:
                late["6"] = memory.result()
        rows += late.get("5", []) + late.get("6", [])
    finally:
        if own_home:
            shutil.rmtree(own_home, ignore_errors=True)
    wall = time.perf_counter() - started

    if args.quick:
        apply_quick_floors(rows)
    print(f"TestJack perf ({'quick' if args.quick else 'full'}): {CORES} cores, load average "
          f"{load0:.1f} at start, {os.getloadavg()[0]:.1f} at end, {wall:.0f} s in all. "
          f"ratio = ours / baseline.")
    print_table(rows, quick=args.quick)
    print("\nWhat each row measured:")
    for r in rows:
        if r.get("note"):
            print(f"- {r['name']}: {r['note']}")
        if r.get("gate_reason") and not args.quick:
            print(f"  why the target is missed: {r['gate_reason']}")

    def failing(r: dict) -> bool:
        if r["status"] == "ERROR":
            return True
        if r["status"] != "FAIL":
            return False
        return not (args.quick and r.get("gate") is False)

    missed = [r["name"] for r in rows if failing(r)]
    if not args.only:  # a whole run lists every measurement
        names = [r["name"] for r in rows]
        missed += [f"{p} (missing from the table)" for p in EXPECTED_PREFIXES
                   if not any(n.startswith(p) for n in names)]
    if missed:
        print(f"\nMISSED {len(missed)} target(s): " + "; ".join(missed))
    else:
        print("\nAll gating targets met.")
    print_cost_model(rows)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
