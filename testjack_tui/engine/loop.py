"""The audit of one task: task analysis, then rounds (lightweight, Algorithm 1) or every trial
(per-trial mode), with oracle validation, reviewer and approval, witness replay and refutation.

Resumable by construction: the loop is deterministic given its seed and the results of its
steps, and every step's result is stored. A resumed session runs the loop again from the top;
stored steps answer instantly (no test re-run, no LLM call), and work continues where it stopped.
"""
from __future__ import annotations

import asyncio
import dataclasses

from testjack_tui.model import Task, Trial

from . import harness_effect, open_questions, reference_claims
from .aio import gather_all
from .approval import Judgement, judge, standing_requirement
from .events import Log, RoundFinished, RoundStarted, TaskState
from .env import EngineEnv
from .no_reference import ensure_reference
from .probes import materialize_probe
from .analysis_fates import fate_rows, withdrawn_features
from .failure_patterns import explain_refutations
from .oracle import Validation, ask_repair, null_feedback, validate
from .records_agent import (AgentFinding, JudgedCandidate, PromptSilent, ReferenceContradiction, SuspiciousFeature,
                            rows_of, to_json_rows)
from .records import JsonObject
from .records_cands import candidate_from_dict, candidate_to_dict
from .roles import AuditContext, AuditOutcome, ChecklistItem, TaskAnalyst, questionable_cases
from .records_standing import TaskLoopState, TrialLoopState
from .runner import combined_status, is_failing
from .standing import record_standings
from .verdicts import analysis_checklist
from .records_runs import TaskCheckRow
from .sampling import SampledWitness, SamplerContext, SamplerState
from .task_checks import check_task
from .loop_base import ANALYSIS, Witness, cases_of, kept_cases
from .loop_witnesses import WitnessLoop


def outcome_to_dict(outcome: AuditOutcome) -> JsonObject:
    return {"candidates": [candidate_to_dict(c) for c in outcome.candidates],
            "checklist": [i.to_json() for i in outcome.checklist],
            "notes": outcome.notes, "findings": to_json_rows(outcome.findings),
            "nothing_found": outcome.nothing_found, "prompt_silent": to_json_rows(outcome.prompt_silent),
            "reference_contradicts": to_json_rows(outcome.reference_contradicts)}


def outcome_from_dict(data: JsonObject) -> AuditOutcome:
    return AuditOutcome(candidates=[candidate_from_dict(c) for c in data.get("candidates", [])],
                        checklist=rows_of(ChecklistItem.from_json, data.get("checklist"), "checklist"),
                        notes=data.get("notes", ""), findings=rows_of(AgentFinding.from_json, data.get("findings"), "findings"),
                        nothing_found=data.get("nothing_found"),
                        prompt_silent=rows_of(PromptSilent.from_json, data.get("prompt_silent"), "prompt_silent"),
                        reference_contradicts=rows_of(ReferenceContradiction.from_json,
                                                      data.get("reference_contradicts"), "reference_contradicts"))


class TaskLoop(WitnessLoop):
    """One task's audit: the task analysis, then the rounds (or every trial, per-trial mode), on
    the loop's state and evidence (engine/loop_base.py) and its witnesses (engine/loop_witnesses.py)."""

    # -- the task -----------------------------------------------------------------------------
    async def run(self) -> None:
        """Lightweight: rounds of sample, audit, share. Per-trial (the paper's per-trial audit):
        every selected trial is audited on its own and refuted only by its own audit's
        witnesses; witnesses still run on every trial, for rho only."""
        env = self.env
        for trial in self.corpus:
            if trial.id in self.selected:
                self._state(trial.id, TrialLoopState.ACTIVE)
        if not self.selected:
            return
        # Proof of harness tampering for every trial that changed harness files: T0 re-run
        # with them restored (one run per such trial, stored, never repeated on resume).
        await gather_all(harness_effect.measure(env, self.task, t, self.check.trial_worlds[t.id],
                                                self.check.flaky)
                         for t in self.corpus if t.id in self.selected)
        if self.lightweight:  # per-trial mode audits every trial: nothing to sample
            chosen = [t for t in self.corpus if t.id in self.selected]
            ctx = SamplerContext(trials=chosen, evidence=self.evidence,
                                 static_evidence=self._static_evidence(chosen),
                                 features=self.features, model_record=dict(self.env.model_record))
            self.sampler = env.samplers.make(env.cfg.sampler, self.task, env.cfg.seed, ctx)
        if self.lightweight and env.cfg.task_analysis and env.roles.task_analysis is not None:
            await self.task_analysis()
        while True:
            if self.lightweight:
                pool = [t for t in self.active]
                if not pool or self.round >= env.cfg.rounds:
                    break
            else:
                pool = [t.id for t in self.corpus if t.id in self.selected and t.id not in self.audited]
                if not pool:
                    break
            await self.audit_round(pool)
        await self.replay_waiting()  # per-trial: every trial measures every witness (rho)

    # -- task analysis (T1) -------------------------------------------------------------------
    async def task_analysis(self) -> None:
        env, task = self.env, self.task
        analyst = env.roles.task_analysis
        if analyst is None:  # a session without the role has no task analysis
            return
        stored = env.store.get_audit(task.id, ANALYSIS)
        ctx, tools = self._context(None, "task_analysis")
        try:
            if stored is not None:
                candidates = [candidate_from_dict(c) for c in stored.get("candidates", [])]
            else:
                env.budget.check_round()
                result = await analyst.analyse(ctx)
                candidates = list(result)
                stored = {"candidates": [candidate_to_dict(c) for c in candidates],
                          "traceability": to_json_rows(getattr(result, "traceability", ())),
                          "suspicious_features": to_json_rows(getattr(result, "suspicious_features", ())),
                          "notes": getattr(result, "notes", "")}
                env.store.put_audit(task.id, ANALYSIS, stored)
            # the sampler reads this list
            self.features[:] = rows_of(SuspiciousFeature.from_json, stored.get("suspicious_features"),
                                       "suspicious_features")
            self.checklists[ANALYSIS] = analysis_checklist(stored)
            candidates = [self.book.qualify(dataclasses.replace(await materialize_probe(env, task, c),
                                                                author="task_analysis"), ANALYSIS)
                          for c in candidates]
            validations: list[Validation] = []
            for candidate in candidates:
                validations.append(await validate(env, task, None, self.check.worlds, candidate,
                                                  analyst, ctx, self.book, ANALYSIS))
            validations, vacuous = await self._vacuous_analysis(validations, analyst, ctx)
        finally:
            await self._close(tools)
        passing = [v for v in validations if v.outcome == "passes_reference"]
        # Replay T1 on every passing trial: one batched run per trial.
        items = [(v.candidate.id, v.candidate) for v in passing]
        statuses = await self._replay(items, [t.id for t in self.corpus]) if passing else {}
        fates = fate_rows(validations, vacuous, statuses, [t.id for t in self.corpus])
        stored["fates"] = [row.to_json() for row in fates]
        stored["withdrawn_features"] = withdrawn_features(self.features, fates)
        env.store.put_audit(task.id, ANALYSIS, stored)
        self.held[:] = [v.candidate for v, row in zip(validations, fates) if row.held]
        self.withdrawn = {str(f["id"]) for f in stored["withdrawn_features"]}
        for f in stored["withdrawn_features"]:
            self._emit(Log(env.session_id, level="info",
                           message=f"{task.id}: suspicious feature {f['id']} withdrawn from auditors' requests: "
                                   f"{f['disproved_by']} held on every trial"))
        if not passing:
            return
        to_judge = []
        for v in passing:
            failing = [t for t in self.corpus if is_failing(statuses.get(t.id, {}).get(v.candidate.id, ""))]
            if failing:  # otherwise kept in T as evidence: every trial implements it
                to_judge.append((v, f"fails on {len(failing)} of {len(self.corpus)} trials"))
        if not to_judge:
            return
        rctx, rtools = self._context(None, "reviewer")
        for v, _ in to_judge:
            rctx.case_runs[v.candidate.id] = self._case_runs(v, statuses)
        try:
            futures = []
            for v, model_status in to_judge:
                futures.append(asyncio.ensure_future(
                    judge(env, rctx, v.candidate, task.id, None, v.reference_status, model_status)))
                await asyncio.sleep(0)
            results = await gather_all(futures)
        finally:
            await self._close(rtools)
        for (v, _), j in zip(to_judge, results):
            await self._open_questions(v, j, None, {t: by[v.candidate.id] for t, by in statuses.items()
                                                    if v.candidate.id in by})
        new = [self._confirm(v, j, None, 0) for (v, _), j in zip(to_judge, results) if j.decision.counts]
        for w in new:
            runs = rctx.case_runs.get(w.record.id, {})
            for trial_id, by_witness in statuses.items():
                if w.record.id in by_witness:
                    status = by_witness[w.record.id]
                    if w.candidate.test_ids and trial_id in runs:  # KEEP_SOME: the kept cases decide
                        status = combined_status(cases_of(runs[trial_id], w.candidate))
                    self._note_run(trial_id, w.record.id, status,
                                   self._replay_keys.get((trial_id, w.record.id)))
        if new:
            self._reclassify()

    async def _vacuous_analysis(self, validations: list[Validation], analyst: TaskAnalyst,
                                ctx: AuditContext) -> tuple[list[Validation], set[str]]:
        """Task-analysis candidates that pass on the null world check nothing the task adds: one
        batched run there, then each such candidate goes back to the analyst once, named, with
        that run's output and T0's vacuous tests. A version it rewrites is validated again; one it
        keeps (give_up) stays, as a regression check. Returns the validations and the ids of the
        candidates left passing on the null world."""
        env, task = self.env, self.task
        passing = [v for v in validations if v.outcome == "passes_reference"]
        if not passing:
            return validations, set()
        ids = [i for v in passing for i in v.candidate.run_ids()]
        run = await env.runner.run(self.check.worlds["null"], ids, {v.candidate.path: v.candidate.source
                                                                     for v in passing},
                                   isolate=False, task_id=task.id, trial_id=None,
                                   candidate_ids=[v.candidate.id for v in passing])
        out, vacuous = [], set()
        for v in validations:
            if v not in passing or run.status_of(v.candidate.path, v.candidate.test_ids) != "passed":
                out.append(v)
                continue
            self._emit(Log(env.session_id, level="info",
                           message=f"{v.candidate.id} passes on the null world: sent back to the task analyst"))
            assert v.reference_run is not None  # it passed there
            new = await ask_repair(env, task, analyst, ctx, v.candidate, v.reference_run, self.book, ANALYSIS,
                                sanitize=True, feedback=null_feedback(run, v.candidate, self.check.vacuous))
            if new is None:
                vacuous.add(v.candidate.id)
                out.append(v)
                continue
            again = await validate(env, task, None, self.check.worlds, new, analyst, ctx, self.book, ANALYSIS)
            out.append(dataclasses.replace(again, versions=v.versions + again.versions))
        return out, vacuous

    # -- one round ----------------------------------------------------------------------------
    async def audit_round(self, pool: list[str]) -> None:
        env, task = self.env, self.task
        round_no = self.round + 1
        stored_round = {r.round: r for r in env.store.rounds(task.id)}.get(round_no)
        if stored_round is None or stored_round.state != "done":
            await env.control.gate(f"round {round_no} of {task.id}", task.id)
        state = SamplerState(round=round_no, refuted=sorted(self.refuted_ids()),
                             clean=[t for t in self.audited if t not in self.refuted_ids()],
                             audited=list(self.audited),
                             witnesses=[SampledWitness(w.record.id, w.record.requirement, w.record.source_trial)
                                        for w in self.witnesses],
                             runs_by_trial={k: dict(v) for k, v in self.runs_by_trial.items()},
                             evidence=self.evidence)
        chosen = [t for t in (env.cfg.audit_first or []) if t in pool]
        if self.lightweight and chosen:
            trial = self.by_id[chosen[0]]  # the operator's pick comes before the sampler's
        elif self.lightweight:
            assert self.sampler is not None  # made at start in lightweight mode
            trial = self.sampler.pick([self.by_id[t] for t in pool], state)
        else:
            trial = self.by_id[pool[0]]
        if stored_round is not None and stored_round.trial_id != trial.id:
            # A sampler that is not deterministic: keep what the session recorded.
            self._emit(Log(env.session_id, level="warning",
                           message=f"{task.id} round {round_no}: sampler drew {trial.id}, "
                                   f"the stored session had {stored_round.trial_id}; using the stored one"))
            trial = self.by_id.get(stored_round.trial_id, trial)
        self.round = round_no
        if stored_round is None:
            env.store.put_round(task.id, round_no, trial.id, "started", [], [])
        self._emit(RoundStarted(env.session_id, task_id=task.id, round=round_no, trial_id=trial.id,
                                active=len(self.active)))
        self._state(trial.id, TrialLoopState.SAMPLED)
        await self.replay_waiting(trial.id)  # per-trial: what its audit's end reads (replay_now)

        evidence = await self._evidence_for(trial)
        ctx, tools = self._context(trial, "audit", evidence)
        try:
            stored = env.store.get_audit(task.id, trial.id)
            if stored is not None:
                outcome = outcome_from_dict(stored)
            else:
                env.budget.check_round()
                outcome = await env.roles.audit.audit(ctx)
                env.store.put_audit(task.id, trial.id, outcome_to_dict(outcome))
            self.checklists[trial.id] = list(outcome.checklist)
            candidates = [self.book.qualify(await materialize_probe(env, task, c), trial.id)
                          for c in outcome.candidates]
            validations = []
            for candidate in candidates:
                validations.append(await validate(env, task, trial, self._worlds_for(trial, "audit"),
                                                  candidate, env.roles.audit, ctx, self.book, trial.id))
        finally:
            await self._close(tools)

        discriminating = [v for v in validations if v.outcome == "discriminates"]
        results = []
        if discriminating:
            rctx, rtools = self._context(trial, "reviewer")
            for v in discriminating:
                rctx.case_runs[v.candidate.id] = {
                    "reference": cases_of(v.reference_run.outcomes if v.reference_run else {}, v.candidate),
                    trial.id: cases_of(v.model_run.outcomes if v.model_run else {}, v.candidate)}
            try:
                # Verdicts come one by one; approvals are awaited together, so an operator's
                # pending decision does not hold up the reviewing of the other candidates.
                futures = []
                for v in discriminating:
                    futures.append(asyncio.ensure_future(
                        judge(env, rctx, v.candidate, task.id, trial.id, v.reference_status, v.model_status)))
                    await asyncio.sleep(0)
                results = await gather_all(futures)
            finally:
                await self._close(rtools)
        self._prompt_silent(outcome, trial.id, validations)
        self._reference_contradicts(outcome, trial.id)
        new = []
        for v, j in zip(discriminating, results):
            await self._open_questions(v, j, trial.id, {trial.id: v.model_status})
            if not j.decision.counts:
                self.judged.append(JudgedCandidate(v.candidate.requirement, j.decision.label, j.decision.by,
                                                   j.verdict.reason))
                continue
            kept = kept_cases(v.candidate, j.verdict)
            if kept is not v.candidate:
                outcomes = cases_of(v.model_run.outcomes if v.model_run else {}, kept)
                status = combined_status(outcomes)
                if not is_failing(status):
                    self._emit(Log(env.session_id, level="info",
                                   message=f"{v.candidate.id}: the cases the reviewer kept pass on {trial.id}; "
                                           "not a witness for it"))
                    continue
                v = dataclasses.replace(v, candidate=kept, model_status=status)
            new.append(self._confirm(v, j, trial.id, round_no))
        shared = await self._share_operator_tests(trial, round_no, validations)

        self.audited.append(trial.id)
        env.store.set_trial_state(trial.id, task.id, TrialLoopState.SAMPLED, "", audited=True)
        before = set(self.refuted_ids())
        if shared:
            self._reclassify()
        if new:
            for w in new:
                v = next(x for x in discriminating if x.candidate.id == w.record.id)
                self._note_run(trial.id, w.record.id, v.model_status, v.model_run.key if v.model_run else None)
            self._reclassify()
            targets = self._replay_targets(trial.id)
            await self._replay_witnesses([(w.record.id, w.candidate) for w in self.replay_now(new)], targets)
            self._reclassify()
        if trial.id in self.active:
            self.active.remove(trial.id)
        void = self.void_reason(trial.id) if trial.id not in self.refuted_ids() else ""
        if void:
            # No candidate could run on the reference: nothing was measured, so nothing is certified.
            self._state(trial.id, TrialLoopState.AUDIT_FAILED, void, audited=False)
        elif trial.id not in self.refuted_ids():
            ambiguous = any(is_failing(s) for s in self.runs_by_trial[trial.id].values())
            self._state(trial.id, TrialLoopState.AMBIGUOUS if ambiguous else TrialLoopState.CLEAN, "audited",
                        audited=True)
        refuted_now = sorted(set(self.refuted_ids()) - before)
        for tid in refuted_now:
            await self._tie_by_execution(tid)
        new = shared + new
        env.store.put_round(task.id, round_no, trial.id, "done", [w.record.id for w in new], refuted_now)
        self._emit(RoundFinished(env.session_id, task_id=task.id, round=round_no, trial_id=trial.id,
                                 witnesses=tuple(w.record.id for w in new), refuted=tuple(refuted_now)))

    async def _share_operator_tests(self, trial: Trial, round_no: int,
                                    validations: list[Validation]) -> list[Witness]:
        """Operator tests are shared like witnesses: one that passes on R[G] but not fail on the
        sampled trial still runs on every other passing trial of the task (lightweight loop);
        where it fails, it goes to the reviewer and approval like any candidate."""
        if not self.lightweight:
            return []
        passing = [v for v in validations if v.outcome == "passes_both" and v.candidate.author == "operator"]
        if not passing:
            return []
        statuses = await self._replay([(v.candidate.id, v.candidate) for v in passing],
                                      [t.id for t in self.corpus if t.id != trial.id])
        to_judge = []
        for v in passing:
            failing = sorted(t for t, by in statuses.items() if is_failing(by.get(v.candidate.id, "")))
            if failing:
                to_judge.append((v, f"fails on {', '.join(failing[:5])}", failing))
        confirmed: list[Witness] = []
        if to_judge:
            rctx, rtools = self._context(trial, "reviewer")
            try:
                results = await gather_all(judge(self.env, rctx, v.candidate, self.task.id, trial.id,
                                                  v.reference_status, status) for v, status, _ in to_judge)
            finally:
                await self._close(rtools)
            for (v, _, _), j in zip(to_judge, results):
                await self._open_questions(v, j, trial.id, {t: by[v.candidate.id] for t, by in statuses.items()
                                                            if v.candidate.id in by} | {trial.id: v.model_status})
            confirmed = [self._confirm(v, j, trial.id, round_no)
                         for (v, _, _), j in zip(to_judge, results) if j.decision.counts]
        for w in confirmed:
            v = next(x for x in passing if x.candidate.id == w.record.id)
            self._note_run(trial.id, w.record.id, v.model_status, v.model_run.key if v.model_run else None)
            for trial_id, by_witness in statuses.items():
                if w.record.id in by_witness:
                    self._note_run(trial_id, w.record.id, by_witness[w.record.id],
                                   self._replay_keys.get((trial_id, w.record.id)))
        return confirmed

    # -- open questions about P -------------------------------------------------------------
    async def _open_questions(self, v: Validation, j: Judgement, source_trial: str | None,
                              known: dict[str, str]) -> None:
        """A discriminating test judged questionable (as a whole, or the cases of a KEEP_SOME the
        reviewer called QUESTIONABLE) is an open question about P: replayed over every passing
        trial of the task, as for rho, and stored; it refutes nothing."""
        verdict, decision = j.verdict, j.decision
        if open_questions.is_open_question(verdict, decision):
            candidate = v.candidate
        else:
            cases = questionable_cases(verdict.cases)
            if not cases or verdict.overall != "KEEP_SOME" or decision.by == "operator":
                return
            candidate = dataclasses.replace(v.candidate, id=f"{v.candidate.id}~q", test_ids=cases)
        key = open_questions.PREFIX + candidate.id
        if self.env.store.get_audit(self.task.id, key) is not None:
            return  # stored before an interruption
        todo = [t.id for t in self.corpus if t.id not in known or candidate is not v.candidate]
        statuses = dict(known) if candidate is v.candidate else {}
        if todo:
            replayed = await self._replay([(candidate.id, candidate)], todo)
            statuses.update({t: by[candidate.id] for t, by in replayed.items() if candidate.id in by})
        requirement, _, _ = standing_requirement(verdict, decision, candidate.requirement)
        said = open_questions.said_by(verdict, decision)
        if candidate is not v.candidate:
            said = [f'reviewer ({verdict.reviewer or "?"}): QUESTIONABLE: "{c.reason}" ({c.test_id})'
                    for c in verdict.cases if c.test_id in candidate.test_ids]
        record = open_questions.question_record(
            self.task.id, candidate, requirement, said, decision.by if decision.by == "operator" else "reviewer",
            v.reference_status, {t: s for t, s in statuses.items() if t in self.by_id}, source_trial)
        self.env.store.put_audit(self.task.id, key, record.to_json())
        self._emit(Log(self.env.session_id, level="info",
                       message=f"{self.task.id}: open question about the prompt: {requirement} "
                               f"({candidate.id} judged questionable; differs on {len(record.fails_on)} "
                               "trial(s), refutes none)"))

    def _prompt_silent(self, outcome: AuditOutcome, trial_id: str, validations: list[Validation]) -> None:
        """The audit agent's "P is silent on X", stored where the questionable tests' go; a test
        it names that ran is quoted with its outcome on the reference and on this trial."""
        for item in outcome.prompt_silent:
            record = open_questions.silent_record(self.task.id, trial_id, item)
            if not record.requirement:
                continue
            named = (item.witness or "").strip()
            v = next((x for x in validations if named and x.candidate.path == named), None)
            if v is not None:
                record = dataclasses.replace(
                    record, candidate_id=v.candidate.id, path=v.candidate.path, source=v.candidate.source,
                    reference=record.reference or v.reference_status,
                    fails_on=[trial_id] if is_failing(v.model_status or "") else record.fails_on)
            key = record.key()
            if self.env.store.get_audit(self.task.id, key) is None:
                self.env.store.put_audit(self.task.id, key, record.to_json())
                self._emit(Log(self.env.session_id, level="info",
                               message=f"{self.task.id}: the audit of {trial_id} says P is silent on: "
                                       f"{record.requirement}"))

    def _reference_contradicts(self, outcome: AuditOutcome, trial_id: str) -> None:
        """The audit agent's "the reference contradicts P here": a task finding, logged once."""
        for item in outcome.reference_contradicts:
            record = reference_claims.claim_record(self.task.id, "audit agent", item, trial_id=trial_id)
            if reference_claims.record(self.env.store, record):
                self._emit(Log(self.env.session_id, level="warning",
                               message=f"{self.task.id}: the audit of {trial_id} says the reference "
                                       f"contradicts P: \"{item.quote}\""))


async def audit_task(env: EngineEnv, task: Task, trials: list[Trial],
                     population: list[Trial] | None = None) -> TaskLoop | None:
    """Check a task, then audit its reproducible passing `trials`. `population`: every passing
    trial of the task in the benchmark (default: `trials`); witnesses run on all of it so the
    ambiguity rule's rho does not depend on the selection. Returns the finished loop.
    Every decision about the task's candidates is taken inside its audit, so its trials'
    standings are decided when it ends (engine/standing.py); a pause leaves none stored."""
    env.store.drop_standings(task.id)
    loop = await _audit_task(env, task, trials, population)
    try:
        record_standings(env.store, task, list(trials) + list(population or []))
    except Exception as exc:  # noqa: BLE001 - the audit is stored; the report decides on read instead
        env.emit(Log(env.session_id, level="warning", message=f"{task.id}: standings not stored: {exc}"))
    return loop


async def _audit_task(env: EngineEnv, task: Task, trials: list[Trial],
                      population: list[Trial] | None) -> TaskLoop | None:
    set_task_state(env, task.id, TaskLoopState.CHECKING)
    task, problem = await ensure_reference(env, task, env.tools_factory)
    if problem:
        env.store.put_task_check(TaskCheckRow(task.id, False, (problem,)))
        set_task_state(env, task.id, TaskLoopState.EXCLUDED, problem)
        env.emit(Log(env.session_id, level="warning", message=f"{task.id}: excluded: {problem}"))
        return None
    if task.reference.independent:
        env.independent_tasks.add(task.id)
    chosen = {t.id for t in trials}
    everyone = list(trials) + [t for t in (population or []) if t.id not in chosen]
    check = await check_task(env, task, sorted(everyone, key=lambda t: t.id))
    if not check.well_formed:
        set_task_state(env, task.id, TaskLoopState.EXCLUDED, "; ".join(check.problems))
        return None
    set_task_state(env, task.id, TaskLoopState.AUDITING)
    loop = TaskLoop(env, task, check, selected=chosen)
    await loop.run()
    await explain_refutations(loop)  # one cheap call per way the refuted trials fail
    # Every candidate of the task (task analysis, each trial's audit) failed to run on the
    # reference: the task's audit measured nothing, in either mode.
    void = loop.void_reason()
    if void:
        set_task_state(env, task.id, TaskLoopState.AUDIT_FAILED, void)
        env.emit(Log(env.session_id, level="error", message=f"{task.id}: audit failed: {void}"))
    else:
        set_task_state(env, task.id, TaskLoopState.FINISHED)
    return loop


def set_task_state(env: EngineEnv, task_id: str, state: TaskLoopState, reason: str = "", ahead: int = 0) -> None:
    """A task's standing, stored (`sessions`, the summary) and announced (the TUI)."""
    if state == TaskLoopState.QUEUED:
        reason = reason or f"{ahead} task{'s' if ahead != 1 else ''} ahead"
    env.store.set_task_state(task_id, state, reason)
    env.emit(TaskState(env.session_id, task_id=task_id, state=state, ahead=ahead, reason=reason))
