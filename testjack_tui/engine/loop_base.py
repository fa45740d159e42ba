"""A task's audit loop, its ground floor: the state one task's loop keeps (corpus, selection,
witnesses, runs, refutations), its worlds, the deterministic evidence per trial and the context
an agent is handed. `engine/loop_witnesses.py` builds on it, `engine/loop.py` (`TaskLoop`) on that."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.model import Task, Trial

from . import harness_effect
from .config import Mode
from .events import Log, TrialState
from .env import EngineEnv
from .hooks import WitnessClass, WitnessRecord
from .oracle import CandidateBook
from .records_agent import ChecklistRow, JudgedCandidate, SuspiciousFeature, ValidatedTest
from .records_standing import TrialLoopState
from .run_reuse import lent_ghost
from .runner import t0_key
from .records_runs import JsonObject, TestOutcomes
from .roles import AuditContext, BudgetExceeded, Candidate, ReviewVerdict, WorldTools
from .tampering import with_canary_evidence
from .sampling import Sampler
from .task_checks import TaskCheck


ANALYSIS = "analysis"  # scope/trial key of the task-analysis role's outputs


@dataclass
class Witness:
    record: WitnessRecord
    candidate: Candidate
    reference_status: str
    reference_run: str | None  # run key of its pass on R[G]


def cases_of(outcomes: TestOutcomes, candidate: Candidate) -> TestOutcomes:
    """A candidate's case outcomes in one run, without the file-level aggregate when cases exist."""
    picked = {n: o for n, o in outcomes.items()
              if n in candidate.test_ids or n == candidate.path or n.startswith(candidate.path + "::")}
    if any(n != candidate.path for n in picked):
        picked.pop(candidate.path, None)
    return picked


def kept_cases(candidate: Candidate, verdict: ReviewVerdict) -> Candidate:
    """KEEP_SOME: the accepted cases alone become the witness."""
    if verdict.overall == "KEEP_SOME" and verdict.keep:
        return dataclasses.replace(candidate, test_ids=tuple(verdict.keep))
    return candidate


class LoopBase:
    """One task's audit. `corpus`: every reproducible passing trial of the task (witnesses are
    replayed on all of them, so rho is the same whatever was selected); `selected`: the trials
    the user chose to audit and label (all of them unless `--trial` narrowed it)."""

    def __init__(self, env: EngineEnv, task: Task, check: TaskCheck, selected: set[str] | None = None):
        self.env = env
        self.task = task
        self.check = check
        self.corpus: list[Trial] = sorted(check.reproducible, key=lambda t: t.id)
        self.selected = {t.id for t in self.corpus} if selected is None else \
            {t.id for t in self.corpus if t.id in selected}
        self.by_id = {t.id: t for t in self.corpus}
        self.book = CandidateBook(task.id)
        self.witnesses: list[Witness] = []
        self.runs_by_trial: dict[str, dict[str, str]] = {t.id: {} for t in self.corpus}
        self.run_keys: dict[tuple[str, str], str] = {}  # (trial, witness) -> run key
        self.active: list[str] = [t.id for t in self.corpus if t.id in self.selected]
        self.audited: list[str] = []
        self.refuted: dict[str, list[str]] = {}  # trial -> refuting witness ids
        self.classes: dict[str, WitnessClass] = {}
        self.round = 0
        self.evidence: dict[str, JsonObject] = {}  # trial id -> its evidence (the store's evidence table)
        self.checklists: dict[str, list[ChecklistRow]] = {}  # scope (trial id, ANALYSIS) -> its checklist
        self.features: list[SuspiciousFeature] = []  # task analysis's suspicious-patch features
        self.judged: list[JudgedCandidate] = []  # candidates reviewed and not counted (shown to later audits)
        self.held: list[Candidate] = []  # task analysis's validated tests that passed on every trial
        self.withdrawn: set[str] = set()  # features disproved by a held test (analysis_fates.withdrawn_features)
        self.sampler: Sampler | None = None  # made when the loop starts (lightweight mode)
        self._replay_keys: dict[tuple[str, str], str] = {}  # (trial, test id) -> run key
        self.waiting: list[Witness] = []  # per-trial: witnesses not yet replayed on every trial (replay_now)

    # -- helpers ------------------------------------------------------------------------------
    @property
    def lightweight(self) -> bool:
        return self.env.cfg.mode == Mode.LIGHTWEIGHT

    def _emit(self, event: object) -> None:
        self.env.emit(event)

    def _state(self, trial_id: str, state: TrialLoopState, by: str = "", audited: bool | None = None) -> None:
        self.env.store.set_trial_state(trial_id, self.task.id, state, by, audited)
        self._emit(TrialState(self.env.session_id, task_id=self.task.id, trial_id=trial_id, state=state, by=by))

    def _worlds_for(self, trial: Trial | None, role: str) -> dict[str, WorldRef]:
        if role == "audit" and trial is not None:
            return {"null": self.check.worlds["null"], "reference": self.check.worlds["reference"],
                    "model": self.check.trial_worlds[trial.id]}
        # Task analysis is solution-blind and the reviewer judges by P: neither sees G or s.
        return {"null": self.check.worlds["null"]}

    async def _evidence_for(self, trial: Trial) -> JsonObject:
        if trial.id in self.evidence:
            return self.evidence[trial.id]
        stored = self.env.store.get_evidence(trial.id)
        if stored is not None:  # computed before an interruption: the detectors are deterministic
            stored = with_canary_evidence(self.env.store, trial.id, stored)
            self.evidence[trial.id] = stored
            return stored
        merged: JsonObject = {}
        worlds = self._worlds_for(trial, "audit")
        lent = self._lent_ghost(trial, worlds.get("model"))
        for provider in self.env.hooks.evidence:
            try:
                merged.update(await provider(self.env.sandbox, self.task, trial, worlds,
                                             **({"ghost": lent} if lent is not None else {})) or {})
            except BudgetExceeded:
                raise  # pause now; the evidence is computed on resume
            except Exception as exc:  # noqa: BLE001 - evidence is optional; the audit goes on
                self._emit(Log(self.env.session_id, level="warning",
                               message=f"evidence for {trial.id} failed: {exc}"))
        if self.env.cfg.mutants and (self.task.language or "python") == "python" and worlds.get("model"):
            merged["mutation"] = await self._mutation_evidence(trial, worlds["model"], merged.get("ghost"))
        merged = harness_effect.attach(merged, self.env.store.proofs(trial.id).get(trial.id, []))
        self.env.store.put_evidence(self.task.id, trial.id, merged)
        merged = with_canary_evidence(self.env.store, trial.id, merged)
        self.evidence[trial.id] = merged
        return merged

    def _lent_ghost(self, trial: Trial, world: WorldRef | None) -> JsonObject | None:
        """The lender's ghost-line measurement of `trial` on this very model world (`--reuse-runs`:
        engine/run_reuse.lent_ghost), counted against the budget as the coverage run it stands
        for (as a lent run is), so usage and limits are a fresh session's; None: measure it here."""
        lender = self.env.runner.lender
        if lender is None or world is None:
            return None
        ghost = lent_ghost(lender, trial.id, world.name, world.image, t0_key(self.task, world))
        if ghost is not None:
            if self.env.sandbox.budget is not None:
                self.env.sandbox.budget.reserve_test_runs(1)
            self._emit(Log(self.env.session_id, level="info",
                           message=f"{trial.id}: ghost lines taken from session {lender.path.parent.name} "
                                   "(the same world snapshot and T0)"))
        return ghost

    async def _mutation_evidence(self, trial: Trial, world: WorldRef, ghost: JsonObject | None) -> JsonObject:
        from .detectors.mutation import MutationReport, collect_mutation_evidence

        try:
            report = await collect_mutation_evidence(self.env.runner, self.env.sandbox.unmetered, self.task, trial,
                                                     world, self.env.cfg.mutants, ghost)
        except BudgetExceeded:
            raise
        except Exception as exc:  # noqa: BLE001 - evidence is optional; the audit goes on
            report = MutationReport(error=f"{type(exc).__name__}: {exc}"[:300])
        self._emit(Log(self.env.session_id, level="info",
                       message=f"{trial.id}: mutation: {report.to_text().splitlines()[0]}"))
        return report.to_dict()

    def _static_evidence(self, trials: list[Trial]) -> dict[str, JsonObject]:
        """Static detector evidence of every trial, for the sampler: pure functions of the diff,
        T0 and P (no containers). The session computed it for its corpus; a trial it lacks is
        computed here. The ghost-branch part needs a world and comes with _evidence_for when a
        trial is audited."""
        try:
            from .detectors import collect_static_evidence
        except ModuleNotFoundError:
            return {}
        out: dict[str, JsonObject] = {}
        for trial in trials:
            if trial.id in self.env.static_evidence:
                out[trial.id] = self.env.static_evidence[trial.id]
                continue
            try:
                out[trial.id] = collect_static_evidence(self.task, trial).to_dict()
            except Exception as exc:  # noqa: BLE001 - evidence only orders the sampling
                self._emit(Log(self.env.session_id, level="warning",
                               message=f"static evidence for {trial.id} failed: {exc}"))
        return out

    def _context(self, trial: Trial | None, role: str, evidence: JsonObject | None = None) -> tuple[AuditContext, WorldTools]:
        worlds = self._worlds_for(trial, role)
        factory = self.env.tools_factory
        if factory is None:
            raise RuntimeError("the session has no tools factory (testjack_tui.compose.session_deps() gives one)")
        tools = factory(self.env, self.task, trial, worlds, evidence or None)
        ctx = AuditContext(session_id=self.env.session_id, task=self.task, trial=trial, tools=tools,
                           emit=self.env.emit, known_witnesses=[w.candidate for w in self.witnesses],
                           evidence=evidence or {}, ledger=self.env.budget, llm_cache=self.env.store,
                           features=[f for f in self.features if f.id not in self.withdrawn],
                           judged=list(self.judged),
                           validated=self._validated_for(trial))
        return ctx, tools

    def _validated_for(self, trial: Trial | None) -> list[ValidatedTest]:
        """Every validated test of the task, for an auditor: the witnesses, then the task
        analysis's tests that held on every trial; each with what it checks and its outcome on
        this trial where one was measured."""
        if trial is None:
            return []
        runs = self.runs_by_trial.get(trial.id, {})
        out = [ValidatedTest(w.candidate.path, w.record.requirement, "witness", runs.get(w.record.id, ""),
                             w.candidate.source) for w in self.witnesses]
        return out + [ValidatedTest(c.path, c.requirement, "held on every trial", "passed", c.source)
                      for c in self.held]

    @staticmethod
    async def _close(tools: WorldTools) -> None:
        closer = getattr(tools, "aclose", None)
        if closer is not None:
            await closer()
