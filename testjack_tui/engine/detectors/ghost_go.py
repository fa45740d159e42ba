"""Ghost lines for Go: added lines whose statements T0 never executes.

Go's coverage is per statement block (`go test -coverprofile`, here with `-covermode=set` and
`-coverpkg` over the whole module so T0 in one package counts code in another); there is no
branch coverage, so the report says "statement coverage" and lists no branches. T0 runs
through the go test runner's launcher that every Go world already holds; only the profile
lines of the files the trial added code to come back.
"""
from __future__ import annotations

import json
import re
import shlex

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.sandbox.runners.go_runner import LAUNCHER_PATH
from testjack_tui.diffs import FileDiff, parse_diff
from testjack_tui.engine.detectors.ghost import (GhostLine, GhostReport, coverage_markers, new_nonce, run_coverage,
                                                 source_files)
from testjack_tui.model import Task, Trial

MEASURE = "statement coverage: go test -coverprofile (Go reports no branches)"
_BLOCK = re.compile(r"^(?P<file>.+\.go):(?P<l1>\d+)\.\d+,(?P<l2>\d+)\.\d+ \d+ (?P<count>\d+)$")


def go_coverage_command(test_ids: list[str], files: list[str], workdir: str, nonce: str = "") -> str:
    """Shell for the container: T0 under coverage, then the profile lines of `files` only."""
    begin, end = coverage_markers(nonce)
    out_dir = "/tmp/tj/ghost"
    spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "out_dir": out_dir,
                       "cover": True})
    script = (
        "import json,sys\n"
        f"want={json.dumps(sorted(files))}\n"
        "keep=[]\n"
        f"for line in open({out_dir + '/cover.out'!r}):\n"
        "    name=line.split(':',1)[0]\n"
        "    if any(name==w or name.endswith('/'+w) for w in want): keep.append(line.rstrip())\n"
        f"print({begin!r});print(json.dumps({{'profile':keep}}));print({end!r})\n"
    )
    return (f"TJ_SPEC={shlex.quote(spec)} python3 {LAUNCHER_PATH} >/tmp/tj-go-cover.log 2>&1; "
            f"[ -s {out_dir}/cover.out ] || {{ echo 'go test wrote no coverage profile' >&2; "
            f"tail -5 {out_dir}/go-test.stderr >&2; exit 98; }}; python3 -c {shlex.quote(script)}")


def intersect_profile(profile: list[str], files: list[FileDiff]) -> GhostReport:
    """Added lines inside statement blocks: executed when a block covering the line ran (pure)."""
    report = GhostReport(measure=MEASURE)
    blocks: dict[str, list[tuple[int, int, bool]]] = {}
    for line in profile:
        m = _BLOCK.match(line.strip())
        if m:
            blocks.setdefault(m["file"], []).append((int(m["l1"]), int(m["l2"]), int(m["count"]) > 0))
    for f in source_files(files, ".go"):
        ours = [b for name, bs in blocks.items() if name == f.path or name.endswith("/" + f.path)
                for b in bs]
        if not ours:
            report.unmeasured_files.append(f.path)
            continue
        for added in sorted(f.added, key=lambda a: a.number):
            code = added.text.strip()
            if not code or code.startswith("//") or code in ("{", "}", ")", "})", "},"):
                continue  # blocks span their closing braces; only statements count
            covering = [ran for start, end, ran in ours if start <= added.number <= end]
            if not covering:
                continue  # declarations, comments, braces: no statement on the line
            report.added_lines += 1
            if any(covering):
                report.executed_lines += 1
            else:
                report.ghost_lines.append(GhostLine(f.path, added.number, added.text))
    return report


async def collect_go_ghost(sandbox: SandboxBackend, task: Task, trial: Trial,
                           world: WorldRef) -> GhostReport:
    """Run T0 with statement coverage in the model world and intersect with the trial's diff.
    Trial code can forge its profile: evidence for the operator, never a verdict."""
    files = parse_diff(trial.patch)
    ours = source_files(files, ".go")
    workdir = getattr(world, "workdir", None) or task.environment.workdir
    nonce = new_nonce()
    cmd = go_coverage_command(list(task.tests.ids), [f.path for f in ours], workdir, nonce)
    if not ours:
        return GhostReport(task.id, trial.id, cmd, error="the diff adds no Go source lines",
                           measure=MEASURE)
    data, failure = await run_coverage(sandbox, world, cmd, nonce)
    if data is None:
        return GhostReport(task.id, trial.id, cmd, error=failure, measure=MEASURE)
    report = intersect_profile(data.get("profile") or [], files)
    report.task_id, report.trial_id, report.command = task.id, trial.id, cmd
    return report
