"""A simulated sandbox and roles for unit tests of the engine's loop logic (no containers).

Worlds are simulated by a tiny rule set, so tests can state the expected outcome directly:
- a trial's patch lists the requirements it misses: "defect:<req>" lines; "NOAPPLY" makes its
  patch fail to apply and "FAILT0" makes it fail T0 on our re-run; "FORGE" makes its code forge
  every report on its world (the canaries catch it: proven tampering, every outcome void) and
  "FORGEW" only the witness runs (isolated runs with candidate files);
- a candidate's source names the requirement it checks ("REQ <req>"); "BROKEN" makes it fail
  on the reference world too; it fails on a model world iff the trial misses <req>; it fails on
  the null world unless it says "NULLPASS" (a vacuous test).
- a task with metadata {"bad_reference": True} fails T0 on the reference world.
The real pipeline is exercised end to end on podman in test_audit_cmd_e2e.py.
"""
from __future__ import annotations

import asyncio
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from testjack_tui.sandbox.api import ExecResult, PatchResult, TestOutcome, TestRun, WorldRef
from testjack_tui.sandbox.errors import PatchError
from testjack_tui.engine.roles import AuditOutcome, Candidate, ChecklistItem, ReviewVerdict
from testjack_tui.model import Benchmark, Environment, OfficialTests, Reference, Task, Trial


def make_task(task_id: str, **metadata) -> Task:
    return Task(id=task_id, instruction=f"Implement {task_id}. It must handle alias and quoting.",
                environment=Environment(image="localhost/none"), reference=Reference(patch="G"),
                tests=OfficialTests(fail_to_pass=("tests/test_t0.py::test_f2p",),
                                    pass_to_pass=("tests/test_t0.py::test_p2p",)),
                metadata=dict(metadata))


def make_trial(task_id: str, trial_id: str, model: str, defects=(), extra: str = "",
               official_pass: bool = True) -> Trial:
    patch = "\n".join([f"defect:{d}" for d in defects] + ([extra] if extra else []))
    return Trial(id=trial_id, task_id=task_id, agent="agent", model=model, patch=patch,
                 official_pass=official_pass)


def make_benchmark(tasks: list[Task], trials: list[Trial]) -> Benchmark:
    from pathlib import Path

    return Benchmark(name="fake", format="harbor", root=Path("."), tasks={t.id: t for t in tasks},
                     trials=trials)


def _exec(text: str = "") -> ExecResult:
    return ExecResult(argv=["pytest"], exit_code=0, timed_out=False, stdout_head=text, stdout_tail="",
                      stderr_head="", stderr_tail="", log_path=None, duration=0.01)


@dataclass
class FakeSandbox:
    tasks: dict[str, Task]
    trials: dict[str, Trial]
    calls: list[tuple] = field(default_factory=list)  # ("run", world name, ids, files, isolate)
    fail_after: int | None = None  # raise after this many run_tests calls (simulated crash)
    delay: float = 0.0
    listener: object = None

    def __call__(self, listener=None, session=""):
        self.listener = listener
        return self._ctx()

    @asynccontextmanager
    async def _ctx(self):
        yield self

    async def prepare(self, task: Task, kind: str, trial: Trial | None = None) -> WorldRef:
        if kind == "model" and "NOAPPLY" in trial.patch:
            raise PatchError(f"{task.id}/model/{trial.id}", PatchResult(False, "", "hunk 1 FAILED"), "trial")
        return WorldRef(task.id, kind, trial.id if trial else None, f"img-{task.id}-{kind}", "/app")

    async def run_tests(self, world: WorldRef, test_ids, files=None, timeout=300, isolate_harness=False):
        files = dict(files or {})
        if self.fail_after is not None and len([c for c in self.calls if c[0] == "run"]) >= self.fail_after:
            raise RuntimeError("simulated crash")
        self.calls.append(("run", world.name, tuple(test_ids), tuple(sorted(files)), isolate_harness))
        if self.delay:
            await asyncio.sleep(self.delay)
        task = self.tasks[world.task_id]
        trial = self.trials.get(world.trial_id) if world.trial_id else None
        outcomes = {}
        for test_id in test_ids:
            path = test_id.split("::")[0]
            if path in files:
                node = test_id if "::" in test_id else f"{path}::test_it"
                outcomes[node] = TestOutcome(node, self._candidate_status(world, trial, files[path]),
                                             "assert expected == got" if True else "")
            else:
                outcomes[test_id] = TestOutcome(test_id, self._t0_status(world, task, trial, test_id))
        run = TestRun(world=world.name, test_ids=list(test_ids), outcomes=outcomes, exec=_exec("ran"),
                      files=files, canaries="ok" if world.kind == "model" else "")
        if trial is not None and ("FORGE\n" in trial.patch + "\n" or "FORGEW" in trial.patch and files):
            run.canaries, run.tampering = "tampered", ["a canary test that must fail was reported passed"]
            run.outcomes = {k: TestOutcome(k, "unverifiable", "void: proven tampering")
                            for k in outcomes}
        return run

    @staticmethod
    def _candidate_status(world, trial, source: str) -> str:
        if world.kind == "null":
            return "passed" if "NULLPASS" in source else "failed"
        if "BROKEN" in source:
            return "failed"
        if world.kind == "reference":
            return "passed"
        req = re.search(r"REQ (\S+)", source)
        missing = set(re.findall(r"defect:(\S+)", trial.patch)) if trial else set()
        return "failed" if req and req.group(1) in missing else "passed"

    @staticmethod
    def _t0_status(world, task, trial, test_id) -> str:
        if world.kind == "null":
            return "failed" if test_id in task.tests.fail_to_pass else "passed"
        if world.kind == "reference":
            return "failed" if task.metadata.get("bad_reference") else "passed"
        return "failed" if "FAILT0" in trial.patch else "passed"

    def runs(self, world_prefix: str = "") -> list[tuple]:
        return [c for c in self.calls if c[0] == "run" and c[1].startswith(world_prefix)]


def cand(task_id: str, trial: str | None, n: int, req: str, *, version: int = 1, broken: bool = False,
         label: str = "valid", path: str | None = None, author: str = "audit") -> Candidate:
    source = f"# REQ {req}\n# LABEL {label}\n" + ("# BROKEN\n" if broken else "") + f"# v{version}\n"
    return Candidate(id=f"{task_id}:{trial or 'analysis'}:{n}.v{version}",
                     path=path or f"tests/test_tj_{req}.py", source=source, requirement=f"handles {req}",
                     author=author, attempt=version)


class FakeAudit:
    """Per trial: a list of chains; a chain is a list of candidate versions (repairs)."""

    label = "fake audit"

    def __init__(self, chains: dict[str, list[list[Candidate]]]):
        self.chains = chains
        self.audits: list[str] = []
        self.repairs: list[str] = []

    async def audit(self, ctx) -> AuditOutcome:
        self.audits.append(ctx.trial.id)
        first = [chain[0] for chain in self.chains.get(ctx.trial.id, [])]
        return AuditOutcome(first, [ChecklistItem("handles alias", True, "alias")], "notes")

    async def repair(self, ctx, candidate: Candidate, feedback: str):
        self.repairs.append(candidate.id)
        key = ctx.trial.id if ctx.trial is not None else "analysis"
        for chain in self.chains.get(key, []):
            ids = [c.id for c in chain]
            if candidate.id in ids:
                i = ids.index(candidate.id)
                if i + 1 < len(chain):
                    return chain[i + 1]
                return None
        return None


class FakeAnalyst(FakeAudit):
    label = "fake analyst"

    async def analyse(self, ctx) -> list[Candidate]:
        self.audits.append("analysis")
        return [chain[0] for chain in self.chains.get("analysis", [])]


class FakeReviewer:
    label = "fake reviewer"

    def __init__(self):
        self.reviewed: list[str] = []

    async def review(self, ctx, candidate: Candidate) -> ReviewVerdict:
        self.reviewed.append(candidate.id)
        label = re.search(r"LABEL (\S+)", candidate.source).group(1)
        return ReviewVerdict(candidate.id, label, candidate.requirement, explicit=True, quote="alias",
                             reason=f"scripted {label}")


@dataclass
class FakeRoles:
    audit: FakeAudit
    reviewer: FakeReviewer
    task_analysis: FakeAnalyst | None
    implementer: object | None = None  # no-reference mode's role: none here


def tools_factory(env, task, trial, worlds, evidence):
    return object()
