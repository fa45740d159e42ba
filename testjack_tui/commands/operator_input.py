"""Headless operator mode: the operator's own test files, given on the command line.

    testjack-tui audit BENCH --agent operator --candidate my_test.py [--candidate-path tests/test_x.py]
                             [--requirement "the clause of P it checks"] [--trial ID] --reviewer ...

Each audit the loop starts (the chosen trials first, then sampled ones) gets the same files,
through the operator agent's queue, so the engine validates them on the reference and model
worlds, asks the reviewer, and shares confirmed witnesses like any other.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testjack_tui.engine.roles import AuditContext, AuditOutcome, Candidate
from testjack_tui.errors import InputError

OPERATOR = "operator"


@dataclass(frozen=True)
class CandidateFile:
    file: Path
    path_in_repo: str
    requirement: str
    source: str


def default_repo_path(file: Path) -> str:
    """tests/<name> for a file already named test_*.py, else tests/test_tj_<stem>.py."""
    name = file.name if file.name.startswith("test_") else f"test_tj_{file.stem}.py"
    return f"tests/{name}"


def read_candidates(files: list[Path], paths: list[str] | None,
                    requirements: list[str] | None) -> list[CandidateFile]:
    """Pair each --candidate with its --candidate-path and --requirement (by position; one
    --requirement may serve every file). Bad input: a one-line InputError naming the option."""
    from testjack_tui.agents.toolbox import check_test_path

    paths, requirements = list(paths or []), list(requirements or [])
    if len(paths) > len(files):
        raise InputError("audit", "--candidate-path", f"{len(paths)} paths for {len(files)} --candidate file(s)")
    if len(requirements) > 1 and len(requirements) != len(files):
        raise InputError("audit", "--requirement",
                         f"give one --requirement for all files or one per file ({len(files)} files)")
    out: list[CandidateFile] = []
    for i, file in enumerate(files):
        file = Path(file).expanduser()
        if not file.is_file():
            raise InputError(file, "--candidate", "no such file")
        try:
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(file, "--candidate", f"cannot read it: {exc}") from None
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise InputError(file, "--candidate", f"line {exc.lineno}: {exc.msg}") from None
        if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
                   for n in ast.walk(tree)):
            raise InputError(file, "--candidate", "no test function (def test_...)")
        path = paths[i] if i < len(paths) else default_repo_path(file)
        problem = check_test_path(path)
        if problem:
            raise InputError(file, "--candidate-path", problem)
        requirement = (requirements[i] if len(requirements) > 1 else (requirements or [""])[0]).strip()
        if not requirement:
            requirement = _docstring(tree) or f"the operator's test {file.name}"
        out.append(CandidateFile(file, path, requirement, source))
    if len({c.path_in_repo for c in out}) != len(out):
        raise InputError("audit", "--candidate-path", "two candidates would be written to the same path")
    return out


def _docstring(tree: ast.Module) -> str:
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def recorded_origin(benchmark_root: Path, task_id: str, source: str) -> str | None:
    """The scripts' name of a recorded candidate with exactly this source, if any (so the
    scripted reviewer can replay its recorded review of that very test)."""
    folder = Path(benchmark_root) / "agent-scripts" / task_id / "candidates"
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.py")):
        try:
            if path.read_text(encoding="utf-8") == source:
                return f"candidates/{path.name}"
        except OSError:
            continue
    return None


def _recorded_reviews(benchmark_root: Path, task_id: str) -> dict:
    import json

    path = Path(benchmark_root) / "agent-scripts" / task_id / "reviews.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class FileOperatorAgent:
    """The audit role in headless operator mode: puts the operator's files to every audit.

    Wraps the operator agent (its queue builds the candidates, so ids and labels are the same
    as in the TUI). Task analysis gets nothing: the operator's files are audit candidates."""

    label = OPERATOR

    def __init__(self, operator_agent: Any, candidates: list[CandidateFile], benchmark_root: Path | None = None):
        self.agent = operator_agent
        self.candidates = candidates
        self.benchmark_root = benchmark_root

    async def audit(self, ctx: AuditContext) -> AuditOutcome:
        for c in self.candidates:
            self.agent.submit_candidate(c.path_in_repo, c.source, c.requirement)
        self.agent.finish()
        outcome = await self.agent.audit(ctx)
        return dataclasses.replace(outcome, candidates=[self._origin(ctx, c) for c in outcome.candidates],
                                   notes="candidates from the operator's files: "
                                         + ", ".join(str(c.file) for c in self.candidates))

    def _origin(self, ctx: AuditContext, candidate: Candidate) -> Candidate:
        origin = recorded_origin(self.benchmark_root, ctx.task.id, candidate.source) \
            if self.benchmark_root is not None else None
        if not origin:  # the operator's own file (what `--verdicts` names it by)
            origin = next((str(c.file) for c in self.candidates if c.source == candidate.source), None)
        return dataclasses.replace(candidate, origin=origin) if origin else candidate

    async def analyse(self, ctx: AuditContext) -> list[Candidate]:
        return []

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str) -> Candidate | None:
        return None  # headless: a file that fails on the reference is reported, not rewritten


def plan_operator_run(bench: Any, cfg: Any, candidates: list[CandidateFile], rounds_given: bool) -> None:
    """Adjust the session config for a headless operator run (in place).

    In lightweight mode `--trial` names the trials the operator's test is checked on; the corpus
    stays every passing trial of their tasks so a witness is shared with all of them."""
    cfg.task_analysis = False
    chosen = list(cfg.trials or [])
    if not chosen or cfg.mode != "lightweight":
        return
    by_id = {t.id: t for t in bench.trials}
    for trial_id in chosen:
        trial = by_id.get(trial_id)
        if trial is None:
            raise InputError(cfg.benchmark, "--trial", f"no trial {trial_id!r} in the benchmark")
        if not trial.official_pass:
            raise InputError(cfg.benchmark, "--trial",
                             f"trial {trial_id!r} did not pass officially: only passing trials are audited")
        if cfg.tasks and trial.task_id not in cfg.tasks:
            raise InputError(cfg.benchmark, "--trial", f"trial {trial_id!r} is not a trial of the chosen --task")
    per_task: dict[str, int] = {}
    for trial_id in chosen:
        task_id = by_id[trial_id].task_id
        per_task[task_id] = per_task.get(task_id, 0) + 1
    cfg.tasks = sorted(per_task)
    cfg.trials = None
    cfg.audit_first = chosen
    if not rounds_given:
        cfg.rounds = max(per_task.values())


def check_reviewer(reviewer: str, bench: Any, cfg: Any, candidates: list[CandidateFile]) -> None:
    """The scripted reviewer can only replay reviews recorded for these very files."""
    if reviewer != "scripted":
        return
    task_ids = cfg.tasks or sorted(bench.tasks)
    for c in candidates:
        for task_id in task_ids:
            origin = recorded_origin(bench.root, task_id, c.source)
            if origin is None or origin not in _recorded_reviews(bench.root, task_id):
                raise InputError(c.file, "--reviewer",
                                 f"the scripted reviewer only replays recorded reviews and has none for "
                                 f"this file on task {task_id}: use --reviewer operator, openai or a profile")


def prepare(agent: str, files: list[Path] | None, paths: list[str] | None, requirements: list[str] | None,
            headless: bool, interactive: bool) -> list[CandidateFile] | None:
    """Check the operator options; the candidate files to use, or None for the TUI's editor."""
    if files and agent != OPERATOR:
        raise InputError("audit", "--candidate",
                         f"the operator's test file goes with --agent operator (got --agent {agent})")
    if (paths or requirements) and not files:
        raise InputError("audit", "--candidate-path" if paths else "--requirement", "needs --candidate FILE")
    if not files:
        if headless or not interactive:
            raise InputError("audit", "--candidate",
                             "--agent operator without the TUI needs your test: pass --candidate FILE "
                             "(or leave out --headless and write it in the TUI's editor)")
        return None
    return read_candidates(list(files), paths, requirements)


def attach(bench: Any, cfg: Any, roles: Any, candidates: list[CandidateFile], rounds_given: bool) -> Any:
    """Plan the run and put the operator's files in the audit role (returns the new roles)."""
    plan_operator_run(bench, cfg, candidates, rounds_given)
    check_reviewer(cfg.agents.get("reviewer", ""), bench, cfg, candidates)
    wrapper = FileOperatorAgent(roles.audit, candidates, Path(bench.root))
    return dataclasses.replace(roles, audit=wrapper, task_analysis=wrapper)
