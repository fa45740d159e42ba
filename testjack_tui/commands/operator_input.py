"""Headless operator mode: the operator's own test files, given on the command line.

    testjack-tui audit BENCH --agent operator --candidate my_test.py [--candidate-path tests/test_x.py]
                             (or my_test.go, my.test.ts, my_test.rs: the kind the task's runner takes)
                             [--requirement "the clause of P it checks"] [--trial ID] --reviewer ...

Each audit the loop starts (the chosen trials first, then sampled ones) gets the same files,
through the operator agent's queue, so the engine validates them on the reference and model
worlds, asks the reviewer, and shares confirmed witnesses like any other.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import TYPE_CHECKING, Iterable, Protocol, runtime_checkable

from testjack_tui.engine.reference_claims import OUTPUT_CHARS
from testjack_tui.engine.roles import AuditAgent, AuditContext, AuditOutcome, Candidate, ReferenceContradiction, RoleSet
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Task

if TYPE_CHECKING:
    from testjack_tui.engine.approval import TableApprover
    from testjack_tui.engine.session import SessionConfig

OPERATOR = "operator"


@dataclass(frozen=True)
class CandidateFile:
    file: Path
    path_in_repo: str  # where it goes (for a task whose T0 gives no better place: see path_for)
    requirement: str
    source: str
    path_given: bool = False  # --candidate-path named it

    def path_for(self, task: Task) -> str:
        """Where it goes in this task's repo: the given path, else the task's runner's place."""
        if self.path_given:
            return self.path_in_repo
        return default_repo_path(self.file, task.tests.framework, task.tests.test_files)


# The kind of a candidate file, by its name; each runner takes one kind.
KINDS = {".py": "python", ".go": "go", ".rs": "rust", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "js",
         ".ts": "js", ".tsx": "js", ".mts": "js", ".cts": "js"}
RUNNER_KIND = {"pytest": "python", "django": "python", "go test": "go", "cargo test": "rust",
               "vitest": "js", "jest": "js", "mocha": "js", "node --test": "js"}
# What a file of each kind must declare to be a test at all (checked before any world runs;
# syntax beyond that is the toolchain's, in the reference world: a compile error comes back as
# the run's error with the compiler's message).
_TEST_DECL = {"go": (re.compile(r"^\s*func\s+Test\w*\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M),
                     "no test function (func TestX(t *testing.T))"),
              "rust": (re.compile(r"#\[\s*(?:\w+::)*test\b"), "no test function (#[test] fn ...)"),
              "js": (re.compile(r"(?<![\w.])(?:it|test)(?:\.\w+)?\s*\("), "no test (it(...) or test(...))")}
_JS_TEST_NAME = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")


def kind_of(file: PurePath | str) -> str | None:
    return KINDS.get(Path(file).suffix.lower())


def runner_kind(framework: str | None) -> tuple[str | None, str | None]:
    """(runner name, the kind of file it takes) for a task's framework."""
    from testjack_tui.services.test_files import runner_name

    name = runner_name(framework)
    return name, RUNNER_KIND.get(name or "")


def default_repo_path(file: Path, framework: str | None = None, t0_files: Iterable[str] = ()) -> str:
    """Where the operator's file goes when --candidate-path does not say, in the runner's terms:
    pytest `tests/test_tj_<stem>.py` (`tests/<name>` for a file named test_*.py); go test
    `<stem>_tj_test.go` beside T0's own test files (the package they test); cargo
    `tests/tj_<stem>.rs` (an integration test); vitest/jest/mocha/node `<stem>.tj.test.<ext>`
    (`.tj.spec.<ext>` when T0's files are `*.spec.*`) beside T0's own test files, where the
    runner's test glob collects them."""
    file = Path(file)
    kind = kind_of(file)
    stem = re.sub(r"\W+", "_", file.stem.split(".")[0]) or "witness"
    t0_files = list(t0_files or ())
    beside = [str(PurePosixPath(f).parent) for f in t0_files]
    if kind == "go":
        dirs = [str(PurePosixPath(f).parent) for f in t0_files or () if f.endswith("_test.go")]
        name = file.name if file.name.endswith("_test.go") else f"{stem}_tj_test.go"
        return str(PurePosixPath(dirs[0] if dirs else ".") / name)
    if kind == "rust":
        return f"tests/{stem if stem.startswith('tj_') else 'tj_' + stem}.rs"
    if kind == "js":
        js = [(f, d) for f, d in zip(t0_files or (), beside) if kind_of(f) == "js"]
        # The word T0's own test files carry (`.spec` where the repo's testMatch/include takes
        # `*.spec.ts` only): what the repo's config collects collects the witness too.
        word = next((m.group(1) for f, _ in js for m in [_JS_TEST_NAME.search(f)] if m), "test")
        name = file.name if _JS_TEST_NAME.search(file.name) else f"{stem}.tj.{word}{file.suffix}"
        return str(PurePosixPath(js[0][1] if js else "test") / name)
    name = file.name if file.name.startswith("test_") else f"test_tj_{stem}.py"
    return f"tests/{name}"


def check_source(file: PurePath, source: str) -> tuple[str, str]:
    """(kind, its first comment or docstring line) of a candidate; InputError when it is not a
    test file we can run (the wrong kind, a Python syntax error, no test in it)."""
    kind = kind_of(file)
    if kind is None:
        raise InputError(file, "--candidate", f"not a test file of a runner we have ({file.suffix or 'no extension'}; "
                         "we take .py, .go, .rs, .js/.mjs/.cjs/.ts/.tsx)")
    if kind == "python":
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise InputError(file, "--candidate", f"line {exc.lineno}: {exc.msg}") from None
        if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
                   for n in ast.walk(tree)):
            raise InputError(file, "--candidate", "no test function (def test_...)")
        return kind, _docstring(tree)
    pattern, missing = _TEST_DECL[kind]
    if not pattern.search(source):
        raise InputError(file, "--candidate", missing)
    return kind, _leading_comment(source)


def read_candidates(files: list[Path], paths: list[str] | None,
                    requirements: list[str] | None, framework: str | None = None,
                    t0_files: Iterable[str] = ()) -> list[CandidateFile]:
    """Pair each --candidate with its --candidate-path and --requirement (by position; one
    --requirement may serve every file). Bad input: a one-line InputError naming the option."""
    from testjack_tui.services.test_files import check_test_path

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
        kind, doc = check_source(file, source)
        given = i < len(paths)
        path = paths[i] if given else default_repo_path(file, framework, t0_files)
        problem = check_test_path(path)
        if problem:
            raise InputError(file, "--candidate-path", problem)
        if given and kind_of(path) != kind:
            raise InputError(file, "--candidate-path", f"{path!r} is not a {file.suffix} file")
        requirement = (requirements[i] if len(requirements) > 1 else (requirements or [""])[0]).strip()
        if not requirement:
            requirement = doc or f"the operator's test {file.name}"
        out.append(CandidateFile(file, path, requirement, source, path_given=given))
    if len({c.path_in_repo for c in out}) != len(out):
        raise InputError("audit", "--candidate-path", "two candidates would be written to the same path")
    return out


def fit_to_tasks(candidates: list[CandidateFile], tasks: list[Task], chosen: bool) -> None:
    """Every candidate must be of the kind the runner of the tasks it is put to takes (a .ts
    file for vitest/jest, .go for go test...). With --task/--trial every chosen task must take
    it; otherwise it goes to the tasks that do (FileOperatorAgent.audit) and one must exist."""
    for c in candidates:
        kind = kind_of(c.file)
        takers = [t for t in tasks if runner_kind(t.tests.framework)[1] == kind]
        refusers = [t for t in tasks if t not in takers]
        if refusers and (chosen or not takers):
            task = refusers[0]
            name, takes = runner_kind(task.tests.framework)
            what = f"runner {name} takes {_KIND_NAMES.get(takes or '', 'no candidate file')}" if name else \
                f"no runner for framework {task.tests.framework!r}"
            raise InputError(c.file, "--candidate", f"task {task.id}'s {what}, not a {c.file.suffix} file")


_KIND_NAMES = {"python": ".py files", "go": ".go files (*_test.go)", "rust": ".rs files (tests/*.rs)",
               "js": ".js/.mjs/.cjs/.ts/.tsx files"}


def _docstring(tree: ast.Module) -> str:
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


_COMMENT = re.compile(r"^\s*(?://+|/\*+)\s*(.*?)\s*(?:\*/)?$")


def _leading_comment(source: str) -> str:
    """The first comment line of a Go/Rust/JS file (what a Python docstring is to the reader):
    the operator's words about what the test checks."""
    for line in source.splitlines():
        m = _COMMENT.match(line)
        if m and m.group(1) and not m.group(1).startswith(("!", "eslint", "@ts-", "go:build", "+build")):
            return m.group(1)
    return ""


def recorded_origin(benchmark_root: Path, task_id: str, source: str) -> str | None:
    """The scripts' name of a recorded candidate with exactly this source, if any (so the
    scripted reviewer can replay its recorded review of that very test)."""
    folder = Path(benchmark_root) / "agent-scripts" / task_id / "candidates"
    if not folder.is_dir():
        return None
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        try:
            if path.read_text(encoding="utf-8") == source:
                return f"candidates/{path.name}"
        except OSError:
            continue
    return None


def _recorded_reviews(benchmark_root: Path, task_id: str) -> dict[str, object]:
    import json

    path = Path(benchmark_root) / "agent-scripts" / task_id / "reviews.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@runtime_checkable
class OperatorFeed(AuditAgent, Protocol):
    """The operator's audit agent (agents/operator.py): the files it is given are its candidates."""

    def submit_candidate(self, path_in_repo: str, source: str, requirement: str) -> None: ...

    def finish(self) -> None: ...


class FileOperatorAgent:
    """The audit role in headless operator mode: puts the operator's files to every audit.

    Wraps the operator agent (its queue builds the candidates, so ids and labels are the same
    as in the TUI). Task analysis gets nothing: the operator's files are audit candidates."""

    label = OPERATOR

    def __init__(self, operator_agent: OperatorFeed, candidates: list[CandidateFile],
                 benchmark_root: Path | None = None, table: TableApprover | None = None) -> None:
        self.agent = operator_agent
        self.candidates = candidates
        self.benchmark_root = benchmark_root
        self.table = table  # the --verdicts table (engine.approval.TableApprover), if any

    async def audit(self, ctx: AuditContext) -> AuditOutcome:
        _, takes = runner_kind(ctx.task.tests.framework)
        for c in self.candidates:
            if kind_of(c.file) == takes:  # a .go file is no candidate for a pytest task
                self.agent.submit_candidate(c.path_for(ctx.task), c.source, c.requirement)
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

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str
                     ) -> Candidate | ReferenceContradiction | None:
        # Headless: a file that fails on the reference is reported, not rewritten; the verdicts
        # file may say the reference is what breaks P there (with this run's lines as its output).
        verdict = self.table.lookup(candidate) if self.table is not None else None
        claim = verdict.reference_contradicts if verdict is not None else None
        if claim is not None:
            return dataclasses.replace(claim, output=claim.output or feedback[:OUTPUT_CHARS])
        return None


def plan_operator_run(bench: Benchmark, cfg: SessionConfig, candidates: list[CandidateFile], rounds_given: bool) -> None:
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


def check_reviewer(reviewer: str, bench: Benchmark, cfg: SessionConfig, candidates: list[CandidateFile]) -> None:
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


def check_syntax(bench: Benchmark, cfg: SessionConfig, candidates: list[CandidateFile]) -> None:
    """Each non-Python candidate parsed by its own toolchain in a world of the first task that
    takes it (sandbox/syntax_check.py), before the audit starts: a syntax error is one
    InputError naming the file and the line, not a failed run on the reference world later."""
    from testjack_tui.safe_text import echo
    from testjack_tui.services.test_files import syntax_check

    tasks = [bench.tasks[t] for t in (cfg.tasks or sorted(bench.tasks)) if t in bench.tasks]
    todo = [(c, task) for c in candidates if kind_of(c.file) != "python"
            for task in [next((t for t in tasks if runner_kind(t.tests.framework)[1] == kind_of(c.file)), None)]
            if task is not None]
    found, unavailable = syntax_check([(c, task, kind_of(c.file) or "", c.path_for(task), c.source)
                                       for c, task in todo])
    if unavailable:
        echo(f"warning: the candidates' syntax was not checked before the audit ({unavailable}); "
             "their runs on the reference world will show any error", err=True)
    if found:
        c, task_id, error = found
        raise InputError(c.file, "--candidate", f"{error}, checked in task {task_id}'s world")


def attach(bench: Benchmark, cfg: SessionConfig, roles: RoleSet | None, candidates: list[CandidateFile],
           rounds_given: bool, table: TableApprover | None = None) -> RoleSet:
    """Plan the run and put the operator's files in the audit role (returns the new roles).

    `roles` are the front end's, built because the operator takes the audit role (prepare()
    refuses files without `--agent operator`): a dataclass whose audit agent is the operator's."""
    chosen = bool(cfg.tasks or cfg.trials)
    plan_operator_run(bench, cfg, candidates, rounds_given)
    fit_to_tasks(candidates, [bench.tasks[t] for t in (cfg.tasks or sorted(bench.tasks)) if t in bench.tasks], chosen)
    check_syntax(bench, cfg, candidates)
    check_reviewer(cfg.agents.get("reviewer", ""), bench, cfg, candidates)
    if (roles is None or not dataclasses.is_dataclass(roles) or isinstance(roles, type)
            or not isinstance(roles.audit, OperatorFeed)):
        raise TypeError(f"operator files need the operator's audit role, got {roles!r}")
    wrapper = FileOperatorAgent(roles.audit, candidates, Path(bench.root), table)
    return dataclasses.replace(roles, audit=wrapper, task_analysis=wrapper)
