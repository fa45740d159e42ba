"""An audit session: the public face of the engine for the TUI and the headless CLI.

    s = AuditSession.create(SessionConfig(benchmark="benchmarks/demo"), compose.session_deps())
    s.subscribe(print)
    state = await s.run()            # "finished" | "paused" | "stopped" | "failed"
    s.summary()

A session lives in SQLite under `paths.sessions_dir()/<id>/`. `run()` can be called again on
a paused, stopped or interrupted session (also from another process after `open`): stored
steps are replayed from the database, the rest is done. Control methods (`step_next`,
`run_to_end`, `pause`, `stop`, `raise_limits`, `answer`) may be called from any thread.
"""
from __future__ import annotations

import asyncio
import dataclasses
import builtins  # AuditSession.list() shadows the builtin in the class's annotations
import json
import os
import secrets
import shutil
import threading
import time
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, TYPE_CHECKING

from testjack_tui.sandbox.backend import BackendFactory, SandboxBackend, make_backend
from testjack_tui import paths
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Task, Trial

from .approval import AutoApprover, QueueApprover
from .budget import UNPRICED, Budget, price_bound_from
from .budgeted import BudgetedBackend
from .config import BudgetLimits, Mode, SessionConfig
from .control import Control
from .corpus import CORPUS, POPULATION, corpus_meta, read_corpus
from .events import ImageProgress, Log, Paused, SessionFinished, SessionStarted, SlotWait, WorldState
from .deps import SessionDeps
from .env import EngineEnv
from .loop import audit_task, set_task_state
from .records_standing import TaskLoopState
from .selection import select_trials
from .slots import WorkSlots
from .roles import ApprovalDecision, ApprovalRequest, BudgetExceeded, RoleSet
from . import run_reuse
from .runner import TestRunner
from .store import SessionStore, db_path, session_dir
from .summary import SessionSummary, build_summary
from .records import JsonObject

if TYPE_CHECKING:
    from testjack_tui.sandbox.api import WorldEvent
    from testjack_tui.config import Config

__all__ = ["AuditSession", "SessionConfig", "BudgetLimits", "list_sessions", "resume", "state_text"]

# Stored in the events table: everything except high-volume streams (kept in transcripts/runs).
UNSTORED_KINDS = {"agent_output", "budget_changed"}
LIMIT_NAMES = ("usd", "tokens", "seconds", "test_runs", "rounds")


class SessionState(StrEnum):
    """A session's state as stored in its meta and listed (the values are what files say)."""

    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"  # a budget limit was reached: resumable with a raised limit
    STOPPED = "stopped"
    FAILED = "failed"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"  # stored as running, its process is gone
    UNREADABLE = "unreadable"  # listed only: its store could not be read


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def _pid_alive(pid: int, start: str) -> bool:
    try:
        from testjack_tui.sandbox.labels import process_alive
    except ImportError:  # pragma: no cover
        return False
    return process_alive(pid, start)


def _pid_start(pid: int) -> str:
    try:
        from testjack_tui.sandbox.labels import process_start_time
    except ImportError:  # pragma: no cover
        return ""
    return process_start_time(pid)


class AuditSession:
    """One audit session. Construct with `create` or `open`, handing it its collaborators
    (`SessionDeps`: the application's are `testjack_tui.compose.session_deps()`)."""

    def __init__(self, session_id: str, store: SessionStore, config: SessionConfig, deps: SessionDeps):
        self.id = session_id
        self.store = store
        self.config = config
        self.deps = deps
        self._subscribers: list[Callable[[Any], None]] = []
        self._sub_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Future[list[str]] | None = None
        self._running = False
        self._stop_requested = False
        self._paused_for_budget = False
        self._budget_reason = ""
        self.control = Control(session_id, config.step, self._emit)
        self.approvals = QueueApprover(self._emit)
        self.operator_present = False  # set by a front end that answers approval requests
        self.slots: WorkSlots | None = None  # while running: which tasks work, which are queued
        self.budget = Budget(store, config.budget, session_id, self._emit,
                             price_bound=price_bound_from(self._app_config()))

    def _app_config(self) -> Config:
        """The user's config (profiles, pricing); tests pass their own as `app_config`."""
        app_config = self.deps.app_config
        if app_config is None:
            from testjack_tui.config import load_config

            app_config = load_config()  # a bad file: InputError naming file and field
            self.deps = dataclasses.replace(self.deps, app_config=app_config)
        return app_config

    # -- creation, lookup ---------------------------------------------------------------------
    @classmethod
    def create(cls, config: SessionConfig, deps: SessionDeps, session_id: str | None = None) -> "AuditSession":
        config.validate()
        if config.backend is None:  # the user's default, fixed now so `resume` uses the same one
            app_config = deps.app_config
            if app_config is None:
                from testjack_tui.config import load_config

                app_config = load_config()
                deps = dataclasses.replace(deps, app_config=app_config)
            config.backend = app_config.backend
            config.ray_address = config.ray_address or app_config.ray_address
        sid = session_id or new_session_id()
        if db_path(sid).exists():
            raise InputError(db_path(sid), None, f"session {sid} already exists")
        store = SessionStore.for_session(sid)
        store.set_meta("session_id", sid)
        store.set_meta("config", config.to_dict())
        store.set_meta("created", time.time())
        store.set_meta("state", SessionState.CREATED)
        return cls(sid, store, config, deps)

    @classmethod
    def open(cls, session_id: str, deps: SessionDeps) -> "AuditSession":
        path = db_path(session_id)
        if not path.exists():
            raise InputError(path, None, f"no session {session_id!r} (see `testjack-tui sessions`)")
        store = SessionStore(path)
        data = store.get_meta("config")
        if not isinstance(data, dict):
            raise InputError(path, "meta.config", "missing or unreadable session config")
        return cls(session_id, store, SessionConfig.from_dict(data), deps)

    @classmethod
    def resume(cls, session_id: str, deps: SessionDeps, **limits: Any) -> "AuditSession":
        """Open a session and raise its limits (call `run()` next)."""
        session = cls.open(session_id, deps)
        if limits:
            session.raise_limits(**limits)
        return session

    @staticmethod
    def list() -> list[JsonObject]:
        return list_sessions()

    # -- state --------------------------------------------------------------------------------
    @property
    def state(self) -> SessionState:
        return effective_state(self.store.all_meta())

    @property
    def directory(self) -> Path:
        return session_dir(self.id)

    def _set_state(self, state: SessionState, reason: str = "") -> None:
        self.store.set_meta("state", state)
        self.store.set_meta("state_reason", reason)
        self.store.set_meta("updated", time.time())

    # -- events -------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Call `callback(event)` for every engine event; returns an unsubscribe function."""
        with self._sub_lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._sub_lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)
        return unsubscribe

    def _emit(self, event: Any) -> None:
        kind = getattr(event, "kind", type(event).__name__)
        if kind not in UNSTORED_KINDS and not (kind == "world_state" and getattr(event, "state", "") == "output"):
            try:
                self.store.add_event(event.at, kind, getattr(event, "task_id", None), event.to_dict())
            except Exception:  # noqa: BLE001 - the log must never break the audit
                pass
        with self._sub_lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(event)
            except Exception:  # noqa: BLE001 - a broken renderer must not break the audit
                pass

    def events(self) -> builtins.list[JsonObject]:
        """The stored event log (each event's to_dict, with "kind")."""
        return self.store.events()

    def _on_world(self, event: WorldEvent) -> None:
        self._emit(WorldState(self.id, world=event.world, container=event.container, state=event.kind,
                              command=event.command, text=event.text, exit_code=event.exit_code,
                              image=event.image, node=event.node))

    def _on_image(self, message: str) -> None:
        # Called from a sandbox worker thread while an image builds.
        self._call(lambda: self._emit(ImageProgress(self.id, message=message)))

    # -- control (thread-safe) -------------------------------------------------------------------
    def _call(self, fn: Callable[[], None]) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                current = asyncio.get_running_loop()
            except RuntimeError:
                current = None
            if current is loop:
                fn()
            else:
                loop.call_soon_threadsafe(fn)
        else:
            fn()

    def step_next(self) -> None:
        """Let the loop go on to the next pause point (turns step mode on)."""
        self._call(self.control.step_next)

    def run_to_end(self) -> None:
        """Leave step mode and release every waiting task."""
        self._call(self.control.run_to_end)

    def pause(self) -> None:
        """Hold every task at its next pause point (before a round, after a verdict)."""
        self._call(self.control.pause)

    def stop(self) -> None:
        """Stop now: work in flight is cancelled, containers removed; `run()` resumes later."""
        self._stop_requested = True

        def cancel() -> None:
            if self._main is not None and not self._main.done():
                self._main.cancel()
        self._call(cancel)

    def raise_limits(self, **limits: Any) -> None:
        """Change limits: usd, tokens, seconds, test_runs (None = unlimited) and rounds."""
        for name in limits:
            if name not in LIMIT_NAMES:
                raise InputError("budget", name, f"unknown limit (limits: {', '.join(LIMIT_NAMES)})")
        rounds = limits.pop("rounds", None)

        def apply() -> None:
            if rounds is not None:
                self.config.rounds = int(rounds)
            if limits:
                self.budget.raise_limits(**limits)
            self.store.set_meta("config", self.config.to_dict())
        self._call(apply)

    def answer(self, request_id: str, decision: ApprovalDecision) -> bool:
        """The operator's decision on an approval. False if it is not pending now; the decision
        then answers the request when the engine makes it."""
        return self.approvals.answer(request_id, decision)

    def pending_approvals(self) -> builtins.list[ApprovalRequest]:
        return [request for _, request in self.approvals.pending()]

    # -- results ------------------------------------------------------------------------------
    def summary(self) -> SessionSummary:
        return build_summary(self.store)

    def write_summary(self, directory: Path | str | None = None) -> Path:
        target = Path(directory) if directory else self.directory
        target.mkdir(parents=True, exist_ok=True)
        path = target / "summary.json"
        path.write_text(json.dumps(self.summary().to_json(), indent=2, sort_keys=True, default=str))
        return path

    # -- running ------------------------------------------------------------------------------
    def _load_benchmark(self) -> Benchmark:
        benchmark = self.deps.benchmark
        if benchmark is None:
            from testjack_tui.benchmarks import load_benchmark

            benchmark = load_benchmark(self.config.benchmark)
        return benchmark

    def _make_roles(self, benchmark: Benchmark) -> RoleSet:
        roles = self.deps.roles
        if roles is None:
            factory = self.deps.roles_factory
            if factory is None:
                raise RuntimeError("the session was given neither roles nor a roles factory "
                                   "(testjack_tui.compose.session_deps() gives the agents')")
            roles = factory(self.config.agents, benchmark, self._app_config())
        return roles

    def _sandbox(self) -> SandboxBackend:
        factory: BackendFactory | None = self.deps.sandbox_factory
        if factory is not None:
            return factory(listener=self._on_world, session=f"tj-{self.id}")
        return make_backend(self.config.backend_name, listener=self._on_world, session=f"tj-{self.id}",
                            ray_address=self.config.ray_address, log=self._on_image)

    def _static_evidence(self, benchmark: Benchmark, selected: builtins.list[tuple[Task, builtins.list[Trial]]]
                         ) -> dict[str, JsonObject]:
        """Static detector evidence of every passing trial of the selected tasks (no containers),
        computed once per session: the model record and every task's sampler read it."""
        from .detectors import collect_static_evidence

        evidence: dict[str, JsonObject] = {}
        for task, _ in selected:
            for trial in benchmark.passing(task.id):
                try:
                    evidence[trial.id] = collect_static_evidence(task, trial).to_dict()
                except Exception as exc:  # noqa: BLE001 - evidence only orders the sampling
                    self._emit(Log(self.id, level="warning", message=f"static evidence for {trial.id} failed: {exc}"))
        return evidence

    def _record_corpus(self, benchmark: Benchmark, selected: builtins.list[tuple[Task, builtins.list[Trial]]]) -> None:
        wanted = set(self.config.trials or [])
        self.store.set_meta(CORPUS, corpus_meta({task.id: [t for t in benchmark.trials_of(task.id)
                                                           if not wanted or t.id in wanted]
                                                 for task, _ in selected}))
        # The ambiguity rule's population: every passing trial of each selected task.
        self.store.set_meta(POPULATION, {task.id: {t.id: t.model for t in benchmark.passing(task.id)}
                                         for task, _ in selected})
        self.store.set_meta("benchmark_name", benchmark.name)

    async def run(self) -> SessionState:
        """Run until finished, paused (budget), stopped or failed; returns that state."""
        if self._running:
            raise RuntimeError(f"session {self.id} is already running")
        owner = self.store.get_meta("pid")
        if owner and owner != os.getpid() and self.store.get_meta("state") == SessionState.RUNNING \
                and _pid_alive(int(owner), self.store.get_meta("pid_start", "")):
            raise InputError(db_path(self.id), "state", f"session {self.id} is running in process {owner}")
        self._running = True
        self._loop = asyncio.get_running_loop()
        self._stop_requested = False
        self._paused_for_budget = False
        resumed = self.store.get_meta("state") not in (None, SessionState.CREATED)
        self.store.set_meta("pid", os.getpid())
        self.store.set_meta("pid_start", _pid_start(os.getpid()))
        self._set_state(SessionState.RUNNING)
        self.budget.start_clock()
        state, reason = SessionState.FAILED, ""
        try:
            state, reason = await self._run(resumed)
        except BudgetExceeded as exc:
            state, reason = SessionState.PAUSED, f"budget: {exc.limit}: {exc}"
            self._announce_budget_pause(exc)
        except asyncio.CancelledError:
            if not self._stop_requested:
                self.budget.stop_clock()
                self._set_state(SessionState.STOPPED, "cancelled")
                self._running = False
                raise
            state, reason = SessionState.STOPPED, "stopped by the operator"
        except InputError as exc:
            state, reason = SessionState.FAILED, str(exc)
            self._emit(Log(self.id, level="error", message=str(exc)))
        except Exception as exc:  # noqa: BLE001 - reported, the session stays resumable
            state, reason = SessionState.FAILED, f"{type(exc).__name__}: {exc}"
            self._emit(Log(self.id, level="error", message=reason))
        finally:
            self.budget.stop_clock()
            self._running = False
            self._main = None
        self._set_state(state, reason)
        self.budget.announce()
        self._emit(SessionFinished(self.id, state=state, reason=reason))
        try:
            self.write_summary()
        except Exception:  # noqa: BLE001
            pass
        return state

    async def _run(self, resumed: bool) -> tuple[SessionState, str]:
        cfg = self.config
        benchmark = self._load_benchmark()
        selected = select_trials(cfg, benchmark)
        self._record_corpus(benchmark, selected)
        roles = self._make_roles(benchmark)
        # An operator reviewer has no label of its own: its verdicts always go to the operator.
        defers = getattr(roles.reviewer, "defers_to_approver", False)
        # Under --auto-approve, QUESTIONABLE / HUMAN_REVIEW verdicts still go to the operator's
        # queue when someone answers it (the TUI, a terminal); otherwise they are kept as queued.
        queue = self.approvals if self.operator_present else None
        approver = self.deps.approver or (
            AutoApprover(queue) if cfg.auto_approve and not defers else self.approvals)
        self._emit(SessionStarted(self.id, benchmark=cfg.benchmark, mode=cfg.mode,
                                  tasks=tuple(t.id for t, _ in selected),
                                  agent=getattr(roles.audit, "label", str(cfg.agents.get("audit")))))
        if resumed:
            self._emit(Log(self.id, level="info", message=f"resuming session {self.id}: stored steps are replayed"))
        self.budget.announce()
        from .samplers import model_record  # the sampler's module: only when a session runs

        # Per model, over every selected task, so it does not depend on which task finishes first.
        static = self._static_evidence(benchmark, selected) if cfg.mode == Mode.LIGHTWEIGHT else {}
        model_of = {t.id: t.model for task, _ in selected for t in benchmark.passing(task.id)}
        async with self._sandbox() as backend:
            # One budgeted backend for everyone who runs trial code (engine/budgeted.py).
            sb = BudgetedBackend(backend, self.budget)
            env = EngineEnv(session_id=self.id, cfg=cfg, store=self.store, budget=self.budget,
                            runner=TestRunner(sb, self.store, self._emit, self.id,
                                              lender=run_reuse.lender_store(self.config.reuse_runs, self.id,
                                                                            self.config.benchmark)),
                            roles=roles, approver=approver, control=self.control, emit=self._emit,
                            sandbox=sb, hooks=self.deps.hooks, tools_factory=self.deps.tools_factory,
                            operator_approver=self.approvals if self.deps.operator else None,
                            static_evidence=static, model_record=model_record(static, model_of),
                            samplers=self.deps.samplers)
            # The bound is on work, not on a task's lifetime: a task waiting for a person
            # (a decision, a step gate, a pause) gives its slot back (engine/slots.py).
            def queued(ahead: dict[str, int]) -> None:
                for task_id, n in ahead.items():
                    set_task_state(env, task_id, TaskLoopState.QUEUED, ahead=n)

            def returning(task_id: str, ahead: int | None) -> None:
                self._emit(SlotWait(self.id, task_id=task_id, state="granted" if ahead is None else "waiting",
                                    ahead=ahead or 0))

            slots = WorkSlots(cfg.parallel_tasks or os.cpu_count() or 1, on_queue=queued,
                              on_waits=self.budget.set_waiting, on_return=returning)
            self.slots = slots

            async def one(task: Task, trials: builtins.list[Trial]) -> SessionState:
                async with slots.hold(task.id):
                    if self._paused_for_budget:  # do not start new tasks after a limit was reached
                        set_task_state(env, task.id, TaskLoopState.PAUSED, "not started: " + self._budget_reason)
                        return SessionState.PAUSED
                    try:
                        # rho is over every passing trial of the task, selected or not
                        await audit_task(env, task, trials, population=benchmark.passing(task.id))
                        return SessionState.FINISHED
                    except BudgetExceeded as exc:
                        set_task_state(env, task.id, TaskLoopState.PAUSED, str(exc))
                        self._announce_budget_pause(exc)
                        return SessionState.PAUSED
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - one task's failure is reported
                        message = f"{task.id}: {type(exc).__name__}: {exc}"
                        set_task_state(env, task.id, TaskLoopState.FAILED, message)
                        self._emit(Log(self.id, level="error", message=message))
                        return SessionState.FAILED

            self._main = asyncio.gather(*(one(task, trials) for task, trials in selected))
            if self._stop_requested:
                self._main.cancel()
            results = await self._main
        if SessionState.PAUSED in results:
            return SessionState.PAUSED, self._budget_reason
        if SessionState.FAILED in results:
            failed = [t.id for (t, _), r in zip(selected, results) if r == SessionState.FAILED]
            return SessionState.FAILED, "tasks failed: " + ", ".join(failed)
        return SessionState.FINISHED, ""

    def _announce_budget_pause(self, exc: BudgetExceeded) -> None:
        if self._paused_for_budget:
            return
        self._paused_for_budget = True
        self._budget_reason = f"budget: {exc.limit}: {exc}"
        self._emit(Paused(self.id, reason=f"budget: {exc.limit}", waiting_for="raised limit"))

    def delete(self) -> None:
        """Remove the session's folder (database and transcripts)."""
        self.store.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def effective_state(meta: JsonObject) -> SessionState:
    """The stored state (meta's JSON), `interrupted` when it says running and its process is gone."""
    state = SessionState(meta.get("state") or SessionState.CREATED)
    if state == SessionState.RUNNING:
        pid = meta.get("pid")
        if not pid or not _pid_alive(int(pid), meta.get("pid_start", "")):
            return SessionState.INTERRUPTED
    return state


def list_sessions() -> list[JsonObject]:
    """Every stored session, newest first: id, state, benchmark, mode, counts and usage."""
    out = []
    for folder in sorted(paths.sessions_dir().iterdir(), reverse=True):
        path = folder / "session.db"
        if not path.is_file():
            continue
        try:
            store = SessionStore(path)
            meta = store.all_meta()
            config = meta.get("config") or {}
            counts = store.counts()
            totals = store.ledger_totals()
            task_states = store.task_states()
            out.append({
                "id": folder.name, "state": effective_state(meta), "reason": meta.get("state_reason", ""),
                "benchmark": config.get("benchmark"), "mode": config.get("mode"),
                "seed": config.get("seed"), "label": config.get("label", ""),
                "created": meta.get("created"), "updated": meta.get("updated"),
                "tasks": len(read_corpus(meta, path).tasks), "refuted": counts["refuted"],
                # tasks not started yet (waiting for a work slot; a stopped session keeps them)
                "queued": sum(1 for t in task_states.values() if t.state == TaskLoopState.QUEUED),
                "witnesses": counts["witnesses"], "rounds": counts["rounds"],
                "decisions": counts["decisions"], "overrules": counts["overrules"],
                "usd": round(totals.usd, 6), "unpriced": list(meta.get(UNPRICED) or []),
                "test_runs": store.runs_counted(), "path": str(folder),
            })
            store.close()
        except Exception as exc:  # noqa: BLE001 - one broken session must not hide the others
            out.append({"id": folder.name, "state": SessionState.UNREADABLE, "reason": str(exc), "path": str(folder)})
    return out


def state_text(info: JsonObject) -> str:
    """A listed session's state as `sessions` and the Benchmarks screen show it: with the tasks
    that have not started yet ("running (3 queued)")."""
    state = str(info.get("state") or "?")
    queued = info.get("queued") or 0
    return f"{state} ({queued} queued)" if queued and state != "finished" else state


def resume(session_id: str, deps: SessionDeps, **limits: Any) -> AuditSession:
    """Open a stored session for another `run()`, with raised limits if given."""
    return AuditSession.resume(session_id, deps, **limits)
