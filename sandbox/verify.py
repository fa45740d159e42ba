"""Does a task hold together, and do the benchmark's recorded verdicts reproduce?

Runs T0 on the null world, the reference world and every trial's world (testjack_tui.sandbox.t0: through
the benchmark's own verifier flow when the task ships one, else our runner) and judges the
task with the one well-formedness rule (testjack_tui.sandbox.wellformed.assess), which the audit's task
check uses too. Per trial: our pass/fail on T0 against the recorded official verdict; a trial
whose patch does not apply is not reproducible. Recorded and reproduced verdicts are separate
fields. Ids everywhere are T0's ids exactly as the benchmark writes them.
"""
from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Sequence

from testjack_tui.model import Task, Trial, t0_flow, t0_timeout

from .api import TestRun, WorldKind, WorldRef
from .backend import SandboxBackend
from .errors import PatchError, SandboxError
from .t0 import run_t0, t0_plan
from .wellformed import assess, diagnose

Progress = Callable[[str, int, int], None]  # (what just finished, done, total)


@dataclass
class TrialVerification:
    trial_id: str
    model: str
    recorded_pass: bool
    reproduced_pass: bool | None  # None: could not run (patch does not apply, sandbox error)
    reproducible: bool
    reason: str = ""
    failing: list[str] = field(default_factory=list)  # T0 tests not passing on the trial
    tampered: list[str] = field(default_factory=list)  # harness files the trial's patch touches
    undone_by_t0: list[str] = field(default_factory=list)  # of those, files T0's reset puts back
    applied_with: str = ""
    reward: float | None = None  # what the benchmark's own verifier wrote, when it ran
    # The canaries of the trial's T0 run came out wrong: its code forged test reports.
    proven_tampering: list[str] = field(default_factory=list)
    recorded: str = ""  # "pass" | "fail" | "unknown" (no verdict source: nothing to reproduce)
    # The earlier trial of the task whose patch is byte for byte this one's: one world and one
    # T0 run serve both (the same code in the same repository), so its results are this one's.
    same_patch_as: str = ""


@dataclass
class TaskVerification:
    task_id: str
    well_formed: bool
    problems: list[str] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)  # tests T0 adds/changes or lists as f2p, passing on null
    regression_guards: list[str] = field(default_factory=list)  # older p2p tests passing on null
    reference_failures: list[str] = field(default_factory=list)
    f2p_passing_on_null: list[str] = field(default_factory=list)
    null_statuses: dict[str, str] = field(default_factory=dict)
    reference_statuses: dict[str, str] = field(default_factory=dict)
    diagnoses: dict[str, str] = field(default_factory=dict)  # world -> why no T0 test gave a result
    flow: str = ""  # "official" (the benchmark's verifier) or "direct" (our runner)
    t0_command: str = ""  # how T0 ran (t0.t0_plan) ...
    t0_parser: str = ""  # ... and what read its results
    trials: list[TrialVerification] = field(default_factory=list)

    @property
    def reproduced(self) -> int:
        """Recorded verdicts T0 reproduces here (trials with no recorded verdict not counted)."""
        return sum(1 for t in self.trials if t.reproducible and t.recorded != "unknown")

    @property
    def recorded(self) -> int:
        """Trials with a recorded verdict (pass or fail) to reproduce."""
        return sum(1 for t in self.trials if t.recorded != "unknown")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["reproduced"] = self.reproduced
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TaskVerification":
        """The inverse of to_dict (unknown keys ignored), for results kept between visits."""
        known = {f.name for f in fields(cls)} - {"trials"}
        trial_known = {f.name for f in fields(TrialVerification)}
        result = cls(**{k: v for k, v in data.items() if k in known})
        result.trials = [TrialVerification(**{k: v for k, v in t.items() if k in trial_known})
                         for t in data.get("trials") or [] if isinstance(t, dict)]
        return result


VACUOUS_MEANING = "added, changed or listed as fail-to-pass by T0, yet already passes on the null world"


def report_lines(res: TaskVerification) -> list[str]:
    """One task's verification as text: the headline, then each problem, each vacuous test by
    name, and each trial whose recorded verdict does not reproduce. The CLI and the TUI both
    show exactly these lines."""
    flow = {"official": "T0 by the benchmark's own evaluator",
            "direct": "T0 by our runner"}.get(res.flow, "")
    lines = [f"{res.task_id}: {'well-formed' if res.well_formed else 'NOT well-formed'}; "
             f"{len(res.vacuous)} vacuous T0 test(s); "
             f"{res.reproduced}/{res.recorded} recorded verdicts reproduce"
             + (f" ({flow})" if flow else "")]
    if res.t0_command:
        lines.append(f"  T0 command: {res.t0_command}")
        lines.append(f"  T0 results read by: {res.t0_parser}")
    for problem in res.problems:
        lines.append(f"  problem: {problem}")
    for test_id in res.vacuous:
        lines.append(f"  vacuous: {test_id} ({VACUOUS_MEANING})")
    if res.regression_guards:
        lines.append(f"  {len(res.regression_guards)} older pass-to-pass test(s) pass on the null world "
                     "too (regression guards; they verify nothing about a trial)")
    for tv in res.trials:
        if tv.recorded == "unknown":
            here = "could not run" if tv.reproduced_pass is None else "passes" if tv.reproduced_pass else "fails"
            lines.append(f"  unknown: {tv.trial_id} ({tv.model}) has no recorded verdict; T0 {here} here"
                         + (f": {tv.reason}" if tv.reason else ""))
        elif not tv.reproducible:
            recorded = "pass" if tv.recorded_pass else "fail"
            lines.append(f"  not reproducible: {tv.trial_id} ({tv.model}, recorded {recorded}): {tv.reason}")
        if tv.proven_tampering and tv.reproducible:
            lines.append(f"  proven tampering by {tv.trial_id}: {'; '.join(tv.proven_tampering)}")
        if tv.tampered:
            names = [f + (" (reset by T0)" if f in tv.undone_by_t0 else "") for f in tv.tampered]
            lines.append(f"  harness files touched by {tv.trial_id}: {', '.join(names)}")
    return lines


def _not_passing(run: TestRun, ids: Sequence[str]) -> list[str]:
    return [i for i in ids if run.status(i) != "passed"]


async def verify_task(sb: SandboxBackend, task: Task, trials: Sequence[Trial],
                      on_progress: Progress | None = None) -> TaskVerification:
    ids = list(dict.fromkeys(task.tests.ids))
    total = 2 + len(trials)
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if on_progress:
            on_progress(what, done, total)

    command, parser = t0_plan(task)
    result = TaskVerification(task_id=task.id, well_formed=True,
                              flow=t0_flow(task),
                              t0_command=command, t0_parser=parser)
    world_problems: list[str] = []

    async def world_side(kind: WorldKind) -> TestRun | None:
        try:
            world = await sb.prepare(task, kind)
            return await run_t0(sb, task, world, timeout=t0_timeout(task))
        except (PatchError, SandboxError) as exc:
            world_problems.append(f"{kind} world: {exc}")
            return None
        finally:
            step(f"{task.id}: {kind} world")

    async def null_side() -> TestRun | None:
        return await world_side("null")

    async def reference_side() -> TestRun | None:
        if not task.reference.present:
            world_problems.append("no reference solution (G): well-formedness cannot be checked")
            step(f"{task.id}: reference world")
            return None
        return await world_side("reference")

    # Trials whose patches are byte for byte the same share the first one's world and T0 run.
    first_of: dict[str, Trial] = {}
    worlds: dict[str, asyncio.Future[WorldRef]] = {}
    runs: dict[str, asyncio.Future[TestRun]] = {}

    async def trial_side(trial: Trial) -> TrialVerification:
        tv = TrialVerification(trial_id=trial.id, model=trial.model, recorded_pass=trial.official_pass,
                               reproduced_pass=None, reproducible=False, recorded=trial.recorded)
        key = trial.patch or ""
        first = first_of.setdefault(key, trial)
        if first is not trial:
            tv.same_patch_as = first.id
        try:
            if key not in worlds:
                worlds[key] = asyncio.ensure_future(sb.prepare(task, "model", first))
            world = await worlds[key]
            tv.tampered = list(world.tampered)
            t0_files = set(task.tests.test_files)
            tv.undone_by_t0 = [f for f in world.tampered if f in t0_files]
            tv.applied_with = world.applied_with
            if key not in runs:
                runs[key] = asyncio.ensure_future(run_t0(sb, task, world, first, timeout=t0_timeout(task)))
            run = await runs[key]
            tv.reward = run.reward
            tv.failing = _not_passing(run, ids)
            tv.reproduced_pass = bool(ids) and not tv.failing
            # an unknown verdict has nothing to contradict: T0's result here is only shown
            tv.reproducible = trial.recorded == "unknown" or tv.reproduced_pass == trial.official_pass
            if run.canaries == "tampered":
                tv.proven_tampering = list(run.tampering)
                tv.reason = "proven tampering (canary_tampering): " + "; ".join(run.tampering)
            elif not tv.reproducible:
                why = diagnose("model", run, ids)
                if why:
                    tv.reason = why
                elif trial.official_pass:
                    tv.reason = ("recorded pass, but T0 fails here: " + ", ".join(tv.failing[:5])
                                 + (f" and {len(tv.failing) - 5} more" if len(tv.failing) > 5 else ""))
                else:
                    tv.reason = "recorded fail, but T0 passes here"
        except PatchError as exc:
            tv.reason = f"{exc.stage} does not apply: {exc.summary}"
        except SandboxError as exc:
            tv.reason = f"sandbox error: {exc}"
        finally:
            step(f"{task.id}: trial {trial.id}")
        return tv

    null_run, ref_run, trial_results = await asyncio.gather(
        null_side(), reference_side(), asyncio.gather(*(trial_side(t) for t in trials)))
    result.trials = list(trial_results)

    verdict = assess(task, null_run, ref_run)
    result.problems = world_problems + verdict.problems
    result.vacuous = verdict.vacuous
    result.regression_guards = verdict.regression_guards
    result.f2p_passing_on_null = verdict.f2p_passing_on_null
    result.reference_failures = verdict.reference_failures
    result.diagnoses = verdict.diagnoses
    if null_run is not None:
        result.null_statuses = {i: null_run.status(i) for i in ids}
    if ref_run is not None:
        result.reference_statuses = {i: ref_run.status(i) for i in ids}
    result.well_formed = not result.problems
    return result
