"""What the engine asks of the agents and of the operator.

The scripted demo agents, the operator and the LLM roles all implement these, so the engine
never knows which one it is talking to. Nothing a role *says* refutes or clears a trial: only
candidates that the engine executes on both worlds and that are approved count.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Awaitable, Callable, Iterable, Literal, Protocol

from testjack_tui.model import Task, Trial
from .records import JsonObject
from .records_runs import TestOutcomes

from .records_agent import (AgentFinding, CaseCoverage, CaseLabel, ChecklistRow, JudgedCandidate, PromptSilent,
                            ReviewCase, SuspiciousFeature, TraceRow, ValidatedTest)
from .records_agent import ReferenceContradiction as ReferenceContradiction

# The audit's checklist item is a checklist row as the agent wrote it (records_agent.ChecklistRow).
ChecklistItem = ChecklistRow


class ReviewLabel(StrEnum):
    """A reviewer's (or the operator's) label of a candidate: only "valid" counts."""

    VALID = "valid"
    QUESTIONABLE = "questionable"
    INVALID = "invalid"


CandidateAuthor = Literal["audit", "task_analysis", "operator"]


@dataclass(frozen=True)
class Candidate:
    """A proposed test file in the repo's own framework."""

    id: str  # stable within a session, e.g. "auth-3.c2" (repairs get a new id with a parent)
    path: str  # repo-relative path the file is written to, e.g. "tests/test_tj_alias.py"
    source: str
    requirement: str  # the clause of P the author says it checks
    author: CandidateAuthor
    attempt: int = 1  # 1 = first version, 2.. = repairs
    parent: str | None = None  # the candidate this one repairs
    test_ids: tuple[str, ...] = ()  # node ids to run; empty = the whole file
    origin: str = ""  # where it came from (script file, transcript id); shown to the operator

    def run_ids(self) -> list[str]:
        return list(self.test_ids) or [self.path]


@dataclass
class AuditOutcome:
    candidates: list[Candidate]
    checklist: list[ChecklistItem] = field(default_factory=list)
    notes: str = ""  # the agent's own report text (untrusted: shown, never acted on)
    # Explanations only: witnesses decide, not findings.
    findings: list[AgentFinding] = field(default_factory=list)
    nothing_found: bool | None = None  # the agent said explicitly that it found nothing
    prompt_silent: list[PromptSilent] = field(default_factory=list)  # open questions about P
    # "The reference contradicts P here" (engine/reference_claims.py)
    reference_contradicts: list[ReferenceContradiction] = field(default_factory=list)


class AnalysisResult(list[Candidate]):
    """The task analysis's candidates (a list, as the engine expects), plus its requirement <-> T0
    traceability matrix and the suspicious-patch features the sampler and the auditors use."""

    def __init__(self, candidates: Iterable[Candidate] = (), traceability: Iterable[TraceRow] = (),
                 suspicious_features: Iterable[SuspiciousFeature] = (), notes: str = ""):
        super().__init__(candidates)
        self.traceability: list[TraceRow] = list(traceability)
        self.suspicious_features: list[SuspiciousFeature] = list(suspicious_features)
        self.notes = notes


@dataclass(frozen=True)
class ReviewVerdict:
    candidate_id: str
    label: ReviewLabel
    requirement: str  # the clause of P this test checks
    explicit: bool  # P states it (quotable)
    quote: str = ""
    reason: str = ""
    reviewer: str = ""  # who judged: "scripted", a model name, "operator"
    overall: str = ""  # KEEP_ALL | KEEP_SOME | DROP_ALL | HUMAN_REVIEW ("" = not given)
    cases: tuple[ReviewCase, ...] = ()  # per test case
    coverage: tuple[CaseCoverage, ...] = ()  # requirement <-> cases
    keep: tuple[str, ...] = ()  # KEEP_SOME: the cases accepted; they alone become the witness


def needs_operator(verdict: "ReviewVerdict") -> bool:
    """QUESTIONABLE and HUMAN_REVIEW are for a person: never counted automatically."""
    return verdict.label == "questionable" or verdict.overall == "HUMAN_REVIEW"


def questionable_cases(cases: Iterable[ReviewCase]) -> tuple[str, ...]:
    """The test cases a reviewer called QUESTIONABLE (of a KEEP_SOME: the kept ones count, these
    wait for a person)."""
    return tuple(c.test_id for c in cases if c.label == CaseLabel.QUESTIONABLE and c.test_id)


@dataclass(frozen=True)
class ApprovalRequest:
    session_id: str
    task_id: str
    trial_id: str | None
    candidate: Candidate
    verdict: ReviewVerdict
    reference_status: str  # summary of the run on R[G]
    model_status: str  # summary of the run on R[s]


@dataclass(frozen=True)
class OperatorJudgement:
    """The operator's own judgement of a candidate's requirement, beside the reviewer's:
    empty / None where the operator said nothing."""

    requirement: str = ""
    explicit: bool | None = None
    quote: str = ""

    def to_json(self) -> JsonObject:
        """Only what was said (the stored column, the reports' "operator" entry)."""
        out: JsonObject = {}
        if self.requirement:
            out["requirement"] = self.requirement
        if self.explicit is not None:
            out["explicit"] = self.explicit
        if self.quote:
            out["quote"] = self.quote
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> OperatorJudgement:
        explicit = data.get("explicit")
        return cls(str(data.get("requirement") or ""), None if explicit is None else bool(explicit),
                   str(data.get("quote") or ""))


@dataclass(frozen=True)
class ApprovalDecision:
    counts: bool  # True: the candidate becomes a witness
    label: ReviewLabel  # the label that stands (the reviewer's, or the operator's overrule)
    by: str  # "auto" or "operator"
    note: str = ""
    # The operator's own judgement of the requirement, beside the reviewer's (never replacing
    # what the reviewer said): empty / None when the operator did not say.
    requirement: str = ""
    explicit: bool | None = None
    quote: str = ""

    def judgement(self) -> OperatorJudgement:
        """What the operator said about the requirement, as stored with the decision."""
        return OperatorJudgement(self.requirement, self.explicit, self.quote)


@dataclass(frozen=True)
class OperatorVerdict:
    """One operator judgement of a candidate (a `--verdicts` entry, the TUI's dialog): the
    reviewer's fields, each optional but the label."""

    label: ReviewLabel
    note: str = ""
    requirement: str = ""
    explicit: bool | None = None  # None: not said (the reviewer's stands)
    quote: str = ""
    # The operator's word that the test is right and the reference breaks P: answers the
    # repair of that candidate when it fails on the reference (engine/reference_claims.py).
    reference_contradicts: ReferenceContradiction | None = None


class WorldTools(Protocol):
    """Tools bound to one task's worlds, handed to an agent for one session."""

    async def run(self, world: str, command: str, timeout: float = 60) -> str: ...
    async def read_file(self, world: str, path: str) -> str: ...
    async def list_files(self, world: str, path: str = ".") -> str: ...
    async def run_tests(self, world: str, test_ids: list[str], files: dict[str, str] | None = None) -> str: ...
    def diff(self) -> str: ...
    def official_tests(self) -> str: ...
    def evidence(self) -> str: ...


Emit = Callable[[Any], None]  # posts an engine event (see events.py)


class Ledger(Protocol):
    """The session's usage ledger and budget guard (implemented by the engine's budget module).

    Agents call `check()` before every LLM request (it raises BudgetExceeded when a limit would
    be passed) and `record()` after it, before making the next one.
    """

    def check(self, role: str, model: str, max_tokens: int | None = None) -> None: ...

    def record(self, role: str, model: str, prompt_tokens: int, completion_tokens: int,
               usd: float, estimated: bool, call_id: str = "", task_id: str = "",
               trial_id: str | None = None) -> None: ...


class LLMCache(Protocol):
    """Stored LLM replies by request key."""

    def get_llm_response(self, key: str) -> str | None: ...

    def put_llm_response(self, key: str, value: str) -> None: ...


class BudgetExceeded(Exception):
    """A limit would be passed; the session pauses and can resume with a raised limit."""

    def __init__(self, limit: str, message: str = ""):
        self.limit = limit
        super().__init__(message or f"budget limit reached: {limit}")


@dataclass
class AuditContext:
    session_id: str
    task: Task
    trial: Trial | None  # None for task analysis
    tools: WorldTools
    emit: Emit
    known_witnesses: list[Candidate] = field(default_factory=list)
    evidence: JsonObject = field(default_factory=dict)  # the trial's evidence, as the agent is shown it
    ledger: Ledger | None = None
    # Where this agent session's transcript (JSONL) goes; the TUI shows it.
    transcript_path: str | None = None
    # Optional LLM response cache (the engine's SessionStore): a resumed session replays stored
    # replies instead of calling the endpoint again.
    llm_cache: LLMCache | None = None
    # For the reviewer: candidate id -> {"reference": {node: {status, message}}, trial id: {...}},
    # the per-case outcomes on the reference and on the trials where it was run.
    case_runs: dict[str, dict[str, TestOutcomes]] = field(default_factory=dict)
    # Task analysis's suspicious-patch features for this task (shown to the audit agent).
    features: list[SuspiciousFeature] = field(default_factory=list)
    # Candidates of this task already judged and not counted, so a later audit does not write
    # the same test again.
    judged: list[JudgedCandidate] = field(default_factory=list)
    # For an auditor: every validated test of the task (witnesses, then the task analysis's tests
    # that held on every trial), so it proposes only new ones.
    validated: list[ValidatedTest] = field(default_factory=list)


class AuditAgent(Protocol):
    label: str  # shown in the UI, e.g. "scripted (offline demo)" or "gpt-4.1 @ local-vllm"

    async def audit(self, ctx: AuditContext) -> AuditOutcome: ...

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str
                     ) -> Candidate | ReferenceContradiction | None:
        """A new version of a candidate that failed on the reference world, None to give up, or
        a ReferenceContradiction: the test stands and the reference breaks P."""
        ...


class TaskAnalyst(Protocol):
    """Solution-blind: sees P, the null world and T0, never G or a trial."""

    label: str

    async def analyse(self, ctx: AuditContext) -> list[Candidate]: ...

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str
                     ) -> Candidate | ReferenceContradiction | None: ...


class Reviewer(Protocol):
    """Judges a candidate with P as the sole authority; never sees G's code."""

    label: str

    async def review(self, ctx: AuditContext, candidate: Candidate) -> ReviewVerdict: ...


@dataclass(frozen=True)
class FailurePattern:
    """One way a witness fails on refuted trials: the witness and the failing assertion, shared
    by every trial listed (engine/failure_patterns.py groups them). What an explainer sees."""

    key: str  # the pattern's cache key
    witness_id: str
    test_path: str
    test_source: str
    requirement: str
    quote: str  # the words of P the requirement rests on ("" when implicit)
    status: str  # the witness's outcome on these trials: failed, error, timed_out, killed_*, ...
    failing: str  # the failing assertion (engine/explanations.failing_line)
    message: str  # the failure as the runner gave it (untrusted)
    trials: tuple[str, ...]  # every refuted trial failing this way; the first one's diff is shown
    missing: bool = False  # the failure says the required surface is missing (not merely wrong)


class Explainer(Protocol):
    """Says in one paragraph why trials fail a witness the way they do: one cheap call per
    failure pattern, for the report's "Why it happens" of refuted trials nobody audited."""

    label: str

    async def explain(self, ctx: AuditContext, pattern: FailurePattern) -> str: ...


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> ApprovalDecision: ...


class Implementer(Protocol):
    """Writes G′ from P, T0 and the original repository for a task without a reference solution."""

    async def implement(self, ctx: AuditContext) -> tuple[dict[str, str], str]:
        """(files of G′ by repo path, notes)."""
        ...

    async def revise(self, ctx: AuditContext, feedback: str, attempt: int) -> tuple[dict[str, str], str] | None:
        """G′ again after it failed T0 (`feedback`), or None to give up."""
        ...


class RoleSet(Protocol):
    """The agent roles one session works with: built by the composition root from the agent
    choices (testjack_tui/compose.py), or handed in by a test."""

    @property
    def audit(self) -> AuditAgent: ...

    @property
    def reviewer(self) -> Reviewer: ...

    @property
    def task_analysis(self) -> TaskAnalyst | None: ...

    @property
    def implementer(self) -> Implementer | None: ...


ApproverFn = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]
