"""The records of a session's report (`engine/report.py` builds them, renders them and writes
them). Each has `to_json()`: the shape report.json and each trial's report.json show users.

A trial's findings, signals and proofs stay JSON-shaped records (`engine/verdicts.py` builds
them for the per-trial report as they are); everything the session's tables, the CLI and the
TUI read is an attribute here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from testjack_tui.engine.records_agent import AnalysisTestFate, AuditTestFate
from testjack_tui.engine.compare import Comparison
from testjack_tui.engine.config import Mode
from testjack_tui.engine.records import FlatRecord, JsonObject
from testjack_tui.engine.reference_claims import ReferenceClaim
from testjack_tui.engine.records_agent import SuspiciousFeature, TraceRow
from testjack_tui.engine.requirements import RequirementRow
# A trial's standing (engine/standing.py decides it), as the report shows it.
from testjack_tui.engine.standing import AgentAudit as AgentAudit, Review as Review, TrialReport as TrialReport
from testjack_tui.engine.summary import RoundSummary, Usage, WitnessSummary

# The witness fields a task's report lists (the summary also keeps quote, source, note, ...).
REPORT_WITNESS_FIELDS = ("id", "origin", "source_trial", "requirement", "explicit", "classification",
                         "rho", "path", "fails_on", "refutes", "duplicates")


@dataclass
class TableRow:
    """passing -> refuted and the corrected resolution rate for a benchmark, task or model."""

    name: str
    n_all: int
    passing: int
    refuted: int
    refuted_pct: float | None
    rate_before: float | None  # passing / all, in %
    rate_after: float | None  # (passing - refuted) / all, in %

    def to_json(self) -> JsonObject:
        return {"name": self.name, "all": self.n_all, "passing": self.passing, "refuted": self.refuted,
                "refuted_pct": self.refuted_pct, "rate_before": self.rate_before,
                "rate_after": self.rate_after}


@dataclass
class UnderspecifiedRow(FlatRecord):
    """Table 6's shape: underspecified tasks out of the tasks audited, per benchmark."""

    benchmark: str | None
    tasks: str  # "n / m"
    names: str


@dataclass
class Tables:
    benchmark: list[TableRow] = field(default_factory=list)
    tasks: list[TableRow] = field(default_factory=list)
    models: list[TableRow] = field(default_factory=list)
    underspecified: list[UnderspecifiedRow] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return {"benchmark": [r.to_json() for r in self.benchmark], "tasks": [r.to_json() for r in self.tasks],
                "models": [r.to_json() for r in self.models],
                "underspecified": [r.to_json() for r in self.underspecified]}


@dataclass
class UnderspecifiedPrompt(FlatRecord):
    """A prompt defect, refuting nothing: an implicit requirement most models skip (rho > 1/2,
    kind "witness"), or an open question about P (kind "open question": a discriminating test
    judged questionable, or the audit agent saying P is silent; `said` quotes who said what)."""

    task: str
    witness: str
    requirement: str
    rho: float | None
    models_skipping: list[str]
    models_measured: int
    clarification: str
    path: str
    fails_on: list[str]
    kind: str = "witness"
    said: list[str] = field(default_factory=list)
    reference: str = ""  # the reference's behaviour (open questions)


@dataclass
class DecisionRow(FlatRecord):
    """One decision a person took about a candidate, against what the reviewer said."""

    candidate: str
    task: str
    trial: str
    requirement: str
    reviewer_label: str
    decision: str
    label: str
    counts: bool
    by: str
    note: str
    at: str  # UTC, "YYYY-MM-DD HH:MM:SSZ"


@dataclass
class AwaitingOperator(FlatRecord):
    """A verdict (QUESTIONABLE / HUMAN_REVIEW) queued for the operator: it does not count yet."""

    candidate_id: str
    task_id: str
    label: str
    note: str  # why: the reviewer's reason for it
    case: str = ""  # one case of a KEEP_SOME the reviewer called QUESTIONABLE ("" = the candidate)
    trial_id: str = ""
    reviewer_label: str = ""
    requirement: str = ""


@dataclass(frozen=True)
class FeatureFate:
    """A suspicious-patch feature of the task analysis, with the held test that disproved it
    (`withdrawn`, None while it stands)."""

    feature: SuspiciousFeature
    withdrawn: str | None = None

    def to_json(self) -> JsonObject:
        out = self.feature.to_json()
        if self.withdrawn is not None:
            out["withdrawn"] = self.withdrawn
        return out


@dataclass
class TaskReport:
    well_formed: bool | None
    problems: list[str]
    vacuous: list[str]
    flaky: list[str]
    rounds: list[RoundSummary]
    witnesses: list[WitnessSummary]
    traceability: list[TraceRow]  # the task analysis's rows, as the agent wrote them
    suspicious_features: list[FeatureFate]
    # What became of each task-analysis candidate
    analysis_tests: list[AnalysisTestFate] = field(default_factory=list)
    # "The reference contradicts P here" (engine/reference_claims.py): the task is not
    # well-formed on those points.
    reference_contradicts: list[ReferenceClaim] = field(default_factory=list)
    # What became of each trial auditor's (and operator's) test (analysis_fates.audit_fate_rows)
    audit_tests: list[AuditTestFate] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return {"well_formed": self.well_formed, "problems": self.problems, "vacuous": self.vacuous,
                "flaky": self.flaky, "rounds": [r.to_json() for r in self.rounds],
                "witnesses": [{k: getattr(w, k) for k in REPORT_WITNESS_FIELDS} for w in self.witnesses],
                "traceability": [r.to_json() for r in self.traceability],
                "suspicious_features": [f.to_json() for f in self.suspicious_features],
                "analysis_tests": [r.to_json() for r in self.analysis_tests],
                "reference_contradicts": [c.to_json() for c in self.reference_contradicts],
                "audit_tests": [r.to_json() for r in self.audit_tests]}


@dataclass
class DetectorHits(FlatRecord):
    suspicious_trials: int
    trials: list[str]


@dataclass
class Detectors:
    """Per detector, the trials it found suspicious; and the trials judged REWARD_HACK."""

    by_name: dict[str, DetectorHits] = field(default_factory=dict)
    reward_hack_verdicts: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        out: JsonObject = {name: hits.to_json() for name, hits in self.by_name.items()}
        out["reward_hack_verdicts"] = self.reward_hack_verdicts
        return out


@dataclass
class Scoring(FlatRecord):
    """Our refutations against the benchmark's labels (ground truth)."""

    labelled_trials: int
    defective: int
    refuted: int
    true_refutations: int
    recall: float | None
    precision: float | None
    missed: list[str]
    false_refutations: list[str]
    rate_after_ours: float | None
    rate_after_labels: float | None
    brier_audited: float | None
    labels_file: str = ""


@dataclass
class Report:
    """A session's report: what report.json holds."""

    session_id: str
    benchmark: str | None = None
    benchmark_path: str | None = None
    mode: Mode | None = None
    sampler: str | None = None
    seed: int | None = None
    rounds: int | None = None
    state: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(0.0, 0, 0, False, 0, 0.0))
    tasks: dict[str, TaskReport] = field(default_factory=dict)
    trials: list[TrialReport] = field(default_factory=list)
    underspecified_prompts: list[UnderspecifiedPrompt] = field(default_factory=list)
    decisions: list[DecisionRow] = field(default_factory=list)
    awaiting_operator: list[AwaitingOperator] = field(default_factory=list)
    checklists: dict[str, list[RequirementRow]] = field(default_factory=dict)
    tables: Tables = field(default_factory=Tables)
    verdict_counts: dict[str, int] = field(default_factory=dict)  # verdict label -> trials
    detectors: Detectors = field(default_factory=Detectors)
    comparison: Comparison | None = None
    scoring: Scoring | None = None  # only when the benchmark ships labels

    def to_json(self) -> JsonObject:
        """The session's report.json."""
        out: JsonObject = {
            "session_id": self.session_id, "benchmark": self.benchmark, "benchmark_path": self.benchmark_path,
            "mode": self.mode, "sampler": self.sampler, "seed": self.seed, "rounds": self.rounds,
            "state": self.state, "usage": self.usage.to_json(),
            "tasks": {tid: t.to_json() for tid, t in self.tasks.items()},
            "trials": [t.to_json() for t in self.trials],
            "underspecified_prompts": [u.to_json() for u in self.underspecified_prompts],
            "decisions": [d.to_json() for d in self.decisions],
            "awaiting_operator": [a.to_json() for a in self.awaiting_operator],
            "checklists": {tid: [row.to_dict() for row in rows] for tid, rows in self.checklists.items()},
            "tables": self.tables.to_json(), "verdict_counts": self.verdict_counts,
            "detectors": self.detectors.to_json(),
            "comparison": None if self.comparison is None else self.comparison.to_json()}
        if self.scoring is not None:
            out["scoring"] = self.scoring.to_json()
        return out
