"""Ghost branches: lines and branches the trial added that T0 never executes.

The pure half intersects `coverage json` output with the diff's added lines; the container half
runs T0 under `coverage run --branch` in the model world (sandbox.exec) and feeds the pure half.
A ghost line is not a defect by itself; it is where T0 is blind, so where an audit should look.
"""
from __future__ import annotations

import base64
import json
import secrets
import shlex
from dataclasses import asdict, dataclass, field

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.diffs import FileDiff, parse_diff
from testjack_tui.model import Task, Trial
from testjack_tui.engine.detectors.scope import categorize
from testjack_tui.engine.detectors.signals import Detector, Severity, Signal, ghost_unmeasured
from testjack_tui.engine.records import JsonObject

# Printed around the JSON so it can be found in output that the tests themselves also write to.
_BEGIN, _END = "@@TJ-COVERAGE-BEGIN@@", "@@TJ-COVERAGE-END@@"


def coverage_markers(nonce: str = "") -> tuple[str, str]:
    """The markers around a coverage run's JSON. Runs carry a fresh nonce (new_nonce), as the
    test reports do: trial code printing a block with fixed markers cannot pass it off as ours."""
    if not nonce:
        return _BEGIN, _END
    return f"@@TJ-COVERAGE-BEGIN-{nonce}@@", f"@@TJ-COVERAGE-END-{nonce}@@"


def new_nonce() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class GhostLine:
    """An added line T0 never ran."""

    file: str
    line: int
    code: str


@dataclass(frozen=True)
class GhostBranch:
    """A branch arm leaving an added line that T0 never took (`to` < 0: the function's exit)."""

    file: str
    line: int
    to: int
    code: str


@dataclass
class GhostReport:
    task_id: str = ""
    trial_id: str = ""
    command: str = ""
    added_lines: int = 0  # added lines coverage counts as statements
    executed_lines: int = 0
    branches: int = 0  # branch arms leaving an added line
    executed_branches: int = 0
    ghost_lines: list[GhostLine] = field(default_factory=list)
    ghost_branches: list[GhostBranch] = field(default_factory=list)
    unmeasured_files: list[str] = field(default_factory=list)  # added source files coverage never saw
    error: str = ""
    measure: str = "branch coverage (coverage.py)"  # what was measured; Go has statements only

    @property
    def added_line_pct(self) -> float | None:
        return round(100.0 * self.executed_lines / self.added_lines, 1) if self.added_lines else None

    @property
    def added_branch_pct(self) -> float | None:
        return round(100.0 * self.executed_branches / self.branches, 1) if self.branches else None

    def to_dict(self) -> JsonObject:
        data = asdict(self)
        data["added_line_pct"] = self.added_line_pct
        data["added_branch_pct"] = self.added_branch_pct
        return data

    @classmethod
    def from_dict(cls, data: JsonObject) -> "GhostReport":
        names = set(cls.__dataclass_fields__)
        fields = {k: v for k, v in data.items() if k in names}
        fields["ghost_lines"] = [GhostLine(**g) for g in fields.get("ghost_lines") or []]
        fields["ghost_branches"] = [GhostBranch(**b) for b in fields.get("ghost_branches") or []]
        return cls(**fields)

    def unmeasured(self) -> str:
        """Why this report measured nothing (signals.ghost_unmeasured); "" when it measured."""
        return ghost_unmeasured(self.to_dict())

    def to_signals(self) -> list[Signal]:
        out = []
        for g in self.ghost_lines:
            out.append(Signal(Detector.GHOST_BRANCHES, "never_executed", g.file, g.line, g.code,
                              "added line never executed by T0", severity=Severity.INFO))
        for b in self.ghost_branches:
            arm = "exit" if b.to < 0 else f"line {b.to}"
            out.append(Signal(Detector.GHOST_BRANCHES, "branch_not_taken", b.file, b.line, b.code,
                              f"branch to {arm} never taken under T0", severity=Severity.INFO))
        return out

    def to_text(self) -> str:
        if self.error:
            return f"ghost branches unavailable: {self.error}"
        if not self.added_lines and self.unmeasured_files:
            return f"ghost branches not measured: {self.unmeasured()}"
        if self.measure.startswith(("statement", "line")):
            lines = [f"{self.executed_lines}/{self.added_lines} added lines with statements "
                     f"({self.added_line_pct}%) ran under T0 ({self.measure})."]
        else:
            lines = [f"{self.executed_lines}/{self.added_lines} added lines ({self.added_line_pct}%) and "
                     f"{self.executed_branches}/{self.branches} added branches ({self.added_branch_pct}%) "
                     "ran under T0."]
        for g in self.ghost_lines:
            lines.append(f"  never ran: {g.file}:{g.line}: {g.code.strip()}")
        for b in self.ghost_branches:
            lines.append(f"  branch never taken: {b.file}:{b.line} -> {b.to}: {b.code.strip()}")
        return "\n".join(lines)


def _norm(path: str, workdir: str) -> str:
    wd = workdir.rstrip("/") + "/"
    if path.startswith(wd):
        path = path[len(wd):]
    return path[2:] if path.startswith("./") else path


def source_files(files: list[FileDiff], language_suffix: str | tuple[str, ...] = ".py") -> list[FileDiff]:
    """The diff's implementation files: what coverage should see executed."""
    return [f for f in files
            if f.path.endswith(language_suffix) and f.status != "deleted" and f.added
            and categorize(f.path) not in ("tests", "harness", "startup", "ci", "build", "config")]


def intersect(coverage: JsonObject, files: list[FileDiff], workdir: str = "/app") -> GhostReport:
    """Intersect a `coverage json` document with the added lines of `files` (pure)."""
    report = GhostReport()
    measured = {_norm(name, workdir): data for name, data in coverage.get("files", {}).items()}
    for f in source_files(files):
        data = measured.get(f.path)
        text = {a.number: a.text for a in f.added}
        if data is None:
            report.unmeasured_files.append(f.path)
            continue
        executed = set(data.get("executed_lines", []))
        missing = set(data.get("missing_lines", []))
        for number in sorted(text):
            if number in executed:
                report.added_lines += 1
                report.executed_lines += 1
            elif number in missing:
                report.added_lines += 1
                report.ghost_lines.append(GhostLine(f.path, number, text[number]))
        for src, dst in data.get("executed_branches", []):
            if src in text:
                report.branches += 1
                report.executed_branches += 1
        for src, dst in data.get("missing_branches", []):
            if src in text:
                report.branches += 1
                # A branch from a never-executed line is already a ghost line; list arms of
                # lines that did run, which are the informative ones.
                if src in executed:
                    report.ghost_branches.append(GhostBranch(f.path, src, dst, text[src]))
    return report


def coverage_command(test_ids: list[str], added: dict[str, list[int]], workdir: str = "/app",
                     nonce: str = "", files: dict[str, str] | None = None) -> str:
    """Shell for the container: run T0 (or the tests in `files`, written first: a witness) under
    branch coverage, print only our added lines' data.

    The reduction happens inside the container so the output stays small (exec output is capped).
    """
    begin, end = coverage_markers(nonce)
    write = ""
    if files:
        blob = base64.b64encode(json.dumps(files).encode()).decode()
        writer = ("import base64,json,os\n"
                  f"for p,t in json.loads(base64.b64decode({blob!r})).items():\n"
                  "    d=os.path.dirname(p)\n"
                  "    d and os.makedirs(d,exist_ok=True)\n"
                  "    open(p,'w').write(t)\n")
        write = f"python3 -c {shlex.quote(writer)} && "
    ids = " ".join(shlex.quote(t) for t in test_ids)
    include = ",".join(sorted(added)) or "*"
    script = (
        "import json\n"
        f"want={json.dumps(added)}\n"
        "d=json.load(open('/tmp/tj-cov.json'))\n"
        "out={}\n"
        "for k,v in d.get('files',{}).items():\n"
        "    k2=k[2:] if k.startswith('./') else k\n"
        f"    k2=k2[len({workdir.rstrip('/') + '/'!r}):] if k2.startswith({workdir.rstrip('/') + '/'!r}) else k2\n"
        "    w=set(want.get(k2,()))\n"
        "    if not w: continue\n"
        "    out[k2]={'executed_lines':[n for n in v.get('executed_lines',[]) if n in w],"
        "'missing_lines':[n for n in v.get('missing_lines',[]) if n in w],"
        "'executed_branches':[b for b in v.get('executed_branches',[]) if b[0] in w],"
        "'missing_branches':[b for b in v.get('missing_branches',[]) if b[0] in w]}\n"
        f"print({begin!r});print(json.dumps({{'files':out}}));print({end!r})\n"
    )
    return (
        f"cd {shlex.quote(workdir)} && " + write +
        "{ python3 -m coverage --version >/dev/null 2>&1 || { echo 'coverage is not installed' >&2; exit 97; }; } && "
        # A repo's `addopts = -n auto` would run T0 in xdist workers coverage does not follow:
        # `-n 0` (after addopts, so it wins) keeps it in this process when xdist is installed.
        "xdist=$(python3 -c 'import xdist' >/dev/null 2>&1 && echo '-n 0'); "
        f"python3 -m coverage run --branch --source=. --data-file=/tmp/tj-cov -m pytest -q -p no:cacheprovider $xdist {ids} "
        ">/tmp/tj-pytest.log 2>&1; "
        f"python3 -m coverage json --data-file=/tmp/tj-cov -o /tmp/tj-cov.json --include={shlex.quote(include)} "
        ">/tmp/tj-json.log 2>&1 || { echo 'coverage json failed' >&2; tail -5 /tmp/tj-json.log >&2; tail -20 /tmp/tj-pytest.log >&2; exit 98; }; "
        f"python3 -c {shlex.quote(script)}"
    )


def parse_coverage_output(text: str, nonce: str = "") -> JsonObject | None:
    begin_mark, end_mark = coverage_markers(nonce)
    start = text.rfind(begin_mark)
    end = text.rfind(end_mark)
    if start < 0 or end < start:
        return None
    try:
        data = json.loads(text[start + len(begin_mark):end].strip())
        return data if isinstance(data, dict) else None
    except json.JSONDecodeError:
        return None


async def run_coverage(sandbox: SandboxBackend, world: WorldRef, cmd: str, nonce: str
                       ) -> tuple[JsonObject | None, str]:
    """Run a coverage command in the world: (its nonce'd JSON result, or None and why not)."""
    result = await sandbox.exec(world, ["sh", "-c", cmd], timeout=600)
    data = parse_coverage_output((result.stdout_head or "") + (result.stdout_tail or ""), nonce)
    if data is not None:
        return data, ""
    why = "timed out" if result.timed_out else f"exit {result.exit_code}"
    err = (result.stderr_head or result.stdout_tail or "").strip().splitlines()[-1:] or [""]
    return None, f"coverage run failed ({why}): {err[0][:200]}"


async def executed_added_lines(sandbox: SandboxBackend, trial: Trial, world: WorldRef,
                               files: dict[str, str], test_ids: list[str]) -> set[tuple[str, int]] | None:
    """The trial's added Python lines a witness run executes on its world: (file, line) pairs,
    None when coverage could not measure it. Labels follow execution: a signal is tied to a
    witness when this run went through its line, however the witness imports the code."""
    diff = parse_diff(trial.patch)
    ours = source_files(diff)
    if not ours:
        return None
    workdir = getattr(world, "workdir", None) or "/app"
    nonce = new_nonce()
    cmd = coverage_command(test_ids or list(files), {f.path: sorted(f.added_numbers) for f in ours},
                           workdir, nonce, files=files)
    data, _why = await run_coverage(sandbox, world, cmd, nonce)
    if data is None:
        return None
    executed = {_norm(name, workdir): set(v.get("executed_lines") or [])
                for name, v in (data.get("files") or {}).items()}
    return {(f.path, n) for f in ours for n in f.added_numbers if n in executed.get(f.path, ())}


async def collect_ghost_branches(sandbox: SandboxBackend, task: Task, trial: Trial,
                                 world: WorldRef) -> GhostReport:
    """Run T0 with branch coverage in the model world and intersect with the trial's diff.

    Trial code runs inside the sandbox (network none, limits, timeout). It could forge its own
    coverage output, so a ghost report is evidence for the operator, never a verdict.
    """
    files = parse_diff(trial.patch)
    ours = source_files(files)
    workdir = getattr(world, "workdir", None) or task.environment.workdir
    added = {f.path: sorted(f.added_numbers) for f in ours}
    from testjack_tui.sandbox.t0 import direct_ids  # T0 ids as pytest node ids (a benchmark may write JUnit ids)

    nonce = new_nonce()
    cmd = coverage_command(list(dict.fromkeys(direct_ids(task).values())), added, workdir, nonce)
    if not ours:
        return GhostReport(task.id, trial.id, cmd, error="the diff adds no Python source lines")
    result = await sandbox.exec(world, ["sh", "-c", cmd], timeout=600)
    report_text = (result.stdout_head or "") + (result.stdout_tail or "")
    data = parse_coverage_output(report_text, nonce)
    if data is None:
        why = "timed out" if result.timed_out else f"exit {result.exit_code}"
        err = (result.stderr_head or result.stdout_tail or "").strip().splitlines()[-1:] or [""]
        return GhostReport(task.id, trial.id, cmd, error=f"coverage run failed ({why}): {err[0][:200]}")
    report = intersect(data, files, workdir)
    report.task_id, report.trial_id, report.command = task.id, trial.id, cmd
    return report
