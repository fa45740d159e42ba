"""Ghost lines for JavaScript: added lines T0 never executes, from V8's own coverage.

Node writes V8 block coverage for every process it starts when NODE_V8_COVERAGE names a
folder; T0 runs through the Node runner's launcher that every JavaScript world already holds,
with that variable set. V8 counts source ranges (functions and the blocks inside them) by
offset in the code as it ran, so the counts map to the file's lines only when the code ran
untransformed: plain `.js`/`.mjs`/`.cjs` under mocha or `node --test`. jest and vitest
transform sources before they run (and TypeScript needs compiling), so for them the detector
says unavailable with that reason. A line counts as run when the innermost range holding its
first code character ran; V8 reports no branch arms, so no branches are listed.
"""
from __future__ import annotations

import json
import re
import shlex
from typing import Any

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.sandbox.runners.node_runner import LAUNCHER_PATH
from testjack_tui.diffs import FileDiff, parse_diff
from testjack_tui.engine.detectors.ghost import GhostReport, coverage_markers, new_nonce, parse_coverage_output, source_files
from testjack_tui.model import Task, Trial

MEASURE = "line coverage: V8 block counts (NODE_V8_COVERAGE) under mocha or node --test; no branch arms"
SUFFIXES = (".js", ".mjs", ".cjs")
UNTRANSFORMED = ("mocha", "node")
_OUT = "/tmp/tj/ghost-js"

# In the container after T0 ran: the count of the innermost V8 range at each wanted line's
# first code character (UTF-16 offsets, as V8 counts), any process that loaded the file.
_COUNTS = r'''
import glob, json, os, sys
from urllib.parse import unquote
want, root, cov, plan_path = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
try:
    tool = json.load(open(plan_path)).get("tool")
except (IOError, OSError, ValueError):
    tool = None
runs = {name: [] for name in want}
for path in glob.glob(os.path.join(cov, "*.json")):
    try:
        doc = json.load(open(path))
    except (IOError, OSError, ValueError):
        continue
    for script in doc.get("result") or []:
        url = str(script.get("url") or "")
        if not url.startswith("file://"):
            continue
        rel = os.path.relpath(unquote(url[7:]), root)
        if rel in runs:
            runs[rel].append([(r["startOffset"], r["endOffset"], r["count"])
                              for fn in script.get("functions") or [] for r in fn.get("ranges") or []])
counts = {}
for name, lines in want.items():
    if not runs[name]:
        counts[name] = None
        continue
    text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
    starts, offset = [], 0
    for line in text.split("\n"):
        starts.append((offset, line))
        offset += len(line.encode("utf-16-le")) // 2 + 1
    mine = {}
    for number in lines:
        if number < 1 or number > len(starts):
            continue
        base, line = starts[number - 1]
        indent = line[:len(line) - len(line.lstrip())]
        pos = base + len(indent.encode("utf-16-le")) // 2
        best = 0
        for ranges in runs[name]:
            inner = [r for r in ranges if r[0] <= pos < r[1]]
            if inner:
                best = max(best, min(inner, key=lambda r: r[1] - r[0])[2])
        mine[str(number)] = best
    counts[name] = mine
print(BEGIN)
print(json.dumps({"tool": tool, "counts": counts}))
print(END)
'''

_NOT_CODE = re.compile(r"^(//|/\*|\*)")


def _is_code(text: str) -> bool:
    """A line with something V8 can count: not blank, a comment, or only braces and `else`."""
    code = text.strip()
    if not code or _NOT_CODE.match(code):
        return False
    return bool(re.sub(r"\belse\b", "", code).strip("{}()[];, \t"))


def js_coverage_command(test_ids: list[str], want: dict[str, list[int]], workdir: str,
                        framework: str, nonce: str = "") -> str:
    """Shell for the container: T0 through the Node launcher under NODE_V8_COVERAGE, then the
    counts at the wanted lines between the run's markers."""
    begin, end = coverage_markers(nonce)
    spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "out_dir": _OUT, "framework": framework,
                       "v8_coverage": f"{_OUT}/v8", **_reporter_paths()})
    script = _COUNTS.replace("print(BEGIN)", f"print({begin!r})").replace("print(END)", f"print({end!r})")
    return (f"rm -rf {_OUT} && mkdir -p {_OUT}/v8 && TJ_SPEC={shlex.quote(spec)} python3 {LAUNCHER_PATH} "
            f">{_OUT}.log 2>&1; python3 -c {shlex.quote(script)} {shlex.quote(json.dumps(want))} "
            f"{shlex.quote(workdir)} {_OUT}/v8 {_OUT}/node-plan.json")


def _reporter_paths() -> dict[str, str]:
    from testjack_tui.sandbox.runners.node_runner import NodeTestRunner
    extra = NodeTestRunner().spec_extra()
    return {k: v for k, v in extra.items() if k != "framework"}


def intersect_counts(counts: dict[str, dict[str, int] | None], files: list[FileDiff]) -> GhostReport:
    """Added code lines with a V8 count of zero are ghost lines (pure)."""
    report = GhostReport(measure=MEASURE)
    for f in source_files(files, SUFFIXES):
        mine = counts.get(f.path)
        if mine is None:
            report.unmeasured_files.append(f.path)
            continue
        for added in sorted(f.added, key=lambda a: a.number):
            if not _is_code(added.text) or str(added.number) not in mine:
                continue
            report.added_lines += 1
            if mine[str(added.number)] > 0:
                report.executed_lines += 1
            else:
                report.ghost_lines.append({"file": f.path, "line": added.number, "code": added.text})
    return report


async def collect_js_ghost(sandbox: SandboxBackend, task: Task, trial: Trial,
                           world: WorldRef) -> GhostReport:
    """Run T0 under V8 coverage in the model world and intersect with the trial's diff.
    Trial code can forge its counts: evidence for the operator, never a verdict."""
    files = parse_diff(trial.patch)
    ours = source_files(files, SUFFIXES)
    workdir = getattr(world, "workdir", None) or task.environment.workdir
    nonce = new_nonce()
    want = {f.path: sorted(a.number for a in f.added if _is_code(a.text)) for f in ours}
    from testjack_tui.sandbox.runners import RUNNERS, runner_name
    framework = getattr(RUNNERS.get(runner_name(task.tests.framework) or ""), "framework", "")
    cmd = js_coverage_command(list(task.tests.ids), want, workdir, framework, nonce)
    if not ours:
        other = [f.path for f in source_files(files, (".ts", ".tsx", ".mts", ".cts", ".jsx"))]
        why = ("V8 offsets count compiled code, not TypeScript/JSX lines (no source maps here)"
               if other else "the diff adds no JavaScript source lines")
        return GhostReport(task.id, trial.id, cmd, error=why, measure=MEASURE)
    result = await sandbox.exec(world, ["sh", "-c", cmd], timeout=600)
    data: dict[str, Any] | None = parse_coverage_output((result.stdout_head or "") + (result.stdout_tail or ""), nonce)
    if data is None:
        why = "timed out" if result.timed_out else f"exit {result.exit_code}"
        err = (result.stderr_head or result.stdout_tail or "").strip().splitlines()[-1:] or [""]
        return GhostReport(task.id, trial.id, cmd, error=f"coverage run failed ({why}): {err[0][:200]}",
                           measure=MEASURE)
    tool = data.get("tool")
    if tool not in UNTRANSFORMED:
        return GhostReport(task.id, trial.id, cmd, measure=MEASURE, error=(
            f"{tool or 'no test runner'} runs transformed sources, so V8's offsets do not map to "
            "the file's lines (measured under mocha and node --test only)"))
    report = intersect_counts(data.get("counts") or {}, files)
    report.task_id, report.trial_id, report.command = task.id, trial.id, cmd
    return report
