"""The machine-readable result of a session, computed from its database alone.

Per task and model: passing (officially), refuted, clean (audited, nothing found), unaudited,
ambiguous (fails only witnesses the ambiguity rule set aside), not_reproducible, excluded (task
not well-formed); the witnesses with their source and requirement; and, per refuted trial, the
witness's runs on both worlds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .approval import awaiting_operator
from .records_verdict import AwaitingRow
from .budget import UNPRICED
from .config import Mode, SessionConfig, mode_named
from .corpus import read_corpus
from .records import FlatRecord, JsonObject
from .records_standing import RefutationRow, TaskLoopState, WitnessClassification, WitnessRow
from .records_runs import StoredRun, TaskCheckRow, TestOutcomes, TrialCheckRow
from .runner import is_failing
from .store import SessionStore

CATEGORIES = ("refuted", "ambiguous", "clean", "unaudited", "not_reproducible", "excluded")
HEAD = 1500

Counts = dict[str, int]  # "passing" and each of CATEGORIES -> number of trials


def _counts() -> Counts:
    return {"passing": 0, **{c: 0 for c in CATEGORIES}}


@dataclass
class RunView:
    """One side (model or reference world) of a refutation: the witness's stored run."""

    status: str
    world: str | None = None
    run: str | None = None  # the run's key; None when no run was stored
    exit_code: int | None = None
    timed_out: bool | None = None
    head: str = ""
    tail: str = ""
    tests: TestOutcomes | None = None  # the witness's own test outcomes

    def to_json(self) -> JsonObject:
        if self.run is None:
            return {"status": self.status}
        out: JsonObject = {"status": self.status, "world": self.world, "run": self.run,
                               "exit_code": self.exit_code, "timed_out": self.timed_out,
                               "head": self.head, "tail": self.tail}
        if self.tests is not None:
            out["tests"] = self.tests
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> RunView:
        return cls(data["status"], data.get("world"), data.get("run"), data.get("exit_code"),
                   data.get("timed_out"), data.get("head", ""), data.get("tail", ""), data.get("tests"))


@dataclass
class Refutation:
    witness: str
    requirement: str
    model: RunView
    reference: RunView

    def to_json(self) -> JsonObject:
        return {"witness": self.witness, "requirement": self.requirement,
                "model": self.model.to_json(), "reference": self.reference.to_json()}

    @classmethod
    def from_json(cls, data: JsonObject) -> Refutation:
        return cls(data["witness"], data["requirement"], RunView.from_json(data["model"]),
                   RunView.from_json(data["reference"]))


@dataclass
class TrialSummary:
    """Where one officially passing trial stands (`state` is one of CATEGORIES)."""

    model: str | None
    agent: str | None
    state: str
    audited: bool
    loop_state: str | None
    reason: str = ""  # why it was excluded or not reproduced
    refutations: list[Refutation] = field(default_factory=list)
    ambiguous_witnesses: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"model": self.model, "agent": self.agent, "state": self.state,
                               "audited": self.audited, "loop_state": self.loop_state}
        if self.reason:
            out["reason"] = self.reason
        if self.refutations:
            out["refutations"] = [r.to_json() for r in self.refutations]
        if self.ambiguous_witnesses:
            out["ambiguous_witnesses"] = self.ambiguous_witnesses
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> TrialSummary:
        return cls(data["model"], data["agent"], data["state"], data["audited"], data["loop_state"],
                   data.get("reason", ""), [Refutation.from_json(r) for r in data.get("refutations", [])],
                   list(data.get("ambiguous_witnesses", [])))


@dataclass
class WitnessSummary(FlatRecord):
    """One witness (its first copy; `duplicates` names the others) and what it does."""

    id: str
    origin: str  # "task_analysis" | "audit"
    source_trial: str | None
    requirement: str
    explicit: bool
    quote: str
    path: str
    source: str
    test_ids: list[str]
    round: int | None
    classification: str | None
    rho: float | None
    note: str | None
    fails_on: list[str]
    refutes: list[str]
    duplicates: list[str]


@dataclass
class RoundSummary(FlatRecord):
    round: int
    trial_id: str
    state: str
    witnesses: list[str]
    refuted: list[str]


@dataclass
class TaskSummary:
    state: str
    well_formed: bool | None  # None: not checked yet
    problems: list[str]
    vacuous: list[str]
    flaky: list[str]
    rounds: list[RoundSummary]
    models: dict[str, Counts]
    trials: dict[str, TrialSummary]
    witnesses: list[WitnessSummary]

    def to_json(self) -> JsonObject:
        return {"state": self.state, "well_formed": self.well_formed, "problems": self.problems,
                "vacuous": self.vacuous, "flaky": self.flaky,
                "rounds": [r.to_json() for r in self.rounds], "models": self.models,
                "trials": {tid: t.to_json() for tid, t in self.trials.items()},
                "witnesses": [w.to_json() for w in self.witnesses]}

    @classmethod
    def from_json(cls, data: JsonObject) -> TaskSummary:
        return cls(data["state"], data["well_formed"], data["problems"], data["vacuous"], data["flaky"],
                   [RoundSummary.from_json(r) for r in data["rounds"]], data["models"],
                   {tid: TrialSummary.from_json(t) for tid, t in data["trials"].items()},
                   [WitnessSummary.from_json(w) for w in data["witnesses"]])


@dataclass
class Usage(FlatRecord):
    usd: float
    tokens: int
    llm_calls: int
    estimated: bool  # some LLM costs were estimated (the endpoint reported no usage)
    test_runs: int
    seconds: float  # the session's wall time (counted against --budget-seconds), waits included
    waiting_seconds: float = 0.0  # of `seconds`, how long a person's decision / step was awaited
    unpriced: list[str] = field(default_factory=list)  # models with no price: `usd` leaves them out
    # runs of a test answered by its earlier run on the same world: no container, not in test_runs
    # (oracle.taken_run)
    same_test_runs: int = 0


@dataclass
class SessionSummary:
    session_id: str | None
    state: str | None
    benchmark: str | None
    mode: Mode | None
    seed: int | None
    sampler: str | None
    rounds: int | None
    config: SessionConfig | None  # None: a database without one (never written by a session)
    usage: Usage
    totals: Counts
    models: dict[str, Counts]
    tasks: dict[str, TaskSummary]
    # Judgements left for a person (approval.awaiting_operator): never dropped, never counted.
    awaiting_operator: list[AwaitingRow] = field(default_factory=list)

    def trials(self) -> dict[str, TrialSummary]:
        """Every trial of the session, by id."""
        return {tid: t for task in self.tasks.values() for tid, t in task.trials.items()}

    def to_json(self) -> JsonObject:
        """The summary as summary.json shows it."""
        return {"session_id": self.session_id, "state": self.state, "benchmark": self.benchmark,
                "mode": self.mode, "seed": self.seed, "sampler": self.sampler,
                "rounds": self.rounds, "config": self.config.to_dict() if self.config else {},
                "usage": self.usage.to_json(),
                "totals": self.totals, "models": self.models,
                "tasks": {tid: t.to_json() for tid, t in self.tasks.items()},
                "awaiting_operator": [a.to_json() for a in self.awaiting_operator]}

    @classmethod
    def from_json(cls, data: JsonObject) -> SessionSummary:
        """A summary read back from summary.json."""
        return cls(data["session_id"], data["state"], data["benchmark"],
                   None if data["mode"] is None else mode_named(data["mode"]), data["seed"], data["sampler"],
                   data["rounds"], SessionConfig.from_dict(data["config"]) if data["config"] else None,
                   Usage.from_json(data["usage"]),
                   data["totals"], data["models"],
                   {tid: TaskSummary.from_json(t) for tid, t in data["tasks"].items()},
                   [AwaitingRow.from_json(a) for a in data.get("awaiting_operator") or []])


def _run_view(run: StoredRun | None, witness: WitnessRow | None, status: str) -> RunView:
    if run is None:
        return RunView(status)
    tests = None
    if witness is not None:
        path, ids = witness.path, set(witness.test_ids)
        tests = {node: o for node, o in run.outcomes.items()
                 if node in ids or node == path or node.startswith(path + "::")}
    return RunView(status, run.world, run.key, run.exit_code, run.timed_out,
                   run.head[:HEAD], run.tail[-HEAD:], tests)


def _category(trial_check: TrialCheckRow | None, task_check: TaskCheckRow | None, refuted: bool,
              ambiguous: bool, audited: bool) -> str:
    """Where an officially passing trial stands, first match wins."""
    if trial_check is not None and not trial_check.reproduced:
        return "excluded" if trial_check.excluded else "not_reproducible"
    if task_check is not None and not task_check.well_formed:
        return "excluded"
    if refuted:
        return "refuted"
    if ambiguous:
        return "ambiguous"
    return "clean" if audited else "unaudited"


def build_summary(store: SessionStore) -> SessionSummary:
    meta = store.all_meta()
    config = SessionConfig.from_dict(meta["config"]) if meta.get("config") else None
    corpus = read_corpus(meta, store.path).tasks
    checks = store.task_checks()
    trial_checks = store.trial_checks()
    states = store.trial_states()
    task_states = store.task_states()
    witnesses = store.witnesses()
    wruns = store.witness_runs()
    refutations = store.refutations()
    # Only the runs a refutation shows: every run of a big session would not fit in memory.
    runs = store.runs_by_key({key for ref in refutations for key in (ref.model_run, ref.reference_run) if key})
    rounds = store.rounds()

    witness_by_id = {w.id: w for w in witnesses}
    canonical = {w.id: w.first_copy for w in witnesses}  # one copy per witness, as stored
    fails_by_trial: dict[str, list[str]] = {}
    # Per witness listed (its first copy): the trials any copy fails on, and those it refutes.
    copies: dict[str, list[str]] = {}
    for witness in witnesses:
        copies.setdefault(canonical[witness.id], []).append(witness.id)
    fails_on: dict[str, set[str]] = {}
    for wr in wruns:
        if is_failing(wr.status):
            fails_by_trial.setdefault(wr.trial_id, []).append(wr.witness_id)
            if wr.witness_id in canonical:
                fails_on.setdefault(canonical[wr.witness_id], set()).add(wr.trial_id)
    refutes_by_trial: dict[str, list[RefutationRow]] = {}
    refutes: dict[str, set[str]] = {}
    for ref in refutations:
        refutes_by_trial.setdefault(ref.trial_id, []).append(ref)
        if ref.witness_id in canonical:
            refutes.setdefault(canonical[ref.witness_id], set()).add(ref.trial_id)

    tasks_out: dict[str, TaskSummary] = {}
    totals = _counts()
    models_total: dict[str, Counts] = {}
    for task_id in sorted(corpus):
        trials = corpus[task_id]
        check = checks.get(task_id)
        models: dict[str, Counts] = {}
        trials_out: dict[str, TrialSummary] = {}
        for t in sorted(trials, key=lambda x: x.id):
            if not t.official_pass:
                continue
            tc = trial_checks.get(t.id)
            st = states.get(t.id)
            audited = st is not None and st.audited
            refs = refutes_by_trial.get(t.id, [])
            ambiguous_fails = [w for w in fails_by_trial.get(t.id, []) if w in witness_by_id
                               and witness_by_id[w].classification == WitnessClassification.AMBIGUOUS]
            category = _category(tc, check, bool(refs), bool(ambiguous_fails), audited)
            trials_out[t.id] = TrialSummary(
                model=t.model, agent=t.agent, state=category,
                audited=audited, loop_state=None if st is None else str(st.state),
                reason=tc.reason if tc is not None else "",
                refutations=[Refutation(
                    ref.witness_id, ref.requirement,
                    model=_run_view(runs.get(ref.model_run or ""), witness_by_id.get(ref.witness_id),
                                    str(ref.model_status)),
                    reference=_run_view(runs.get(ref.reference_run or ""),
                                        witness_by_id.get(ref.witness_id), str(ref.reference_status)))
                    for ref in refs],
                ambiguous_witnesses=sorted(ambiguous_fails))
            for bucket in (models.setdefault(t.model or "?", _counts()),
                           models_total.setdefault(t.model or "?", _counts()), totals):
                bucket["passing"] += 1
                bucket[category] += 1
        task_witnesses = []
        for w in (x for x in witnesses if x.task_id == task_id):
            if canonical[w.id] != w.id:
                continue  # one copy per witness: listed under its first copy
            task_witnesses.append(WitnessSummary(
                id=w.id, origin="task_analysis" if w.source_trial is None else "audit",
                source_trial=w.source_trial, requirement=w.requirement,
                explicit=w.explicit, quote=w.quote, path=w.path,
                source=w.source, test_ids=list(w.test_ids), round=w.round,
                classification=str(w.classification), rho=w.rho, note=w.note,
                fails_on=sorted(fails_on.get(w.id, ())),
                refutes=sorted(refutes.get(w.id, ())),
                duplicates=[c for c in copies[w.id] if c != w.id]))
        task_state = task_states.get(task_id)
        tasks_out[task_id] = TaskSummary(
            state=str(task_state.state) if task_state is not None else str(TaskLoopState.PENDING),
            well_formed=None if check is None else check.well_formed,
            problems=[] if check is None else list(check.problems),
            vacuous=[] if check is None else list(check.vacuous),
            flaky=[] if check is None else list(check.flaky),
            rounds=[RoundSummary(r.round, r.trial_id, r.state, list(r.witnesses), list(r.refuted))
                    for r in rounds if r.task_id == task_id],
            models=models, trials=trials_out, witnesses=task_witnesses)
    ledger = store.ledger_totals()
    c = config
    return SessionSummary(
        session_id=meta.get("session_id"), state=meta.get("state"), benchmark=c.benchmark if c else None,
        mode=c.mode if c else None, seed=c.seed if c else None, sampler=c.sampler if c else None,
        rounds=c.rounds if c else None, config=config,
        usage=Usage(usd=round(ledger.usd, 6), tokens=ledger.tokens, llm_calls=ledger.calls,
                    estimated=ledger.estimated, test_runs=store.runs_counted(),
                    seconds=round(float(meta.get("elapsed_seconds", 0.0) or 0.0), 1),
                    waiting_seconds=round(float(meta.get("waiting_seconds", 0.0) or 0.0), 1),
                    unpriced=list(meta.get(UNPRICED) or []), same_test_runs=store.count_copied_runs()),
        totals=totals, models=models_total, tasks=tasks_out, awaiting_operator=awaiting_operator(store))


@dataclass(frozen=True)
class TaskOutcome:
    """Of one task, what must not change between two runs with the same seed."""

    trials: dict[str, str]  # trial id -> its state (one of CATEGORIES)
    witnesses: list[str]  # sorted
    rounds: list[tuple[int, str]]  # (round, trial audited)


def outcome_view(summary: SessionSummary) -> dict[str, TaskOutcome]:
    """The part of a summary that must not change between two runs with the same seed."""
    return {task_id: TaskOutcome({tid: t.state for tid, t in task.trials.items()},
                                 sorted(w.id for w in task.witnesses),
                                 [(r.round, r.trial_id) for r in task.rounds])
            for task_id, task in summary.tasks.items()}
