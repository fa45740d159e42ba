"""Where a parallel run's time went, per podman lane (see PODMAN_LANE_B in tests/conftest.py):
`python tests/lane_totals.py LOG` reads the output of the README's test command run with
`-v --durations=0` and prints the seconds each xdist worker and each lane spent (setup, call and
teardown of its tests), then each file's seconds by lane, largest first. The run's wall time is
its slower worker: move files between lanes (PODMAN_LANE_B) until the lanes' totals meet."""
from __future__ import annotations

import re
import sys
from collections import defaultdict

RESULT = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", re.M)
DURATION = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S+)", re.M)


def totals(text: str) -> tuple[dict[str, float], dict[str, float], dict[tuple[str, str], float]]:
    """(seconds by worker, by lane, by (lane, file)); a test without a group is lane "-"."""
    worker: dict[str, str] = {}
    lane: dict[str, str] = {}
    for m in RESULT.finditer(text):
        node, _, group = m.group(2).partition("@")
        worker[node], lane[node] = m.group(1), group or "-"
    by_worker: dict[str, float] = defaultdict(float)
    by_lane: dict[str, float] = defaultdict(float)
    by_file: dict[tuple[str, str], float] = defaultdict(float)
    for m in DURATION.finditer(text):
        node, seconds = m.group(2).partition("@")[0], float(m.group(1))
        by_worker[worker.get(node, "?")] += seconds
        by_lane[lane.get(node, "?")] += seconds
        by_file[(lane.get(node, "?"), node.split("::")[0])] += seconds
    return by_worker, by_lane, by_file


def main(path: str, rows: int = 60) -> None:
    by_worker, by_lane, by_file = totals(open(path, encoding="utf-8").read())
    print("by worker:", ", ".join(f"{k} {v:.0f} s" for k, v in sorted(by_worker.items())))
    print("by lane:  ", ", ".join(f"{k} {v:.0f} s" for k, v in sorted(by_lane.items())))
    for (lane, name), seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:rows]:
        print(f"{seconds:8.1f}  {lane:9s} {name}")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
