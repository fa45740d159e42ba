"""The domain model: benchmarks, tasks and trials as loaded from disk.

Loading never touches containers. Words as in docs/architecture.md: a task is P (instruction),
R (environment), G (reference), T0 (official tests); a trial is one agent's patch s with the
verdict the benchmark recorded for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

WorldKind = Literal["null", "reference", "model"]


@dataclass(frozen=True)
class Environment:
    """How to get R: a named image (registry or local) or a Containerfile with its context."""

    image: str | None = None
    containerfile: Path | None = None
    context: Path | None = None
    workdir: str = "/app"
    # Pinned limits from the task (task.toml [environment]); the sandbox applies its own caps too.
    memory_mb: int | None = None
    cpus: float | None = None
    build_network: bool = False  # the Containerfile build may reach package registries


@dataclass(frozen=True)
class Reference:
    """G: a patch, a solve script (run in the repo), or both. Both None: no-reference task."""

    patch: str | None = None
    solve_script: str | None = None
    # True when G is G′: an implementation written from P alone by our own agent (no-reference
    # mode), a weaker oracle than the benchmark's own solution; verdicts say so.
    independent: bool = False

    @property
    def present(self) -> bool:
        return bool(self.patch or self.solve_script)


@dataclass(frozen=True)
class Evaluator:
    """The benchmark's own T0 flow, when it ships one; T0's truth is what it says.

    Harbor: the task's `tests/` folder goes to `/tests`, the patch to
    `/logs/artifacts/model.patch`, `bash /tests/test.sh` runs with the verifier's timeout, and
    per-test outcomes come from the reports `tests/config.json`'s `grade` section names
    (`junit`: `classname.name`; `ctrf`: `suite.name` or `name`), the reward from
    `/logs/verifier/reward.json` or `reward.txt`. SWE-bench: the harness's per-repository test
    command on the test directives, statuses from its log parser.
    """

    kind: str  # "harbor" | "swebench"
    tests_dir: Path | None = None  # Harbor: the task's tests/ folder
    report_format: str = "junit"  # "junit" | "ctrf" (Harbor reports) | "log" (SWE-bench log parser)
    reports: tuple[str, ...] = ()
    node_id: str = "name"  # ctrf only: "suite.name" | "name"
    timeout_sec: float = 1800.0
    separate: bool = False  # [verifier] environment_mode = "separate"
    network_mode: str = "no-network"
    verifier_image: str | None = None  # [verifier.environment] docker_image
    verifier_containerfile: Path | None = None  # tests/Dockerfile in separate mode
    # SWE-bench: the harness's test command for the repository and its log parser's name
    # (SWE-bench: "pytest", "pytest_options", "pytest_v2", "matplotlib", "seaborn", "django",
    # "sympy"; see testjack_tui/swebench_harness.py).
    test_command: str = ""
    log_parser: str = ""


@dataclass(frozen=True)
class OfficialTests:
    """T0 and how the official evaluator applies it.

    The evaluator resets the files the test patch touches to their base version, applies the
    test patch, then runs the fail-to-pass and pass-to-pass ids with the framework's runner.
    """

    test_patch: str = ""
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    framework: str = "pytest"
    test_files: tuple[str, ...] = ()  # files the test patch touches (reset before applying)
    run_script: str | None = None  # the benchmark's own verifier script (Harbor tests/test.sh)
    evaluator: Evaluator | None = None  # how the benchmark itself runs T0 (None: our runner)

    @property
    def ids(self) -> tuple[str, ...]:
        return self.fail_to_pass + self.pass_to_pass


@dataclass(frozen=True)
class ReferenceProgram:
    """An executable oracle (task.toml `[reference_program]`): typically the old system the task
    ports, in any language. It reads one input per line on stdin and prints one output line per
    input; differential probes compare the trial's answers with its answers."""

    command: tuple[str, ...]  # argv, run with cwd /tmp/oracle
    files: Path  # folder copied into /tmp/oracle
    image: str | None = None  # None: the task's own environment image (its null world)


@dataclass
class Task:
    id: str
    instruction: str  # P
    environment: Environment  # R
    reference: Reference  # G
    tests: OfficialTests  # T0
    language: str = "python"
    base_commit: str | None = None
    source: Path | None = None  # folder or file it was loaded from
    metadata: dict[str, Any] = field(default_factory=dict)
    reference_program: ReferenceProgram | None = None


@dataclass
class Trial:
    id: str
    task_id: str
    agent: str
    model: str
    patch: str  # s, a unified diff against the task's repo
    official_pass: bool  # the benchmark's recorded verdict; never overwritten by our re-runs
    reward: float | None = None
    trajectory: Path | None = None
    source: Path | None = None
    exception: str | None = None

    @property
    def recorded(self) -> str:
        """The benchmark's recorded verdict as shown: "pass", "fail", or "unknown" when no
        verdict source names the trial (no reward and no exception explaining its absence)."""
        if self.official_pass:
            return "pass"
        return "unknown" if self.reward is None and self.exception is None else "fail"


@dataclass(frozen=True)
class Skipped:
    """Something a loader did not load, with the reason; loaders never drop silently."""

    path: str
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}: {self.field}: " if self.field else f"{self.path}: "
        return where + self.reason


@dataclass
class Benchmark:
    name: str
    format: str  # "harbor" | "swebench"
    root: Path
    tasks: dict[str, Task] = field(default_factory=dict)
    trials: list[Trial] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # Ground truth, if the benchmark ships one: used for scoring reports only, never by the engine.
    labels_path: Path | None = None

    def trials_of(self, task_id: str) -> list[Trial]:
        return [t for t in self.trials if t.task_id == task_id]

    def passing(self, task_id: str) -> list[Trial]:
        return [t for t in self.trials if t.task_id == task_id and t.official_pass]

    def models_of(self, task_id: str) -> list[str]:
        return sorted({t.model for t in self.trials if t.task_id == task_id})


SWEBENCH_TIMEOUT = 1800.0  # the SWE-bench harness's default, for tasks that name none


def t0_timeout(task: Task, default: float = SWEBENCH_TIMEOUT) -> float:
    """How long T0 may run on a world: the task's `[verifier] timeout_sec` (Harbor), else the
    SWE-bench harness's default. (Candidate and witness runs have their own, shorter default.)"""
    verifier = (task.metadata or {}).get("verifier") or {}
    value = verifier.get("timeout_sec") if isinstance(verifier, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf"):
        return float(value)
    return default


def t0_flow(task: Task) -> str:
    """Which flow T0 takes on `task`'s worlds: "official" (the benchmark's own evaluator, its
    test.sh) or "direct" (our runner on T0's ids). Verify reports it and the engine keys T0's
    stored runs by it."""
    return "official" if task.tests.evaluator is not None else "direct"
