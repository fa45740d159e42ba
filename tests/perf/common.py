"""Shared pieces of the perf runner: result rows, the table, timing and memory helpers.

A row is a plain dict (the shape `sampling_sim.run` already returns):
    name, ours, baseline, ratio, target, status   (+ optional: gate, note)
status is PASS / FAIL / INFO / SKIP... / ERROR. `gate=False` marks a row whose target is an
absolute wall time: shown with its verdict, but it does not decide the exit status of
`--quick` (CI machines are too noisy for absolute times; the full run gates on everything).
"""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CORES = os.cpu_count() or 1


def row(name: str, ours, baseline, ratio, target: str, ok: bool | None, *, gate: bool = True,
        note: str = "") -> dict:
    """ok=None: informational row (no target)."""
    status = "INFO" if ok is None else ("PASS" if ok else "FAIL")
    return {"name": name, "ours": ours, "baseline": baseline,
            "ratio": None if ratio is None else round(ratio, 3), "target": target,
            "status": status, "gate": gate, "note": note}


def ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def fmt_mb(mb: float | None) -> str:
    return "-" if mb is None else f"{mb:.0f} MB"


def median(xs) -> float:
    return statistics.median(xs)


def quantile(xs, q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; fine for a few dozen samples."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def timed(fn, *args, **kwargs) -> float:
    t = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t


def child_peak_rss_mb(argv: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run argv in a subprocess; (result, wall seconds, peak RSS of that process in MB).

    Peak RSS comes from wait4's rusage of this one child: its own high-water mark, not its
    children's (a podman service it spawns is excluded)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, **kwargs)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = err = None
    if proc.stdout:
        out = proc.stdout.read()
    if proc.stderr:
        err = proc.stderr.read()
    result = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    return result, wall, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def self_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


HEADER = ("name", "ours", "baseline", "ratio", "target", "status")


def print_table(rows: list[dict], out=sys.stdout) -> None:
    shown = []
    for r in rows:
        status = r.get("status", "")
        if r.get("gate") is False and status in ("PASS", "FAIL"):
            status += "*"
        shown.append({**r, "status": status})
    cells = [HEADER] + [tuple("-" if r.get(h) is None else str(r.get(h)) for h in HEADER) for r in shown]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    for i, c in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip(), file=out)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=out)
    if any(r.get("gate") is False for r in rows):
        print("* absolute wall-time target: reported, but not gating in --quick (noisy CI machines)",
              file=out)
