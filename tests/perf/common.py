"""Shared pieces of the perf runner: result rows, the table, timing and memory helpers.

A row is a plain dict (the shape `sampling_sim.run` already returns):
    name, ours, baseline, ratio, target, status   (+ optional: gate, note)
status is PASS / FAIL / INFO / SKIP... / ERROR. `gate=False` marks a row whose target is an
absolute wall time: shown with its verdict, but it does not decide the exit status of
`--quick` (CI machines are too noisy for absolute times; the full run gates on everything).
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CORES = os.cpu_count() or 1


def row(name: str, ours, baseline, ratio, target: str, ok: bool | None, *, gate: bool = True,
        note: str = "", metrics: dict | None = None) -> dict:
    """ok=None: informational row (no target). metrics: measured figures other parts of the run
    use (the cost model), by name."""
    status = "INFO" if ok is None else ("PASS" if ok else "FAIL")
    return {"name": name, "ours": ours, "baseline": baseline,
            "ratio": None if ratio is None else round(ratio, 3), "target": target,
            "status": status, "gate": gate, "note": note, "metrics": dict(metrics or {})}


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


# Runs `-m module args` or `-c code args` as __main__ and writes the process's VmHWM (peak RSS
# of its own address space, KiB) to $TJ_PERF_HWM at exit. Not wait4's ru_maxrss: Linux carries
# the parent's high-water mark over fork+exec into it, so a child of a 100 MB runner would never
# report less than 100 MB.
HWM_WRAPPER = r"""
import atexit, os, runpy, sys
def _hwm():
    with open('/proc/self/status') as fh:
        for line in fh:
            if line.startswith('VmHWM:'):
                with open(os.environ['TJ_PERF_HWM'], 'w') as out:
                    out.write(line.split()[1])
atexit.register(_hwm)
mode, target = sys.argv[1], sys.argv[2]
if mode == '-m':
    sys.argv = [target] + sys.argv[3:]
    runpy.run_module(target, run_name='__main__', alter_sys=True)
else:
    sys.argv = ['-c'] + sys.argv[3:]
    exec(compile(target, '<string>', 'exec'), {'__name__': '__main__', '__builtins__': __builtins__})
"""


def child_peak_rss_mb(argv: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run a Python child (argv = [python, "-m", module, ...] or [python, "-c", code, ...]);
    (result with stdout/stderr bytes, wall seconds, peak RSS of that process alone in MB).

    The podman service or other processes it starts are not counted. Output goes through
    temporary files (a pipe would block the child once it holds 64 KB while we wait)."""
    if len(argv) < 3 or argv[1] not in ("-m", "-c"):
        raise ValueError("child_peak_rss_mb runs `python -m MODULE ...` or `python -c CODE ...`")
    with tempfile.TemporaryDirectory() as tmp:
        hwm = os.path.join(tmp, "hwm")
        env = {**kwargs.pop("env", os.environ), "TJ_PERF_HWM": hwm}
        with open(os.path.join(tmp, "out"), "w+b") as out, open(os.path.join(tmp, "err"), "w+b") as err:
            t = time.perf_counter()
            proc = subprocess.run([argv[0], "-c", HWM_WRAPPER, *argv[1:]], stdout=out, stderr=err,
                                  stdin=subprocess.DEVNULL, env=env, **kwargs)
            wall = time.perf_counter() - t
            out.seek(0)
            err.seek(0)
            result = subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read())
        try:
            with open(hwm) as fh:
                peak = int(fh.read().strip()) / 1024
        except (OSError, ValueError):
            peak = float("nan")  # the child died before its exit handlers ran
    return result, wall, peak


HEADER = ("name", "ours", "baseline", "ratio", "target", "status")
QUICK_HEADER = HEADER[:5] + ("floor",) + HEADER[5:]
# --quick fails a row only this far beyond its target: one quick run on a shared 2-core machine
# scatters by a fifth (0.051x against 0.05x is noise, 0.07x is a regression).
QUICK_MARGIN = 1.25


@dataclass(frozen=True)
class Floor:
    """Where --quick fails a row: its target moved by QUICK_MARGIN, on the figure it compares."""
    op: str  # "<=" or ">="
    limit: float
    unit: str  # "x": the row's ratio; "MB": its own figure

    @property
    def shown(self) -> str:
        return f"{self.op} {self.limit:.4g}{'x' if self.unit == 'x' else ' ' + self.unit}"

    def passed_by(self, r: dict) -> bool:
        measured = r.get("ratio") if self.unit == "x" else _number(r.get("ours"))
        if measured is None:
            return False
        return measured <= self.limit if self.op == "<=" else measured >= self.limit


def _number(text) -> float | None:
    m = re.match(r"\s*([0-9][0-9,]*(?:\.[0-9]+)?)", str(text or ""))
    return float(m.group(1).replace(",", "")) if m else None


def quick_floor(r: dict) -> Floor | None:
    """The row's floor for --quick, None when its target is no plain bound on its ratio or its
    size in MB (then the target itself is the floor)."""
    m = re.match(r"\s*(<=|>=)\s*([0-9.]+)(x| MB)?\s*(?:$|\()", str(r.get("target") or ""))
    if not m:
        return None
    op, value, unit = m.group(1), float(m.group(2)), (m.group(3) or "x").strip()
    if unit == "x" and r.get("ratio") is None:
        return None
    return Floor(op, value * QUICK_MARGIN if op == "<=" else value / QUICK_MARGIN, unit)


def apply_quick_floors(rows: list[dict]) -> None:
    """--quick: each row gets its floor; a missed target within it becomes NEAR (not gating)."""
    for r in rows:
        floor = quick_floor(r)
        r["floor"] = floor.shown if floor else "= target"
        if r["status"] == "FAIL" and floor and floor.passed_by(r):
            r["status"] = "NEAR"


def print_table(rows: list[dict], quick: bool = False, out=sys.stdout) -> None:
    """The table; in quick mode rows with an absolute wall-time target get a * (not gating), and
    every row shows its floor (where --quick fails it)."""
    header = QUICK_HEADER if quick else HEADER
    shown = []
    for r in rows:
        status = r.get("status", "")
        if quick and r.get("gate") is False and status in ("PASS", "FAIL"):
            status += "†" if r.get("gate_reason") else "*"
        shown.append({**r, "status": status})
    cells = [header] + [tuple("-" if r.get(h) is None else str(r.get(h)) for h in header) for r in shown]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    for i, c in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip(), file=out)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=out)
    if quick:
        print(f"floor: where --quick fails a row, {QUICK_MARGIN}x beyond its target (NEAR: target "
              "missed within that margin, reported, not gating; '= target': the target is the floor)",
              file=out)
    if quick and any(r.get("gate") is False and not r.get("gate_reason") for r in rows):
        print("* absolute wall-time target: reported, not gating in --quick (noisy CI machines); "
              "the full run gates on it", file=out)
    for r in rows:
        if quick and r.get("gate") is False and r.get("gate_reason"):
            print(f"† {r['name']}: {r['gate_reason']}; reported, not gating in --quick; "
                  "the full run gates on it", file=out)
