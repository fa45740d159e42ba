"""Mutation evidence: which lines of a trial's diff T0 does not pin down.

A *mutant* changes one small thing on one line the trial added (a comparison flipped at its
boundary, a constant replaced, a branch deleted, a return value swapped, `and`/`or` and `+`/`-`
exchanged). It is run under T0 in the trial's own model world. A mutant that T0 still passes
*survives*: the line can change its behaviour without T0 noticing, which is where a defect (or
a shortcut) can hide and where an audit should write a witness. A survivor is evidence, never a
verdict: many survivors are equivalent mutants that change nothing observable.

Lines T0 never executes (ghost lines, from the coverage detector) cannot kill any mutant, so
their mutants are reported as survivors without spending a run; the runs go to lines T0 does
execute, where a survivor says something coverage cannot.

The generator is a small AST mutator of our own rather than a maintained tool: tools such as
mutmut mutate whole modules and need their own runner inside the container, while we need a
handful of mutants restricted to the diff's added lines, each run as one ordinary budgeted test
run in a fresh container (so `--budget-runs` bounds the cost and resume never repeats a run).
"""
from __future__ import annotations

import ast
import asyncio
from dataclasses import asdict, dataclass, field
from typing import Any, TYPE_CHECKING

from testjack_tui.diffs import parse_diff
from testjack_tui.engine.detectors.ghost import source_files
from testjack_tui.engine.detectors.signals import Detector, Severity, Signal
from testjack_tui.engine.records import JsonObject
from testjack_tui.engine.repo_files import read_repo_files
from testjack_tui.model import Task, Trial
from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend

if TYPE_CHECKING:
    from testjack_tui.engine.runner import TestRunner

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
          ast.Div: ast.Mult, ast.Mod: ast.FloorDiv}
OPERATORS = ("comparison", "constant", "branch", "return", "boolean", "arithmetic")


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    operator: str  # one of OPERATORS
    original: str  # the line as the trial wrote it
    mutated: str  # the line after the mutation
    source: str = field(default="", repr=False, compare=False)  # the whole mutated file

    def describe(self) -> str:
        return f"{self.file}:{self.line} [{self.operator}] {self.original.strip()}  ->  {self.mutated.strip()}"


def _replace_segment(line: str, col: int, end_col: int, text: str) -> str:
    """Replace a node's span on one line; AST columns count UTF-8 bytes, not characters."""
    raw = line.encode()
    return (raw[:col] + text.encode() + raw[end_col:]).decode()


def _constant_swap(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str):
        return "" if value else "tj-mutant"
    return _NO_SWAP


_NO_SWAP = object()


def _candidates(node: ast.AST) -> list[tuple[str, ast.AST, ast.AST]]:
    """(operator, node to replace, replacement) pairs for one AST node."""
    out: list[tuple[str, ast.AST, ast.AST]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
        out.append(("comparison", node, ast.Compare(node.left, [_FLIP[type(node.ops[0])]()], node.comparators)))
    elif isinstance(node, ast.Constant) and not isinstance(node.value, bytes):
        new = _constant_swap(node.value)
        if new is not _NO_SWAP:
            out.append(("constant", node, ast.Constant(new)))
    elif isinstance(node, (ast.If, ast.While)):
        out.append(("branch", node.test, ast.Constant(False)))
    elif isinstance(node, ast.IfExp):
        out.append(("branch", node.test, ast.UnaryOp(ast.Not(), node.test)))
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            out.append(("return", node.value, ast.Constant(None)))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(("boolean", node, ast.BoolOp(other, node.values)))
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        out.append(("arithmetic", node, ast.BinOp(node.left, _ARITH[type(node.op)](), node.right)))
    return out


def mutants_of(path: str, source: str, lines: set[int]) -> list[Mutant]:
    """Every single-line mutant of `source` on the given line numbers, in source order.

    Only nodes that start and end on one of `lines` are mutated (a change confined to what the
    trial wrote); docstrings are left alone. A file that does not parse gives no mutants.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    # Pieces of an f-string carry the whole f-string's position: they cannot be cut out alone.
    docstrings |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    text_lines = source.splitlines(keepends=True)
    seen: set[tuple[int, str]] = set()
    out: list[Mutant] = []
    for node in ast.walk(tree):
        for operator, target, replacement in _candidates(node):
            number = getattr(target, "lineno", None)
            if number not in lines or getattr(target, "end_lineno", None) != number or id(target) in docstrings:
                continue
            start, end = getattr(target, "col_offset", None), getattr(target, "end_col_offset", None)
            if start is None or end is None:
                continue
            line = text_lines[number - 1]
            try:
                mutated = _replace_segment(line, start, end, ast.unparse(replacement))
            except (UnicodeDecodeError, ValueError):
                continue
            if mutated == line or (number, mutated) in seen:
                continue
            new_source = "".join(text_lines[:number - 1] + [mutated] + text_lines[number:])
            try:
                ast.parse(new_source)
            except SyntaxError:
                continue
            seen.add((number, mutated))
            out.append(Mutant(path, number, operator, line.rstrip("\n"), mutated.rstrip("\n"), new_source))
    return sorted(out, key=lambda m: (m.line, OPERATORS.index(m.operator), m.mutated))


def pick(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most `limit` mutants spread over lines and operators (round robin by line), so a
    small budget covers many lines instead of exhausting the first one."""
    by_line: dict[tuple[str, int], list[Mutant]] = {}
    for m in mutants:
        by_line.setdefault((m.file, m.line), []).append(m)
    chosen: list[Mutant] = []
    depth = 0
    while len(chosen) < limit and any(len(v) > depth for v in by_line.values()):
        for key in sorted(by_line):
            if depth < len(by_line[key]) and len(chosen) < limit:
                chosen.append(by_line[key][depth])
        depth += 1
    return chosen


@dataclass(frozen=True)
class Survivor:
    """A mutant T0 did not kill; `executed` False: T0 never runs its line (it survived unrun)."""

    file: str
    line: int
    operator: str
    original: str
    mutated: str
    executed: bool

    @classmethod
    def of(cls, m: Mutant, executed: bool) -> "Survivor":
        return cls(m.file, m.line, m.operator, m.original, m.mutated, executed)


@dataclass
class MutationReport:
    generated: int = 0  # mutants on the diff's added lines
    run: int = 0  # mutants run under T0 (one test run each)
    killed: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    error: str = ""

    def to_dict(self) -> JsonObject:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: JsonObject | None) -> "MutationReport | None":
        if not data:
            return None
        names = set(cls.__dataclass_fields__)
        fields = {k: v for k, v in data.items() if k in names}
        fields["survivors"] = [Survivor(**s) for s in fields.get("survivors") or []]
        return cls(**fields)

    def to_signals(self) -> list[Signal]:
        return [Signal(Detector.MUTATION, "surviving_mutant", s.file, s.line, s.original.strip(),
                       f"T0 still passes with `{s.mutated.strip()}` ({s.operator})"
                       + ("" if s.executed else "; T0 never runs this line"), severity=Severity.INFO)
                for s in self.survivors]

    def to_text(self) -> str:
        if self.error:
            return f"mutation evidence unavailable: {self.error}"
        lines = [f"{len(self.survivors)} surviving mutants of {self.generated} on the diff's lines "
                 f"({self.run} run under T0, {self.killed} killed)."]
        for s in self.survivors:
            where = "executed by T0" if s.executed else "never executed by T0"
            lines.append(f"  {s.file}:{s.line} [{s.operator}, {where}] "
                         f"{s.original.strip()}  ->  {s.mutated.strip()}")
        return "\n".join(lines)


def _kills(baseline: dict[str, JsonObject], run: dict[str, JsonObject]) -> bool:
    """A mutant is killed when a T0 test that passed on the trial no longer passes."""
    return any(o.get("status") == "passed" and (run.get(t) or {}).get("status") != "passed"
               for t, o in baseline.items())


async def collect_mutation_evidence(runner: TestRunner, sandbox: SandboxBackend, task: Task, trial: Trial,
                                    world: WorldRef, limit: int,
                                    ghost: JsonObject | None = None) -> MutationReport:
    """Mutants of the trial's added lines, run under T0 in its model world.

    `runner` is the engine's TestRunner: every mutant run is reserved from the budget, stored
    (a resumed session does not repeat it) and announced like any other test run. `ghost` is the
    trial's ghost-branch report, when coverage ran: mutants of never-executed lines survive
    without a run.
    """
    report = MutationReport()
    files = source_files(parse_diff(trial.patch or ""))
    if not files:
        report.error = "the diff adds no Python source lines"
        return report
    workdir = getattr(world, "workdir", None) or task.environment.workdir
    sources = await read_repo_files(sandbox, world, [f.path for f in files], workdir)
    never_run = {(g.get("file"), g.get("line")) for g in (ghost or {}).get("ghost_lines", [])} \
        if ghost and not ghost.get("error") else set()
    mutants: list[Mutant] = []
    for f in files:
        source = sources.get(f.path)
        if isinstance(source, str):
            mutants += mutants_of(f.path, source, f.added_numbers)
    report.generated = len(mutants)
    free = [m for m in mutants if (m.file, m.line) in never_run]
    paid = pick([m for m in mutants if (m.file, m.line) not in never_run], max(0, limit))
    report.survivors = [Survivor.of(m, executed=False) for m in pick(free, max(0, limit))]
    ids = list(task.tests.ids)
    if not paid or not ids:
        return report
    baseline = await runner.run(world, ids, task_id=task.id, trial_id=trial.id)
    # Mutants run side by side (the sandbox bounds how many containers run at once).
    results = await asyncio.gather(*(runner.run(world, ids, {m.file: m.source}, task_id=task.id,
                                                trial_id=trial.id) for m in paid))
    for m, result in zip(paid, results):
        report.run += 1
        if _kills(baseline.outcomes, result.outcomes):
            report.killed += 1
        else:
            report.survivors.append(Survivor.of(m, executed=True))
    report.survivors.sort(key=lambda s: (s.file, s.line, s.operator))
    return report
