"""Test executions for the engine: budgeted, stored, and never repeated on resume.

Every run is keyed by (world, test ids, files, isolation). A key already in the session's
database is answered from there; so is a key another session made, when this one reuses that
session's runs (`audit --reuse-runs SESSION`, engine/run_reuse.py: the run is stored here as this session's
own, as if it had run here), and so is a run of one test file that session ran on the same world
(alone or with others: `borrow_same_test`); otherwise it runs in a fresh container through the session's
`BudgetedBackend` (one run reserved from the budget, stopped at the wall-time limit), is stored,
and announced (TestRunFinished).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterable

from testjack_tui.sandbox.api import TestRun, WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.sandbox.runners.base import aggregate, config_notes
from testjack_tui.model import Task, Trial, t0_flow, t0_timeout  # noqa: F401 - the engine's T0 runs use it

from testjack_tui.safe_text import safe_text

from .budgeted import BudgetedBackend
from .events import Log, TestRunFinished
from .failure_kinds import RESOURCE_KINDS, cause, kind_of
from .run_reuse import LenderTests, borrow, borrow_same_test
from .records_runs import CanaryCheck, CanaryVerdict, GraderReport, StoredRun, TestOutcomes, of_file
from .store import SessionStore

# A witness fails on a trial when its tests do not pass there: they fail, error, time out, or are
# not found (not collected) although they ran and passed on the reference. "skipped" is no answer,
# and "unverifiable" (the run's canaries showed its reports cannot be trusted) neither passes
# nor fails.
# A hang, a kill at a resource limit or a crash fails too (engine/failure_kinds.py says which).
FAILING = ("failed", "error", "timed_out", "not_found", *RESOURCE_KINDS)
OUTPUT_CAP = 4000  # characters of head and of tail kept per run
WITNESS_TIMEOUT = 180.0  # seconds for candidate and witness runs (T0 runs use the task's own)


@dataclass
class RunResult:
    """A stored test run (what the engine reasons about; the sandbox's TestRun is not kept)."""

    key: str
    world: str
    trial_id: str | None
    test_ids: list[str]
    outcomes: TestOutcomes
    exit_code: int | None = None
    timed_out: bool = False
    head: str = ""
    tail: str = ""
    duration: float = 0.0
    cached: bool = False  # answered from the store
    canaries: str = ""  # "ok" | "tampered" | "unverifiable" | "" (no canaries: not a model world)
    tampering: list[str] = field(default_factory=list)  # what the canaries showed, when not "ok"
    flow: str = "direct"  # T0 runs: "official" (the benchmark's evaluator) or "direct"
    reported: int = 0  # T0 runs: test ids the run's reports named
    reward: float | None = None  # T0 runs through the benchmark's verifier: its reward

    def status(self, test_id: str) -> str:
        outcome = self.outcomes.get(test_id)
        return outcome.get("status", "not_found") if outcome else "not_found"

    @property
    def output(self) -> str:
        return self.head + ("\n" + self.tail if self.tail else "")

    @property
    def proven_tampering(self) -> bool:
        return self.canaries == "tampered"

    def status_of(self, path: str, test_ids: Iterable[str] = ()) -> str:
        """Status of one candidate file (or its listed node ids) in this run, a failure refined
        to its kind (failed / error / timed_out / killed_* / crashed: engine/failure_kinds.py)."""
        picked = self.outcomes_of(path, test_ids)
        status = combined_status(picked)
        message = "\n".join(str(o.get("message") or "") for o in picked.values())
        return kind_of(status, exit_code=self.exit_code, timed_out=self.timed_out, message=message,
                       output=self.output)

    def failure_cause(self, path: str, test_ids: Iterable[str] = ()) -> str:
        """The decisive log lines of this candidate's failure in this run ("" when it passed)."""
        picked = self.outcomes_of(path, test_ids)
        message = "\n".join(str(o.get("message") or "") for o in picked.values())
        return cause(self.status_of(path, test_ids), message, self.output)

    def outcomes_of(self, path: str, test_ids: Iterable[str] = ()) -> TestOutcomes:
        return of_file(self.outcomes, path, test_ids)

    def summary(self) -> str:
        return summarize(self.outcomes, self.timed_out)

    def messages(self, path: str, test_ids: Iterable[str] = (), limit: int = 2000) -> str:
        parts = []
        for node, outcome in sorted(self.outcomes_of(path, test_ids).items()):
            line = f"{node}: {outcome.get('status')}"
            if outcome.get("message"):
                line += "\n" + str(outcome["message"]).strip()
            parts.append(line)
        return "\n".join(parts)[:limit]


def combined_status(outcomes: TestOutcomes) -> str:
    """One status for a witness's test ids on one run (the sandbox's one combiner)."""
    return aggregate([o.get("status") or "not_found" for o in outcomes.values()])


def witness_fails(status: str | None) -> bool:
    """Does this witness fail on this trial? The one rule: refutation, the ambiguity rule's
    rho, the summary and the export all ask it, so not_found, error and timed_out count alike."""
    return status in FAILING


is_failing = witness_fails  # the name the engine's older call sites use


def summarize(outcomes: TestOutcomes, timed_out: bool = False) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome.get("status", "?")] = counts.get(outcome.get("status", "?"), 0) + 1
    text = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no tests ran"
    return text + (" (timed out)" if timed_out else "")


def run_key(world: str, test_ids: list[str], files: dict[str, str], isolate: bool,
            repeat: int = 0) -> str:
    data = {"world": world, "ids": sorted(test_ids), "files": sorted(files.items()),
            "isolate": bool(isolate)}
    if repeat:
        data["repeat"] = repeat  # the n-th re-run of the same inputs (flaky control)
    blob = json.dumps(data, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def t0_key(task: Task, world: WorldRef, repeat: int = 0) -> str:
    """The key T0's run in `world` is stored under (TestRunner.run_t0)."""
    return run_key(f"t0-{t0_flow(task)}:{world.name}@{world.image}", list(dict.fromkeys(task.tests.ids)), {}, False, repeat)


def official_inputs(task: Task, kind: str, trial: Trial | None = None) -> str:
    """A digest of what a run of the task's own test.sh in a `kind` world reads beyond the
    world's snapshot (which its run key names): every file of the tests folder, the patch it is
    handed, the evaluator's settings and the command. Two runs with the same key and digest are
    the same run; "" when the task has no such flow (or it cannot run: the run itself says why)."""
    from testjack_tui.sandbox.official import patch_for, tests_files

    ev = task.tests.evaluator
    if ev is None or ev.kind == "swebench" or ev.tests_dir is None:
        return ""
    try:
        files = {path: hashlib.sha256(data).hexdigest() for path, data in tests_files(ev).items()}
        patch = patch_for(task, kind, trial)
    except Exception:  # noqa: BLE001 - no digest, so nothing is ever taken from such a run
        return ""
    settings = {"kind": ev.kind, "report_format": ev.report_format, "reports": list(ev.reports),
                "node_id": ev.node_id, "timeout_sec": ev.timeout_sec, "separate": ev.separate,
                "network_mode": ev.network_mode, "verifier_image": ev.verifier_image,
                "verifier_containerfile": ev.verifier_containerfile.name if ev.verifier_containerfile else None,
                "workdir": task.environment.workdir, "memory_mb": task.environment.memory_mb,
                "ids": list(dict.fromkeys(task.tests.ids))}
    data = {"argv": ["bash", "/tests/test.sh"], "tests": files, "settings": settings,
            "patch": None if patch is None else hashlib.sha256(patch.encode()).hexdigest()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@dataclass
class TestRunner:
    sandbox: BudgetedBackend
    store: SessionStore
    emit: Callable[[object], None]
    session_id: str
    timeout: float = WITNESS_TIMEOUT
    history: list[str] = field(default_factory=list)  # keys run by this process (for tests)
    # Another session's store whose runs this one reuses (config reuse_runs, engine/run_reuse.py), read-only here.
    lender: SessionStore | None = None
    noted: set[tuple[str, str]] = field(default_factory=set)  # (task, configuration note) logged
    _lender_tests: LenderTests | None = field(default=None, init=False, repr=False)  # read at the first need

    async def run(self, world: WorldRef, test_ids: list[str], files: dict[str, str] | None = None, *,
                  isolate: bool = False, task_id: str = "", trial_id: str | None = None,
                  candidate_ids: Iterable[str] = (), announce_cached: bool = False,
                  timeout: float | None = None, repeat: int = 0) -> RunResult:
        """One test run; `repeat` > 0 asks for a fresh re-run of the same inputs."""
        files = dict(files or {})
        test_ids = list(dict.fromkeys(test_ids))
        key = self.key_of(world, test_ids, files, isolate, repeat)
        return await self._run(world, test_ids, files, isolate, task_id, trial_id, candidate_ids,
                               announce_cached, key,
                               lambda sb: sb.run_tests(world, test_ids, files=files,
                                                       timeout=timeout or self.timeout,
                                                       isolate_harness=isolate),
                               lambda ids, fs: self.key_of(world, ids, fs, isolate, repeat))

    @staticmethod
    def key_of(world: WorldRef, test_ids: list[str], files: dict[str, str], isolate: bool, repeat: int = 0) -> str:
        """The key `run` stores these inputs under."""
        # The snapshot's tag, not only the world's name: two versions of one world (a revised
        # independent reference G′) must never share stored results.
        return run_key(f"{world.name}@{world.image}", list(dict.fromkeys(test_ids)), files, isolate, repeat)

    def stored(self, key: str) -> RunResult | None:
        """The run this session stored under `key` (a lender's is not looked at), or None."""
        row = self.store.get_run(key)
        if row is None:
            return None
        result = _from_row(row)
        for check in self.store.canary_checks(key=key):
            result.canaries, result.tampering = check.verdict, list(check.problems)
        return result

    def copy(self, run: RunResult, key: str, test_ids: list[str], outcomes: TestOutcomes, task_id: str,
             trial_id: str | None, candidate_ids: Iterable[str]) -> RunResult:
        """`run` stored again under `key` for other candidates (its outcomes renamed to theirs),
        marked as a copy of it (`same_as`): no container, no budget, no TestRunFinished, since
        nothing ran; the caller says whose run answered."""
        stored = self.store.get_run(run.key)
        assert stored is not None, run.key  # only a stored run is copied
        for check in self.store.canary_checks(key=run.key):
            self.store.put_canary_check(dataclasses.replace(check, key=key, task_id=task_id, trial_id=trial_id))
        self.store.put_run(dataclasses.replace(stored, key=key, task_id=task_id, trial_id=trial_id,
                                               candidate_ids=tuple(candidate_ids), test_ids=tuple(test_ids),
                                               outcomes=outcomes, same_as=run.key))
        return dataclasses.replace(run, key=key, trial_id=trial_id, test_ids=list(test_ids), outcomes=outcomes,
                                   cached=True)

    async def run_t0(self, task: Task, world: WorldRef, trial: Trial | None = None, repeat: int = 0) -> RunResult:
        """T0 in a world as testjack_tui.sandbox.t0 runs it: the benchmark's own evaluator when the task ships
        one, our runner otherwise; outcomes keyed by T0's ids as the benchmark writes them.
        `repeat` > 0: a fresh re-run of the same world (flaky T0 tests)."""
        from testjack_tui.sandbox.t0 import run_t0

        test_ids = list(dict.fromkeys(task.tests.ids))
        key = t0_key(task, world, repeat)
        result = await self._run(world, test_ids, {}, False, task.id, trial.id if trial else None, (),
                                 False, key, lambda sb: run_t0(sb, task, world, trial,
                                                              timeout=t0_timeout(task)),
                                 inputs=lambda: official_inputs(task, world.kind, trial))
        result.flow = t0_flow(task)
        return result

    async def _run(self, world: WorldRef, test_ids: list[str], files: dict[str, str], isolate: bool, task_id: str,
                   trial_id: str | None, candidate_ids: Iterable[str], announce_cached: bool, key: str,
                   execute: Callable[[SandboxBackend], Awaitable[TestRun]],
                   key_here: Callable[[list[str], dict[str, str]], str] | None = None,
                   inputs: Callable[[], str] | None = None) -> RunResult:
        """`key_here(ids, files)`: the key of a run of those inputs on this run's world, isolation
        and re-run number (a run of one candidate file may take the lender's run of its test).
        `inputs`: a run of the task's own flow, its official_inputs (what its grader reported is
        kept with them)."""
        candidate_ids = tuple(candidate_ids)  # read more than once below
        stored = self.store.get_run(key)
        lent = False
        if stored is None and self.lender is not None:
            stored = borrow(self.lender, self.store, key, task_id, trial_id, candidate_ids, self._reserve)
            if stored is None and key_here is not None and candidate_ids and len(files) == 1:
                if self._lender_tests is None:
                    self._lender_tests = LenderTests(self.lender)
                [(path, source)] = files.items()
                stored = borrow_same_test(self._lender_tests, self.store, key, world.name, world.framework, isolate, path, source,
                                          test_ids, task_id, trial_id, candidate_ids, key_here, self._reserve)
            lent = stored is not None
        if stored is not None:
            result = _from_row(stored)
            for check in self.store.canary_checks(key=key):
                result.canaries, result.tampering = check.verdict, list(check.problems)
            if announce_cached or lent:  # a lent run is announced as this session's own, naming its lender
                self._announce(task_id, world.name, test_ids, result, candidate_ids,
                               self.lender.path.parent.name if lent and self.lender is not None else "")
            return result
        run = await self.sandbox.once(execute, world.name)
        result = run_result(key, world.name, trial_id, test_ids, run)
        outcomes, ex = result.outcomes, run.exec
        if result.canaries and result.canaries != CanaryVerdict.OK:
            # Before the run itself: a resumed session finds both or re-runs.
            self.store.put_canary_check(CanaryCheck(key, task_id, trial_id, world.name,
                                                    CanaryVerdict(result.canaries), tuple(result.tampering)))
        digest = inputs() if inputs is not None and run.flow == "official" else ""
        grader = GraderReport(digest, tuple(run.reported_ids)) if digest else None
        self.store.put_run(StoredRun(key, task_id, world.name, trial_id, tuple(candidate_ids), tuple(test_ids),
                                     isolate, outcomes, ex.exit_code, ex.timed_out, result.head,
                                     result.tail, ex.duration, grader=grader))
        self.history.append(key)
        self._note_config(task_id, ex.stdout_head or "")
        self._announce(task_id, world.name, test_ids, result, candidate_ids)
        return result

    def _reserve(self) -> None:
        """A lent run counts against the budget as a run made here, so limits hold as they would."""
        if self.sandbox.budget is not None:
            self.sandbox.budget.reserve_test_runs(1)

    def _note_config(self, task_id: str, stdout_head: str) -> None:
        """Log, once per task, how the runner fitted witness runs to the repo's own test
        configuration (options left out, name patterns added)."""
        for note in config_notes(stdout_head):
            if (task_id, note) not in self.noted:
                self.noted.add((task_id, note))
                self.emit(Log(self.session_id, level="info",
                              message=f"{task_id}: test configuration: {safe_text(note, one_line=True)}"))

    def _announce(self, task_id: str, world: str, test_ids: list[str], result: RunResult,
                  candidate_ids: Iterable[str], lent_by: str = "") -> None:
        ids = list(candidate_ids)
        self.emit(TestRunFinished(self.session_id, task_id=task_id, world=world,
                                  test_ids=tuple(test_ids), summary=result.summary(),
                                  candidate_id=ids[0] if len(ids) == 1 else None, lent_by=lent_by))


def run_result(key: str, world: str, trial_id: str | None, test_ids: list[str], run: TestRun) -> RunResult:
    """What the engine keeps of a sandbox TestRun (outcomes, exit, capped output, canaries)."""
    outcomes = {node: {"status": o.status, "message": (o.message or "")[:2000]}
                for node, o in run.outcomes.items()}
    ex = run.exec
    head = ((ex.stdout_head or "") + ("\n[stderr]\n" + ex.stderr_head if ex.stderr_head else ""))
    tail = ((ex.stdout_tail or "") + ("\n[stderr]\n" + ex.stderr_tail if ex.stderr_tail else ""))
    if ex.limit_hit:  # the sandbox stopped it at a limit (disk): the kind must see that
        tail += f"\n[testjack: killed at the {ex.limit_hit} limit ({ex.limit_hit} limit)]"
    result = RunResult(key=key, world=world, trial_id=trial_id, test_ids=test_ids,
                       outcomes=outcomes, exit_code=ex.exit_code, timed_out=ex.timed_out,
                       head=head[:OUTPUT_CAP], tail=tail[-OUTPUT_CAP:], duration=ex.duration,
                       flow=getattr(run, "flow", "direct"), reported=getattr(run, "reported", 0),
                       reward=getattr(run, "reward", None))
    result.canaries = getattr(run, "canaries", "")
    result.tampering = list(getattr(run, "tampering", []) or [])
    return result


def _from_row(row: StoredRun) -> RunResult:
    return RunResult(key=row.key, world=row.world, trial_id=row.trial_id,
                     test_ids=list(row.test_ids), outcomes=row.outcomes, exit_code=row.exit_code,
                     timed_out=row.timed_out, head=row.head, tail=row.tail,
                     duration=row.duration, cached=True)
