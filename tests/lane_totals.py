"""Where a parallel run's time went, per podman lane (see tests/lanes.py):
`python tests/lane_totals.py LOG` reads the output of the README's test command run with
`-v --durations=0` and prints the seconds each xdist worker and each lane spent (setup, call and
teardown of its tests), then each file's seconds by lane, largest first. The run's wall time is
its slower worker. A test's lane is the xdist group its node id carries (`...::test@podman-b`:
`--dist loadgroup` adds it in the durations too, so a `-q` run without `[gwN]` lines still gives
every lane; only the worker totals need `-v`); no group is a pure test (lane "-").
`--table` then prints tests/lanes.py's LANE_SECONDS from this run (paste it there: it orders the
queue) and the wall time that queue gives."""
from __future__ import annotations

import re
import sys
from collections import defaultdict

RESULT = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.+?)\s*$", re.M)
# A failed test's durations line may lack its group; the short summary's line carries it.
SUMMARY = re.compile(r"^(?:FAILED|ERROR) (.+?@[\w-]+)(?= - |\s*$)", re.M)
DURATION = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(.+?)\s*$", re.M)  # ids may hold spaces


def totals(text: str) -> tuple[dict[str, float], dict[str, float], dict[tuple[str, str], float]]:
    """(seconds by worker, by lane, by (lane, file)); a test without a group is lane "-"."""
    worker: dict[str, str] = {}
    lane: dict[str, str] = {}
    for m in RESULT.finditer(text):
        node, _, group = m.group(2).partition("@")
        worker[node], lane[node] = m.group(1), group or "-"
    for m in SUMMARY.finditer(text):
        node, _, group = m.group(1).partition("@")
        if group:
            lane.setdefault(node, group)
    by_worker: dict[str, float] = defaultdict(float)
    by_lane: dict[str, float] = defaultdict(float)
    by_file: dict[tuple[str, str], float] = defaultdict(float)
    for m in DURATION.finditer(text):
        node, _, group = m.group(2).partition("@")
        seconds = float(m.group(1))
        where = lane.get(node) or group or "-"
        if not where.startswith("podman"):  # a pure file kept on one worker for its module fixture
            where = "-"
        if node in worker:
            by_worker[worker[node]] += seconds
        by_lane[where] += seconds
        by_file[(where, node.split("::")[0])] += seconds
    return by_worker, by_lane, by_file


def table(by_file: dict[tuple[str, str], float]) -> dict[str, float]:
    """LANE_SECONDS (tests/lanes.py) of a run: each podman file's seconds, whichever its lane."""
    seconds: dict[str, float] = defaultdict(float)
    for (lane, name), s in by_file.items():
        if lane != "-":
            seconds[name.rpartition("/")[2]] += s
    return {name: round(s) for name, s in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))}


def main(path: str, rows: int = 60, as_table: bool = False) -> None:
    by_worker, by_lane, by_file = totals(open(path, encoding="utf-8").read())
    if by_worker:
        print("by worker:", ", ".join(f"{k} {v:.0f} s" for k, v in sorted(by_worker.items())))
    print("by lane:  ", ", ".join(f"{k} {v:.0f} s" for k, v in sorted(by_lane.items())))
    for (lane, name), seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:rows]:
        print(f"{seconds:8.1f}  {lane:9s} {name}")
    if as_table:
        from lanes import PINNED, SAFE_FILES, simulated_wall

        seconds = table(by_file)
        print("\nLANE_SECONDS: dict[str, float] = {")
        for name, s in seconds.items():
            print(f"    {name!r}: {s},")
        print("}")
        print("safe files not in the table, counted as DEFAULT_SECONDS:",
              ", ".join(sorted(SAFE_FILES - set(seconds))) or "none")
        pure = by_lane.get("-", 0.0)
        pinned = by_lane.get(PINNED, 0.0)
        groups = [v for k, v in by_lane.items() if k not in (PINNED, "-")]
        print(f"wall time the queue gives on two workers: {simulated_wall(pinned, groups, pure):.0f} s "
              f"(lane podman {pinned:.0f} s, {len(groups)} other groups {sum(groups):.0f} s, "
              f"pure tests {pure:.0f} s)")

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--table"]
    main(args[0], *(int(a) for a in args[1:2]), as_table="--table" in sys.argv)
