"""The typed rows of a session's run, world and check tables (engine/store.py reads and writes them).

Columns whose values form a closed set are `StrEnum`s (they compare equal to, and are stored as,
their plain strings, so old databases read unchanged). What an agent, a detector or a trial's
run wrote as free-form JSON stays a JSON object at the edge, under a name saying so.
`at` is when the row was stored: the store stamps it on write, so a record built to be written
leaves it at 0.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .records import JsonObject as JsonObject  # the one name for a JSON object at an edge
# A run's per-test outcomes as its JSON column holds them, node id -> {"status", "message"}
# (what the sandbox reported).
TestOutcomes = dict[str, JsonObject]


def of_file(outcomes: TestOutcomes, path: str, test_ids: Iterable[str] = ()) -> TestOutcomes:
    """The outcomes of the test in file `path` (its listed ids `test_ids`): those ids, the file
    itself, and every node under it."""
    wanted = set(test_ids)
    return {node: outcome for node, outcome in outcomes.items()
            if node in wanted or node == path or node.startswith(path + "::")}


class WorldKindName(StrEnum):
    """Which world a container holds (testjack_tui.model.WorldKind, as a stored column)."""

    NULL = "null"
    REFERENCE = "reference"
    MODEL = "model"


class CanaryVerdict(StrEnum):
    """What a run's canaries showed (sandbox/canaries.py); only the not-"ok" ones are stored."""

    OK = "ok"
    TAMPERED = "tampered"
    UNVERIFIABLE = "unverifiable"


class ProofKind(StrEnum):
    """A stored proof's kind (engine/harness_effect.py writes the harness ones)."""

    HARNESS_MEASURED = "harness_measured"  # the restore-and-rerun of T0 ran, whatever it showed
    HARNESS_EFFECT = "harness_effect"  # ... and T0 no longer passed: the trial's harness made it pass
    CANARY = "canary"  # a run's canaries proved forged reports (engine/verdicts.PROOF_KINDS)
    # Static proofs a verdict draws from a detector signal tied to a refuting witness (never stored
    # as rows; engine/verdicts._proofs), and the varied replay's environment dependence.
    SPECIAL_CASE = "special_case"
    ENV_SNIFFING = "env_sniffing"
    TEST_MACHINERY = "test_machinery"


@dataclass(frozen=True)
class WorldRow:
    """A world the session prepared, or failed to (`error`: the patch did not apply)."""

    name: str
    task_id: str
    kind: WorldKindName
    trial_id: str | None
    image: str
    tampered: tuple[str, ...] = ()
    error: str = ""
    at: float = 0.0


@dataclass(frozen=True)
class RunHeader:
    """A stored test run without its outcomes and output: what a scan of a whole session needs."""

    key: str
    task_id: str
    world: str
    trial_id: str | None
    candidate_ids: tuple[str, ...]
    at: float = 0.0


@dataclass(frozen=True)
class StoredRun:
    """A stored test run, keyed by engine.runner.run_key."""

    key: str
    task_id: str
    world: str
    trial_id: str | None
    candidate_ids: tuple[str, ...]
    test_ids: tuple[str, ...]
    isolate: bool
    outcomes: TestOutcomes
    exit_code: int | None
    timed_out: bool
    head: str
    tail: str
    duration: float
    at: float = 0.0
    # The key of the run this row copies (a candidate with the same source on the same world:
    # engine/oracle.taken_run); None for a run made in a container (or lent by another session).
    same_as: str | None = None
    # A run of the task's own verifier flow: every id its grader reported, and the digest of the
    # flow's inputs beyond the world (engine/runner.official_inputs); None for our runner's runs
    # and for rows written before schema 6.
    grader: GraderReport | None = None


@dataclass(frozen=True)
class GraderReport:
    """What a run of the task's own test.sh reported, with the inputs it ran (`inputs`: the tests
    folder, the patch, the evaluator's settings, as engine/runner.official_inputs digests them):
    the export takes `ids` from a stored run only where its own run would have these very inputs."""

    inputs: str
    ids: tuple[str, ...]


@dataclass(frozen=True)
class CanaryCheck:
    """What one run's canaries showed, when not "ok"."""

    key: str  # the run's key
    task_id: str
    trial_id: str | None
    world: str
    verdict: CanaryVerdict
    problems: tuple[str, ...]
    at: float = 0.0


@dataclass(frozen=True)
class TaskCheckRow:
    """A task's well-formedness check (engine/task_checks.py): T0 on the null and reference worlds."""

    task_id: str
    well_formed: bool
    problems: tuple[str, ...] = ()
    vacuous: tuple[str, ...] = ()
    passing_trials: tuple[str, ...] = ()  # the officially passing trials it was checked for
    regression_guards: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()  # T0 tests whose outcome differed between two runs


@dataclass(frozen=True)
class TrialCheckRow:
    """Whether our re-run of T0 on a trial's world reproduced its recorded pass."""

    trial_id: str
    task_id: str
    reproduced: bool
    reason: str
    model: str = ""
    agent: str = ""
    official_pass: bool = False  # the benchmark's recorded verdict, apart from our re-run
    reward: float | None = None
    excluded: bool = False  # not checked: the task is not well-formed
    tampered: tuple[str, ...] = ()  # T0 files the trial's patch changes


@dataclass(frozen=True)
class LedgerEntry:
    """One LLM call's usage."""

    seq: int
    at: float
    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    usd: float
    estimated: bool
    call_id: str
    task_id: str
    trial_id: str | None


@dataclass(frozen=True)
class LedgerTotals:
    tokens: int
    usd: float
    estimated: bool  # some call's price was estimated
    calls: int


@dataclass(frozen=True)
class AuditRow:
    """A role's stored output: `key` is a trial id, "analysis", or a key its module builds
    (approval.review_key, open_questions / reference_claims PREFIX + ...)."""

    task_id: str
    key: str
    data: JsonObject  # the agent's answer as its module stored it
    at: float = 0.0


@dataclass(frozen=True)
class Proof:
    """Executed proof about a trial's harness (engine/harness_effect.py)."""

    trial_id: str
    task_id: str
    kind: ProofKind
    key: str
    data: JsonObject  # the proof as its writer stored it, "kind" included (Evidence.proofs' shape)
    at: float = 0.0
