"""The sandbox's public types. The engine and the agents use only these and `Sandbox`.

A *world* is a prepared snapshot (a committed image) of the task's repo in one state:
null R, reference R[G] or model R[s], each with T0 applied the way the official evaluator
applies it. Every run starts a fresh container from the snapshot, so nothing leaks between runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, cast, get_args

# "unverifiable": the run's canaries (sandbox/canaries.py) show its reports cannot be trusted.
TestStatus = Literal["passed", "failed", "error", "skipped", "not_found", "timed_out", "unverifiable"]
WorldKind = Literal["null", "reference", "model"]
TEST_STATUSES: frozenset[str] = frozenset(get_args(TestStatus))


def as_status(word: str) -> TestStatus:
    """A status read from a report or log as ours; a word that is none of them is an error
    (never a pass)."""
    return cast(TestStatus, word) if word in TEST_STATUSES else "error"


WorldEventKind = Literal["created", "running", "output", "exited", "removed", "timeout"]


@dataclass(frozen=True)
class WorldRef:
    """A prepared world: the snapshot image and what it was made from."""

    task_id: str
    kind: WorldKind
    trial_id: str | None
    image: str  # committed snapshot image (id or tag)
    workdir: str  # repo path inside the container, e.g. /app or /testbed
    # Harness files (conftest.py, pytest config, sitecustomize, edited test files) the trial's
    # patch changed relative to the reference; restored for witness runs and reported.
    tampered: tuple[str, ...] = ()
    framework: str = "pytest"  # the test runner for this task's T0 and candidates
    memory_mb: int | None = None  # the task's own memory limit, if it pins one
    applied_with: str = ""  # how G or s applied: "git apply", "patch --fuzz=3", "solve script", ...
    # "uid:gid" trial code runs as (it owns the repo); "" = the image's own user (a snapshot of
    # an image that does not run as root, where nothing could be chowned).
    user: str = ""
    repo_mb: int = 0  # the repo's size; its run containers get this much more memory (tmpfs)
    # T0's build options (go `-tags=...`, cargo `--features=...`): every witness run gets them
    # (sandbox/runners/build_flags.py).
    build_flags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.task_id}/{self.kind}" + (f"/{self.trial_id}" if self.trial_id else "")


@dataclass(frozen=True)
class PatchResult:
    """Outcome of applying a patch while preparing a world."""

    applied: bool
    method: str  # e.g. "git apply", "git apply --3way", "patch --fuzz", "" when it failed
    message: str = ""


@dataclass(frozen=True)
class TestOutcome:
    id: str
    status: TestStatus
    message: str = ""  # failure text, trimmed
    duration: float = 0.0


@dataclass
class ExecResult:
    argv: list[str]
    exit_code: int | None  # None when killed by timeout
    timed_out: bool
    stdout_head: str
    stdout_tail: str
    stderr_head: str
    stderr_tail: str
    log_path: Path | None  # full output on disk
    duration: float
    limit_hit: str = ""  # "disk" when the run was killed for writing past the disk limit

    @property
    def output(self) -> str:
        """Head and tail of stdout+stderr, for showing to people and agents."""
        parts = [self.stdout_head]
        if self.stdout_tail:
            parts += ["\n[... output cut ...]\n", self.stdout_tail]
        if self.stderr_head:
            parts += ["\n[stderr]\n", self.stderr_head]
        if self.stderr_tail:
            parts += ["\n[... output cut ...]\n", self.stderr_tail]
        return "".join(parts)


@dataclass
class TestRun:
    world: str  # WorldRef.name
    test_ids: list[str]
    outcomes: dict[str, TestOutcome]
    exec: ExecResult
    files: dict[str, str] = field(default_factory=dict)  # candidate files copied in for this run
    # Harness files restored to their reference version before this run (isolate_harness=True).
    neutralised: list[str] = field(default_factory=list)
    # Runs on model worlds carry canaries: "ok", "tampered" (proven: every outcome is void) or
    # "unverifiable" (passes are void); "" when the run had none.
    canaries: str = ""
    tampering: list[str] = field(default_factory=list)  # what the canaries showed, when not "ok"
    # The canaries' outcomes as the runner reported them, counted by status: the runner's own
    # summary counts them, so a count shown to a model subtracts them (never names them).
    canary_counts: dict[str, int] = field(default_factory=dict)
    # How T0 ran: "official" (the benchmark's own verifier script and report parser) or
    # "direct" (our runner); with the official flow, the reward the verifier wrote and how
    # many test ids its reports named (whether or not T0 lists them).
    flow: str = "direct"
    reward: float | None = None
    reported: int = 0
    # Witness runs: each test's result per channel (exit status, report, our own run, the varied
    # environment), keyed by original id (sandbox/channels.py).
    channels: dict[str, dict[str, str]] = field(default_factory=dict)
    # Every id the grader's reports named (listed by T0 or not), as the grader spells it: the
    # export learns a witness's ids in the grader's scheme from them (engine/export_official.py).
    reported_ids: tuple[str, ...] = ()

    def status(self, test_id: str) -> TestStatus:
        outcome = self.outcomes.get(test_id)
        return outcome.status if outcome else "not_found"

    @property
    def output(self) -> str:
        return self.exec.output if self.exec is not None else ""

    @property
    def exit_code(self) -> int | None:
        return self.exec.exit_code if self.exec is not None else None

    @property
    def all_passed(self) -> bool:
        return bool(self.outcomes) and all(o.status == "passed" for o in self.outcomes.values())

    @property
    def any_failed(self) -> bool:
        return any(o.status in ("failed", "error", "timed_out") for o in self.outcomes.values())


@dataclass(frozen=True)
class WorldEvent:
    """What the UI shows about containers: started, command running, output, exit, removed."""

    world: str
    container: str
    kind: WorldEventKind
    command: str = ""
    text: str = ""  # output chunk for kind == "output"
    exit_code: int | None = None
    image: str = ""
    node: str = ""  # the Ray node running the container ("" on the local backend)


WorldListener = Callable[[WorldEvent], None]
