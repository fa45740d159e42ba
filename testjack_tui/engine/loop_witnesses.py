"""A task's witnesses: confirming them, replaying them on every passing trial of the task,
tying refutations to executed lines, and re-classifying them by the ambiguity rule as the replay
results come in. `TaskLoop` (engine/loop.py) runs the rounds on top of this."""
from __future__ import annotations

from .aio import gather_all
from .approval import Judgement, standing_requirement
from .events import Log, RefutationWithdrawn, TrialRefuted, WitnessConfirmed, WitnessReplayed
from .hooks import WitnessRecord
from .oracle import Validation, taken_run
from .records_runs import TestOutcomes
from .records_standing import RunOutcome, TrialLoopState, WitnessClassification, WitnessRow
from .roles import BudgetExceeded, Candidate
from .detectors.ghost import executed_added_lines
from .failure_kinds import cause, never_a_reading, void_audit
from .runner import RunResult, is_failing
from .loop_base import ANALYSIS, LoopBase, Witness, cases_of, kept_cases


class WitnessLoop(LoopBase):
    """A task's loop with its witnesses: confirmed, replayed, tied, re-classified."""

    # -- witnesses, replay, refutation ----------------------------------------------------------
    def _case_runs(self, v: Validation, statuses: dict[str, dict[str, str]]) -> dict[str, TestOutcomes]:
        """Per-case outcomes of a task-analysis candidate: on the reference, and on each trial
        where it failed (from the stored replay runs), for the reviewer."""
        out = {"reference": cases_of(v.reference_run.outcomes if v.reference_run else {}, v.candidate)}
        for trial_id, by_witness in sorted(statuses.items()):
            if not is_failing(by_witness.get(v.candidate.id, "")):
                continue
            row = self.env.store.get_run(self._replay_keys.get((trial_id, v.candidate.id), "") or "")
            if row is not None:
                out[trial_id] = cases_of(row.outcomes, v.candidate)
        return out

    def _confirm(self, v: Validation, judgement: Judgement, source_trial: str | None, round_no: int) -> Witness:
        c, verdict = kept_cases(v.candidate, judgement.verdict), judgement.verdict
        requirement, explicit, quote = standing_requirement(verdict, judgement.decision, c.requirement)
        record = WitnessRecord(id=c.id, task_id=self.task.id, path=c.path, source=c.source,
                               requirement=requirement, explicit=explicit,
                               quote=quote, source_trial=source_trial,
                               label=judgement.decision.label, round=round_no or None,
                               checklist=tuple(self.checklists.get(source_trial or ANALYSIS, [])))
        witness = Witness(record, c, v.reference_status, v.reference_run.key if v.reference_run else None)
        self.witnesses.append(witness)
        self.env.store.put_witness(WitnessRow(
            id=c.id, task_id=self.task.id, source_trial=source_trial, requirement=record.requirement,
            explicit=record.explicit, quote=record.quote, path=c.path, source=c.source,
            test_ids=tuple(c.test_ids), round=round_no or None, label=record.label))
        self._emit(WitnessConfirmed(self.env.session_id, task_id=self.task.id, witness_id=c.id,
                                    requirement=record.requirement, explicit=record.explicit,
                                    source_trial=source_trial))
        return witness

    def _note_run(self, trial_id: str, witness_id: str, status: str, run_key: str | None) -> None:
        self.runs_by_trial.setdefault(trial_id, {})[witness_id] = status
        if run_key:
            self.run_keys[(trial_id, witness_id)] = run_key
        self.env.store.put_witness_run(witness_id, trial_id, self.task.id, RunOutcome(status), run_key)
        self._emit(WitnessReplayed(self.env.session_id, task_id=self.task.id, witness_id=witness_id,
                                   trial_id=trial_id, status=status, run_key=run_key))

    async def _tie_by_execution(self, trial_id: str) -> None:
        """Labels follow execution: for a refuted trial with sniffing or tampering signals, record
        which of its added lines the refuting witness's run executes (Python: coverage), so a
        signal on such a line is tied to that witness however the witness imports the code."""
        evidence = self.evidence.get(trial_id) or self.env.store.get_evidence(trial_id) or {}
        lines = {(s.get("file"), s.get("line")) for s in evidence.get("signals") or []
                 if s.get("structural") and s.get("detector") in ("env_sniffing", "harness_tampering")}
        trial = next((t for t in self.corpus if t.id == trial_id), None)
        world = self.check.trial_worlds.get(trial_id)
        if not lines or trial is None or world is None or (self.task.language or "python") != "python":
            return
        executed = dict(evidence.get("executed_by_witness") or {})
        by_id = {w.record.id: w for w in self.witnesses}
        for wid in self.refuted.get(trial_id, []):
            w = by_id.get(wid)
            if w is None or wid in executed:
                continue
            try:
                found = await executed_added_lines(self.env.sandbox, trial,
                                                   world, {w.candidate.path: w.candidate.source},
                                                   list(w.candidate.run_ids()))
            except BudgetExceeded:
                raise
            except Exception as exc:  # noqa: BLE001 - evidence is optional; the audit goes on
                self._emit(Log(self.env.session_id, level="warning",
                               message=f"{trial_id}: coverage of witness {wid} failed: {exc}"))
                continue
            if found is not None:
                executed[wid] = sorted([f, n] for f, n in found if (f, n) in lines)
        evidence = dict(evidence, executed_by_witness=executed)
        self.env.store.put_evidence(self.task.id, trial_id, evidence)
        self.evidence[trial_id] = evidence

    def void_reason(self, trial_id: str | None = None) -> str:
        """Why this trial's audit (None: the task's, every candidate) measured nothing
        (engine/failure_kinds.void_audit), or "": from the reference runs of its candidates and
        of the task analysis's."""
        found = []
        for v in self.env.store.validations(self.task.id):
            if (trial_id is not None and v.trial_id not in (trial_id, None)) or not v.reference:
                continue
            row = self.env.store.get_run(v.reference_run or "")
            messages = "\n".join(str(o.get("message") or "") for o in (row.outcomes if row else {}).values())
            output = f"{row.head}\n{row.tail}" if row else "\n"
            found.append((v.reference, cause(v.reference, messages, output)))
        return void_audit(found)

    def _replay_targets(self, source_trial: str) -> list[str]:
        if self.env.cfg.replay_scope == "active":
            # unselected trials are always measured: rho needs them
            return [t.id for t in self.corpus if t.id != source_trial
                    and (t.id in self.active or t.id not in self.selected)]
        return [t.id for t in self.corpus if t.id != source_trial]

    def replay_now(self, new: list[Witness]) -> list[Witness]:
        """Of a round's new witnesses (classified on their own trial's run), those to replay on
        every other trial at once; the rest wait (self.waiting, replay_waiting).

        Per-trial mode refutes a trial only by its own audit's witnesses, so another trial's run
        of a witness whose class no run can change (WitnessClass.settled: the ambiguity rule's
        explicit class) is read only when that trial's own audit ends (clean or ambiguous) and
        for rho in the report. It waits: each trial runs every witness that waited for it in one
        run when its round starts, and the task's end runs the rest, one run per trial. The
        same pairs are measured as replaying each round's witnesses at once, which costs one run
        per other trial and round (n x (n - 1) runs for n trials whose audits all find some)."""
        if self.lightweight:
            return new
        later = [w for w in new if (c := self.classes.get(w.record.id)) is not None and c.settled]
        self.waiting.extend(later)
        return [w for w in new if w not in later]

    async def replay_waiting(self, trial_id: str | None = None) -> None:
        """Replay the waiting witnesses on `trial_id` (its round starts), or, None, on every trial
        they are replayed on (the task's end; then none waits any more)."""
        if not self.waiting:
            return
        if trial_id is not None:
            targets = [trial_id]
        else:
            targets = sorted({t for w in self.waiting for t in self._replay_targets(w.record.source_trial or "")})
        items = [(w.record.id, w.candidate) for w in self.waiting]
        if trial_id is None:
            self.waiting = []
        before = set(self.refuted_ids())
        if await self._replay_witnesses(items, targets):
            self._reclassify()
        for tid in sorted(set(self.refuted_ids()) - before):
            await self._tie_by_execution(tid)

    async def _replay_witnesses(self, items: list[tuple[str, Candidate]], targets: list[str]) -> bool:
        """Replay witnesses (`_replay`) and note each run in runs_by_trial; False when nothing ran."""
        statuses = await self._replay(items, targets)
        for tid, by_witness in statuses.items():
            for wid, status in by_witness.items():
                self._note_run(tid, wid, status, self._replay_keys.get((tid, wid)))
        return bool(statuses)

    async def _replay(self, items: list[tuple[str, Candidate]], targets: list[str]) -> dict[str, dict[str, str]]:
        """Run tests on model worlds: one run per trial with every file, trials in parallel. A
        test that already ran on a trial's world (the same test as an earlier witness or
        candidate, oracle.taken_run) takes that run there instead."""
        async def one(trial_id: str) -> tuple[str, dict[str, str]]:
            world = self.check.trial_worlds[trial_id]
            out, todo = {}, []
            for wid, c in items:
                if wid in self.runs_by_trial.get(trial_id, {}):
                    continue
                taken = taken_run(self.env, self.task.id, world, c, self.book, isolate=True, trial_id=trial_id)
                if taken is None:
                    todo.append((wid, c))
                    continue
                out[wid] = taken[0].status_of(c.path, c.test_ids)
                self._replay_keys[(trial_id, wid)] = taken[0].key
            if not todo:
                return trial_id, out
            files = {c.path: c.source for _, c in todo}
            ids: list[str] = []
            for _, c in todo:
                ids.extend(c.run_ids())
            run: RunResult = await self.env.runner.run(
                world, ids, files, isolate=True, task_id=self.task.id,
                trial_id=trial_id, candidate_ids=[wid for wid, _ in todo])
            for wid, c in todo:
                out[wid] = run.status_of(c.path, c.test_ids)
                self._replay_keys[(trial_id, wid)] = run.key
                self.book.note_run(world, True, 0, c, run.key)
            return trial_id, out

        results = await gather_all(one(t) for t in targets)
        return {trial_id: statuses for trial_id, statuses in results if statuses}

    def refuted_ids(self) -> list[str]:
        return [t for t, ws in self.refuted.items() if ws]

    def _failure_signatures(self) -> dict[str, dict[str, str]]:
        """trial id -> witness id -> how the witness failed there (its kind and first decisive
        line, from the stored run): the ambiguity rule counts only failures alike."""
        from .ambiguity import run_signature

        status_of = {k: self.runs_by_trial.get(k[0], {}).get(k[1], "") for k in self.run_keys}
        failing = {k: key for k, key in self.run_keys.items()
                   if is_failing(status_of[k]) and not never_a_reading(status_of[k])}
        runs = self.env.store.runs_by_key(set(failing.values())) if failing else {}
        by_id = {w.record.id: w.candidate for w in self.witnesses}
        out: dict[str, dict[str, str]] = {}
        for (trial_id, wid), key in failing.items():
            if key in runs and wid in by_id:
                c = by_id[wid]
                out.setdefault(trial_id, {})[wid] = run_signature(runs[key].outcomes, c.path,
                                                                  c.test_ids, status_of[(trial_id, wid)])
        return out

    def _reclassify(self) -> None:
        """Apply the classifier to every witness and update refutations (and withdrawals)."""
        env, task = self.env, self.task
        records = [w.record for w in self.witnesses]
        self.classes = env.hooks.classify(task, records, self.runs_by_trial, self.corpus,
                                          self._failure_signatures())
        for w in self.witnesses:
            c = self.classes[w.record.id]
            env.store.set_witness_class(w.record.id, WitnessClassification(c.label), c.rho, c.note)
        by_id = {w.record.id: w for w in self.witnesses}
        for trial in self.corpus:
            if trial.id not in self.selected:
                continue  # measured for rho only; its verdict was not asked for
            runs = self.runs_by_trial.get(trial.id, {})
            now = [w.record.id for w in self.witnesses
                   if ((self.classes[w.record.id].label == "refutes" and is_failing(runs.get(w.record.id, "")))
                       or never_a_reading(runs.get(w.record.id)))  # a hang or kill is no reading of P
                   and (self.lightweight or w.record.source_trial == trial.id)]
            before = self.refuted.get(trial.id, [])
            for wid in now:
                if wid not in before:
                    w = by_id[wid]
                    env.store.put_refutation(task.id, trial.id, wid, w.record.requirement, RunOutcome(runs[wid]),
                                             RunOutcome(w.reference_status), self.run_keys.get((trial.id, wid)),
                                             w.reference_run)
            for wid in before:
                if wid not in now:
                    env.store.withdraw_refutation(trial.id, wid)
            self.refuted[trial.id] = now
            if now and not before:
                if trial.id in self.active:
                    self.active.remove(trial.id)
                self._state(trial.id, TrialLoopState.REFUTED, now[0], audited=None)
                self._emit(TrialRefuted(env.session_id, task_id=task.id, trial_id=trial.id,
                                        witness_id=now[0], status=runs[now[0]]))
            elif before and not now:
                klass = self.classes.get(before[0])
                self._emit(RefutationWithdrawn(env.session_id, task_id=task.id, trial_id=trial.id,
                                               witness_id=before[0], rho=klass.rho if klass and klass.rho is not None else 0.0))
                if trial.id in self.audited:
                    self._state(trial.id, TrialLoopState.AMBIGUOUS, before[0])
                else:
                    # Back in play: the loop may still audit it.
                    if trial.id not in self.active:
                        self.active.append(trial.id)
                        self.active.sort()
                    self._state(trial.id, TrialLoopState.ACTIVE, "refutation withdrawn")
