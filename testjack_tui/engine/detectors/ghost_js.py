"""Ghost lines for JavaScript and TypeScript: added lines (and branch arms) T0 never executes.

T0 runs through the Node runner's launcher that every JavaScript world already holds, with the
coverage the tool in use can give:
- mocha and `node --test`: V8's own block counts (NODE_V8_COVERAGE, written by every node
  process). V8 counts source ranges by offset in the code as it ran, so they map to lines only
  for untransformed `.js`/`.mjs`/`.cjs` files; a line counts as run when the innermost range
  holding its first code character ran. V8 reports no branch arms, so none are listed.
- jest (`--coverage`, istanbul, shipped with jest) and vitest (`--coverage` when
  @vitest/coverage-v8 or -istanbul is installed in the repository): istanbul's statements and
  branch arms, mapped back to the source lines, TypeScript included.
Otherwise the detector says unavailable with the reason.
"""
from __future__ import annotations

import json
import re
import shlex
from testjack_tui.engine.records import JsonObject

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.sandbox.runners.node_launcher import LAUNCHER_PATH
from testjack_tui.diffs import FileDiff, parse_diff
from testjack_tui.engine.detectors.ghost import GhostBranch, GhostLine, GhostReport, coverage_markers, new_nonce, run_coverage, source_files
from testjack_tui.model import Task, Trial

MEASURE = "line coverage: V8 block counts (NODE_V8_COVERAGE) under mocha or node --test; no branch arms"
ISTANBUL = "branch coverage: istanbul ({tool} --coverage)"
SUFFIXES = (".js", ".mjs", ".cjs")
TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".jsx")
UNTRANSFORMED = ("mocha", "node")
_OUT = "/tmp/tj/ghost-js"

# In the container after T0 ran. mocha/node: the count of the innermost V8 range at each wanted
# line's first code character (UTF-16 offsets, as V8 counts), any process that loaded the file.
# jest/vitest: from istanbul's coverage-final.json, per wanted line the highest count of the
# statements starting there, and the branch arms whose branch starts there.
_COUNTS = r'''
import glob, json, os, sys
from urllib.parse import unquote
want, root, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    plan = json.load(open(os.path.join(out, "node-plan.json")))
except (IOError, OSError, ValueError):
    plan = {}
tool = plan.get("tool")

def v8_counts():
    runs = {name: [] for name in want if name.endswith((".js", ".mjs", ".cjs"))}
    for path in glob.glob(os.path.join(out, "v8", "*.json")):
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
        if not runs.get(name):
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
        counts[name] = {"lines": mine, "branches": []}
    return counts

def istanbul_counts():
    try:
        doc = json.load(open(os.path.join(out, "istanbul", "coverage-final.json")))
    except (IOError, OSError, ValueError):
        return None
    files = {os.path.relpath(str(data.get("path") or key), root): data for key, data in doc.items()
             if isinstance(data, dict)}
    counts = {}
    for name, lines in want.items():
        data = files.get(name)
        if data is None:
            counts[name] = None
            continue
        wanted = set(lines)
        mine = {}
        for sid, loc in (data.get("statementMap") or {}).items():
            line = (loc.get("start") or {}).get("line")
            if line in wanted:
                mine[str(line)] = max(mine.get(str(line), 0), int((data.get("s") or {}).get(sid) or 0))
        arms = []
        for bid, branch in (data.get("branchMap") or {}).items():
            line = ((branch.get("loc") or {}).get("start") or {}).get("line") or branch.get("line")
            if line not in wanted:
                continue
            hits = (data.get("b") or {}).get(bid) or []
            for index, where in enumerate(branch.get("locations") or []):
                to = (where.get("start") or {}).get("line") or line
                arms.append([line, to, int(hits[index]) if index < len(hits) else 0])
        counts[name] = {"lines": mine, "branches": arms}
    return counts

if tool in ("mocha", "node"):
    data = {"tool": tool, "kind": "v8", "counts": v8_counts()}
else:
    counts = istanbul_counts() if tool else None
    data = {"tool": tool, "kind": "istanbul" if counts is not None else None, "counts": counts or {}}
    if counts is None:
        data["why"] = ("vitest's coverage needs @vitest/coverage-v8 or @vitest/coverage-istanbul "
                       "installed in the repository" if tool == "vitest" else
                       "%s wrote no coverage report" % (tool or "no test runner"))
print(BEGIN)
print(json.dumps(data))
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
    """Shell for the container: T0 through the Node launcher with coverage (V8 for every node
    process; the runner's own istanbul report for jest and vitest), then the counts at the
    wanted lines between the run's markers."""
    begin, end = coverage_markers(nonce)
    spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "out_dir": _OUT, "framework": framework,
                       "v8_coverage": f"{_OUT}/v8", "istanbul_dir": f"{_OUT}/istanbul", **_reporter_paths()})
    script = _COUNTS.replace("print(BEGIN)", f"print({begin!r})").replace("print(END)", f"print({end!r})")
    return (f"rm -rf {_OUT} && mkdir -p {_OUT}/v8 && TJ_SPEC={shlex.quote(spec)} python3 {LAUNCHER_PATH} "
            f">{_OUT}.log 2>&1; python3 -c {shlex.quote(script)} {shlex.quote(json.dumps(want))} "
            f"{shlex.quote(workdir)} {_OUT}")


def _reporter_paths() -> dict[str, str]:
    from testjack_tui.sandbox.runners.node_runner import NodeTestRunner
    extra = NodeTestRunner().spec_extra()
    return {k: v for k, v in extra.items() if k != "framework"}


def intersect_counts(counts: dict[str, JsonObject | None], files: list[FileDiff],
                     measure: str = MEASURE) -> GhostReport:
    """Added code lines whose count is zero are ghost lines, branch arms leaving an added line
    with a zero count are ghost branches (pure). `counts`: file -> {"lines": {line: count},
    "branches": [[line, to line, count]]}, None for a file coverage never saw."""
    report = GhostReport(measure=measure)
    for f in source_files(files, SUFFIXES + TS_SUFFIXES):
        mine = counts.get(f.path)
        if mine is None:
            report.unmeasured_files.append(f.path)
            continue
        lines = mine.get("lines") or {}
        text = {a.number: a.text for a in f.added}
        for number in sorted(text):
            if not _is_code(text[number]) or str(number) not in lines:
                continue
            report.added_lines += 1
            if lines[str(number)] > 0:
                report.executed_lines += 1
            else:
                report.ghost_lines.append(GhostLine(f.path, number, text[number]))
        for line, to, count in mine.get("branches") or []:
            if line not in text:
                continue
            report.branches += 1
            if count > 0:
                report.executed_branches += 1
            else:
                report.ghost_branches.append(GhostBranch(f.path, line, to, text[line]))
    return report


async def collect_js_ghost(sandbox: SandboxBackend, task: Task, trial: Trial,
                           world: WorldRef) -> GhostReport:
    """Run T0 under coverage in the model world and intersect with the trial's diff.
    Trial code can forge its counts: evidence for the operator, never a verdict."""
    files = parse_diff(trial.patch)
    ours = source_files(files, SUFFIXES + TS_SUFFIXES)
    workdir = getattr(world, "workdir", None) or task.environment.workdir
    nonce = new_nonce()
    want = {f.path: sorted(a.number for a in f.added if _is_code(a.text)) for f in ours}
    from testjack_tui.sandbox.runners import RUNNERS, runner_name
    framework = getattr(RUNNERS.get(runner_name(task.tests.framework) or ""), "framework", "")
    cmd = js_coverage_command(list(task.tests.ids), want, workdir, framework, nonce)
    if not ours:
        return GhostReport(task.id, trial.id, cmd, error="the diff adds no JavaScript or TypeScript "
                           "source lines", measure=MEASURE)
    data, failure = await run_coverage(sandbox, world, cmd, nonce)
    if data is None:
        return GhostReport(task.id, trial.id, cmd, error=failure, measure=MEASURE)
    tool = data.get("tool")
    measure = MEASURE if data.get("kind") == "v8" else ISTANBUL.format(tool=tool)
    if data.get("kind") is None:
        return GhostReport(task.id, trial.id, cmd, measure=measure, error=str(data.get("why") or "no coverage"))
    report = intersect_counts(data.get("counts") or {}, files, measure)
    if data.get("kind") == "v8" and not report.added_lines and report.unmeasured_files:
        ts = [p for p in report.unmeasured_files if p.endswith(TS_SUFFIXES)]
        if ts:
            report.error = (f"{tool} ran compiled code: V8's offsets do not map to TypeScript/JSX "
                            f"lines ({', '.join(ts[:3])})")
    report.task_id, report.trial_id, report.command = task.id, trial.id, cmd
    return report
