"""What the Audit screen shows, folded from the engine's event stream.

Pure Python (no Textual): widgets read from a `LiveSession` and the tests check it directly.
Events are applied in order; each application marks the sections it changed as dirty, so the
screen redraws only those, once per flush tick, however many events arrived in between.
"""
from __future__ import annotations

import dataclasses
import re
import time
from collections import OrderedDict, deque
from typing import Any

from testjack_tui.engine import events as ev
from testjack_tui.tui.live_views import (AGENT_ENTRIES, AgentEntry, CandidateView, TrialView, WorldView, short_id,
                                         short_world)

# Sections a widget can watch.
TRIALS, WORLDS, OUTPUT, AGENT, CANDIDATES, APPROVALS, BUDGET, STATUS, LOG, MATRIX = (
    "trials", "worlds", "output", "agent", "candidates", "approvals", "budget", "status", "log", "matrix")


class LiveSession:
    """The folded state of one running (or replayed) session."""

    def __init__(self, session_id: str = "", trials: list[TrialView] | None = None):
        self.session_id = session_id
        self.benchmark = ""
        self.mode = ""
        self.agent = ""
        self.tasks: list[str] = []
        self.state = "starting"
        self.reason = ""
        self.waiting_for = ""
        self.current_task = ""
        self.round = 0
        self.round_trial = ""
        self.rounds_done = 0
        self.trials: dict[tuple[str, str], TrialView] = {}
        for t in trials or []:
            self.trials[(t.task_id, t.trial_id)] = t
        self.checks: dict[str, ev.TaskChecked] = {}
        self.worlds: OrderedDict[str, WorldView] = OrderedDict()
        self.last_active_world = ""  # the world that produced output or started a command last
        self.agent_stream: deque[AgentEntry] = deque(maxlen=AGENT_ENTRIES)
        self._tool_index: dict[str, AgentEntry] = {}
        self.agent_total = 0  # entries ever added (a viewer uses it to append only new ones)
        self.model_waits: dict[tuple[str, str, str | None], str] = {}  # (role, task, trial) -> "waiting on m (45s)"
        self.candidates: OrderedDict[str, CandidateView] = OrderedDict()
        self.pending: OrderedDict[str, ev.ApprovalRequested] = OrderedDict()
        # Keyed, so replaying stored history and then running again never counts twice.
        self.witnesses: dict[str, ev.WitnessConfirmed] = {}
        self.refutations: dict[tuple[str, str], ev.TrialRefuted] = {}
        self.rounds_finished: set[tuple[str, int]] = set()
        self.task_round: dict[str, tuple[int, str]] = {}  # task -> (round, trial) being audited
        self.task_paused: dict[str, list[str]] = {}  # task -> the gates it is held at (Paused/Released)
        # Every held gate, oldest first: the first is the one `n` releases (engine/control.py).
        self.gates: list[tuple[str, str]] = []
        self.task_states: dict[str, ev.TaskState] = {}  # queued / checking / auditing / ...
        # Tasks back from a wait for a person, queued for a work slot: task -> tasks ahead (SlotWait).
        self.slot_waits: dict[str, int] = {}
        # The replay matrix: (task, witness, trial) -> (status, run key).
        self.replays: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        self.budget: ev.BudgetChanged | None = None
        # The session this one takes test runs from (config reuse_runs), and the runs taken so far.
        self.lender = ""
        self.lent_runs = 0
        self.log: deque[tuple[str, str]] = deque(maxlen=200)
        # When each log entry happened (the event's own time: a reopened session's history
        # keeps its times instead of all showing the moment it was reopened).
        self.log_times: deque[float] = deque(maxlen=200)
        self._event_at: float | None = None
        self.log_total = 0
        self.dirty: set[str] = set()
        self.events_seen = 0

    # -- reading -----------------------------------------------------------------------------
    def trials_of(self, task_id: str | None = None) -> list[TrialView]:
        task = task_id or self.current_task
        rows = [t for (tk, _), t in self.trials.items() if not task or tk == task]
        return rows

    def counts(self, task_id: str | None = None) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.trials_of(task_id):
            out[t.state] = out.get(t.state, 0) + 1
        return out

    def take_dirty(self) -> set[str]:
        dirty, self.dirty = self.dirty, set()
        return dirty

    @property
    def running(self) -> bool:
        return self.state in ("starting", "running")

    @property
    def working(self) -> bool:
        """Tasks may be at work: running, or held at a step gate or pause (one task waiting
        there does not stop the others; a budget pause does)."""
        return self.running or (self.state == "paused" and self.reason in ("step", "operator"))

    # -- folding -----------------------------------------------------------------------------
    def apply(self, event: Any) -> None:
        self.events_seen += 1
        kind = getattr(event, "kind", "")
        handler = getattr(self, "_on_" + kind, None)
        if handler is not None:  # kinds we do not know are ignored (events.py says so)
            at = getattr(event, "at", None)
            self._event_at = at if isinstance(at, (int, float)) else None
            try:
                handler(event)
            finally:
                self._event_at = None

    def apply_all(self, events: list[Any]) -> None:
        for event in events:
            self.apply(event)

    def _trial(self, task_id: str, trial_id: str) -> TrialView:
        key = (task_id, trial_id)
        if key not in self.trials:
            self.trials[key] = TrialView(task_id, trial_id)
        return self.trials[key]

    def _candidate(self, task_id: str, trial_id: str | None, candidate_id: str) -> CandidateView:
        if candidate_id not in self.candidates:
            self.candidates[candidate_id] = CandidateView(candidate_id, task_id, trial_id)
        return self.candidates[candidate_id]

    def _on_session_started(self, e: ev.SessionStarted) -> None:
        self.session_id = e.session_id or self.session_id
        self.benchmark, self.mode, self.agent = e.benchmark, e.mode, e.agent
        self.tasks = list(e.tasks)
        self.state, self.reason, self.waiting_for = "running", "", ""
        self.task_paused.clear()
        self.gates.clear()
        if self.tasks and not self.current_task:
            self.current_task = self.tasks[0]
        self.dirty |= {STATUS, TRIALS}

    def _on_session_finished(self, e: ev.SessionFinished) -> None:
        self.state, self.reason = e.state, e.reason
        self.waiting_for = ""
        self.slot_waits.clear()  # a stopped session's queue is gone (no "granted" comes)
        for world in self.worlds.values():
            world.flush_partial()
        self.dirty |= {STATUS, WORLDS, TRIALS}  # TRIALS: the "▶ current round" marker goes

    def _on_paused(self, e: ev.Paused) -> None:
        self.add_log("info", f"paused ({e.reason})" + (f": waiting for {e.waiting_for}" if e.waiting_for else ""))
        self.state, self.reason, self.waiting_for = "paused", e.reason, e.waiting_for
        if e.task_id:  # a budget pause holds the whole session; the status line says so
            self.task_paused.setdefault(e.task_id, []).append(e.waiting_for)
            self.gates.append((e.task_id, e.waiting_for))
        self.dirty.add(STATUS)

    def _on_released(self, e: ev.Released) -> None:
        held = self.task_paused.get(e.task_id, [])
        if e.waiting_for in held:
            held.remove(e.waiting_for)
        if not held:
            self.task_paused.pop(e.task_id, None)
        if (e.task_id, e.waiting_for) in self.gates:
            self.gates.remove((e.task_id, e.waiting_for))
        if not self.task_paused and self.state == "paused" and self.reason in ("step", "operator"):
            self.state, self.reason, self.waiting_for = "running", "", ""
        self.dirty.add(STATUS)

    def limits_raised(self) -> None:
        """The operator raised a limit: a budget pause no longer holds (the run resumes)."""
        if self.reason.startswith("budget"):
            self.reason, self.waiting_for = "limits raised", ""
            self.dirty.add(STATUS)

    @property
    def several_tasks(self) -> bool:
        """The session spans more than one task: a world, a log line, names its task."""
        tasks = set(self.tasks) | {task for task, _ in self.trials}
        return len(tasks) > 1

    def world_label(self, name: str) -> str:
        return short_world(name, with_task=self.several_tasks)

    def task_line(self, task_id: str) -> str:
        """What one task is doing, for the status line."""
        held = self.task_paused.get(task_id)
        if held:
            more = f" (+{len(held) - 1} more)" if len(held) > 1 else ""
            first = self.gates[0] if self.gates else None
            if first is None or first[0] == task_id:
                return f"waits: {first[1] if first else held[0]}{more} — n releases it"
            return f"waits: {held[0]}{more} (n releases {first[0]} first)"
        if any(r.task_id == task_id for r in self.pending.values()):
            return "waits for your decision"
        if task_id in self.slot_waits and self.working:
            ahead = self.slot_waits[task_id]
            return f"waiting for a work slot ({ahead} ahead)" if ahead else "waiting for a work slot (next)"
        standing = self.task_states.get(task_id)
        if standing is not None and standing.state == "queued":
            return f"queued ({standing.ahead} ahead)" if standing.ahead else "queued (next)"
        if standing is not None and standing.state == "checking" and self.working:
            return "checking the task (T0)"
        if standing is not None and standing.state == "finished":
            return "done"
        check = self.checks.get(task_id)
        if check is not None and not check.well_formed:
            return "not well-formed, excluded"
        if task_id in self.task_round:
            number, trial = self.task_round[task_id]
            return f"round {number} → {short_id(trial, task_id)}"
        if not self.working:
            return ""
        analysis = sum(1 for c in self.candidates.values() if c.task_id == task_id and c.trial_id is None)
        if analysis:
            return f"task analysis: {analysis} candidate(s)"
        if task_id in self.checks:
            return "task analysis (solution-blind)"
        return "checking the task (T0 on null, reference and each trial)"

    def _on_task_state(self, e: ev.TaskState) -> None:
        self.task_states[e.task_id] = e
        # Rows of a task not started say so; its T0 check, then the loop, give them their own.
        for trial in self.trials_of(e.task_id):
            if trial.state not in ("pending", "queued", "checking"):
                continue
            if e.state == "queued":
                trial.state, trial.by = "queued", (f"{e.ahead} task{'s' if e.ahead != 1 else ''} ahead"
                                                   if e.ahead else "next to start")
            elif e.state == "checking":
                trial.state, trial.by = "checking", ""
            elif e.state == "excluded":
                trial.state, trial.by = "excluded", e.reason
            else:
                trial.state, trial.by = "pending", ""
        if self.state == "starting" and e.state != "queued":
            self.state = "running"
        self.dirty |= {STATUS, TRIALS}

    def _on_slot_wait(self, e: ev.SlotWait) -> None:
        if e.state == "waiting":
            self.slot_waits[e.task_id] = e.ahead
        else:
            self.slot_waits.pop(e.task_id, None)
        self.dirty.add(STATUS)

    def _on_task_checked(self, e: ev.TaskChecked) -> None:
        self.checks[e.task_id] = e
        if not self.current_task:
            self.current_task = e.task_id
        if not e.well_formed:
            self.add_log("warning", f"{e.task_id} is not well-formed: " + "; ".join(e.problems))
        self.dirty |= {STATUS, TRIALS}

    def _on_trial_state(self, e: ev.TrialState) -> None:
        trial = self._trial(e.task_id, e.trial_id)
        trial.state, trial.by = e.state, e.by
        if e.state == "audit_failed":  # engine/failure_kinds.AUDIT_FAILED: unaudited, never sound
            self.add_log("error", f"{e.task_id}: trial {e.trial_id} audit failed: {e.by}")
        if self.state == "starting":
            self.state = "running"
        self.dirty.add(TRIALS)

    def _on_round_started(self, e: ev.RoundStarted) -> None:
        self.add_log("info", f"{e.task_id}: round {e.round} audits {e.trial_id} ({e.active} active)")
        self.current_task, self.round, self.round_trial = e.task_id, e.round, e.trial_id
        self.task_round[e.task_id] = (e.round, e.trial_id)
        if self.state in ("starting", "paused"):
            self.state, self.reason, self.waiting_for = "running", "", ""
        self.dirty |= {STATUS, TRIALS}

    def _on_round_finished(self, e: ev.RoundFinished) -> None:
        self.add_log("info", f"{e.task_id}: round {e.round} done: {len(e.witnesses)} witness(es), "
                             f"{len(e.refuted)} trial(s) refuted")
        self.rounds_finished.add((e.task_id, e.round))
        self.rounds_done = len(self.rounds_finished)
        self.dirty.add(STATUS)

    def _on_test_run_finished_log(self, e: ev.TestRunFinished) -> None:
        self.add_log("info", f"tests on {self.world_label(e.world)}: {e.outcome()}")
        if e.lent_by:
            self.lent_runs += 1
            self.dirty.add(STATUS)

    def _on_witness_replayed(self, e: ev.WitnessReplayed) -> None:
        self.replays[(e.task_id, e.witness_id, e.trial_id)] = (e.status, e.run_key)
        self.dirty.add(MATRIX)

    def _on_world_state(self, e: ev.WorldState) -> None:
        name = e.world or next((w.name for w in self.worlds.values()
                                if e.container and w.container == e.container), "")
        if not name:
            # A container the sandbox no longer knew by name (removed twice, swept) and this
            # screen never saw: a row naming nothing would tell the operator nothing.
            return
        world = self.worlds.get(name)
        if world is None:
            world = self.worlds[name] = WorldView(name)
        if e.container:
            world.container = e.container
        if e.image:
            world.image = e.image
        if e.node:
            world.node = e.node
        if e.state in ("output", "running"):
            self.last_active_world = name
        if e.state == "output":
            world.add_output(e.text)
            self.dirty.add(OUTPUT)  # output alone does not redraw the worlds table
            if world.state in ("", "created"):
                world.state = "running"
                self.dirty.add(WORLDS)
            return
        else:
            if e.state in ("created", "exited", "timeout", "removed") and e.state != world.state:
                exit_text = f" (exit {e.exit_code})" if e.state == "exited" and e.exit_code else ""
                self.add_log("warning" if e.state == "timeout" else "info",
                             f"world {self.world_label(name)}: {e.state}{exit_text}")
            world.state = e.state
            if e.state == "running":
                world.command = e.command or world.command
                world.exit_code = None
            elif e.state in ("exited", "timeout"):
                world.exit_code = e.exit_code
                world.flush_partial()
            if e.text:
                world.add_output(e.text)
        self.dirty |= {WORLDS, OUTPUT}

    def _add_agent(self, entry: AgentEntry) -> None:
        self.agent_stream.append(entry)
        self.agent_total += 1

    def _on_agent_output(self, e: ev.AgentOutput) -> None:
        last = self.agent_stream[-1] if self.agent_stream else None
        if last is not None and last.kind == "text" and last.role == e.role and last.trial_id == e.trial_id:
            last.text += e.text  # streamed chunks of one message join up
            last.version += 1
        else:
            self._add_agent(AgentEntry(e.role, e.task_id, e.trial_id, "text", text=e.text))
        self.dirty.add(AGENT)

    def _on_agent_progress(self, e: ev.AgentProgress) -> None:
        key = (e.role, e.task_id, e.trial_id)
        if e.state in ("waiting", "streaming"):
            self.model_waits[key] = (f"{e.role}: waiting on {e.model} ({e.elapsed:.0f}s)" if e.state == "waiting"
                                     else f"{e.role}: {e.model} answering ({e.received} chars, {e.elapsed:.0f}s)")
        else:
            self.model_waits.pop(key, None)
        if e.state == "retrying":
            self.add_log("warning", f"{e.role} {e.task_id}/{e.trial_id or 'analysis'}: attempt {e.attempt} of "
                                    f"{e.max_attempts} failed: {e.reason}; retrying in {e.delay:.0f}s")
        elif e.state == "failed":
            self.add_log("error", f"{e.role} {e.task_id}/{e.trial_id or 'analysis'}: {e.reason}")
        self.dirty.add(STATUS)

    def _on_tool_call(self, e: ev.ToolCall) -> None:
        entry = self._tool_index.get(e.call_id) if e.call_id else None
        if entry is None:
            entry = AgentEntry(e.role, e.task_id, e.trial_id, "tool", call_id=e.call_id,
                               name=e.name, arguments=e.arguments)
            self._add_agent(entry)
            if e.call_id:
                self._tool_index[e.call_id] = entry
                if len(self._tool_index) > AGENT_ENTRIES * 2:
                    self._tool_index.pop(next(iter(self._tool_index)))
        if e.result:
            entry.result = e.result
        entry.finished = entry.finished or e.finished
        entry.version += 1
        self.dirty.add(AGENT)

    def _on_test_run_finished(self, e: ev.TestRunFinished) -> None:
        self._on_test_run_finished_log(e)
        if e.candidate_id and e.candidate_id in self.candidates:
            self.candidates[e.candidate_id].runs.append((e.world, e.outcome()))
            self.dirty.add(CANDIDATES)

    def _on_candidate_proposed(self, e: ev.CandidateProposed) -> None:
        self.add_log("info", f"{e.task_id}: {e.author} proposed {short_id(e.candidate_id, e.task_id)} "
                             f"({e.path}) for {e.trial_id or 'the task analysis'}")
        c = self._candidate(e.task_id, e.trial_id, e.candidate_id)
        c.path, c.source, c.requirement = e.path, e.source, e.requirement
        c.author, c.attempt = e.author, e.attempt
        self.dirty.add(CANDIDATES)

    def _on_candidate_validated(self, e: ev.CandidateValidated) -> None:
        c = self._candidate(e.task_id, e.trial_id, e.candidate_id)
        c.reference, c.model, c.outcome = e.reference, e.model, e.outcome
        c.reference_of, c.model_of = e.reference_of, e.model_of
        if e.outcome == "fails_reference" and e.cause:  # why the runner could not run it, one line
            self.add_log("warning", f"{e.task_id}: {short_id(e.candidate_id, e.task_id)} fails on the "
                                    f"reference ({e.reference}): {e.cause}")
        self.dirty.add(CANDIDATES)

    def _on_candidate_dropped(self, e: ev.CandidateDropped) -> None:
        self.add_log("info", f"{e.task_id}: {short_id(e.candidate_id, e.task_id)} dropped: {e.reason}")
        self._candidate(e.task_id, e.trial_id, e.candidate_id).dropped = e.reason or "dropped"
        self.dirty.add(CANDIDATES)

    def _on_reviewer_verdict_event(self, e: ev.ReviewerVerdictEvent) -> None:
        self.add_log("info", f"{e.task_id}: reviewer: {short_id(e.candidate_id, e.task_id)} is {e.label}")
        c = self._candidate(e.task_id, e.trial_id, e.candidate_id)
        c.label, c.reason, c.explicit = e.label, e.reason, e.explicit
        c.requirement = c.requirement or e.requirement
        self.dirty.add(CANDIDATES)

    def _on_approval_requested(self, e: ev.ApprovalRequested) -> None:
        self.pending[e.request_id] = e
        c = self._candidate(e.task_id, e.trial_id, e.candidate_id)
        c.request_id, c.decision = e.request_id, "pending"
        c.label = c.label or e.label
        c.reason = c.reason or e.reason
        self.dirty |= {APPROVALS, CANDIDATES}

    def _on_approval_answered(self, e: ev.ApprovalAnswered) -> None:
        request = self.pending.pop(e.request_id, None)
        c = self.candidates.get(e.candidate_id)
        if e.by == "operator":
            self.add_log("info", f"operator: {e.decision or 'decided'} {e.candidate_id}: "
                                 f"{'counts' if e.counts else 'does not count'}" + (f" — {e.note}" if e.note else ""))
        if c is not None:
            c.counts = e.counts
            reviewer_label = e.reviewer_label or (request.label if request is not None else c.label)
            # The engine says which decision it was (approval.decision_kind); events stored by
            # an older version do not, and are read the same way.
            if e.decision:
                c.decision = e.decision
            elif e.by == "operator":
                c.decision = "approved" if e.counts == (reviewer_label == "valid") else "overruled"
            elif e.by == "queued":
                c.decision = "questionable-awaiting"
            else:
                c.decision = "auto"
            c.reviewer_label = reviewer_label
            c.note, c.decided_at = e.note, e.at
            c.operator = dict(getattr(e, "operator", None) or {})
            c.label = e.label or c.label
        self.dirty |= {APPROVALS, CANDIDATES, STATUS}

    def _on_witness_confirmed(self, e: ev.WitnessConfirmed) -> None:
        if e.witness_id not in self.witnesses:
            self.add_log("info", f"{e.task_id}: witness {short_id(e.witness_id, e.task_id)} confirmed: {e.requirement}")
        self.witnesses[e.witness_id] = e
        c = self.candidates.get(e.witness_id)
        if c is not None:
            c.witness = True
        self.dirty |= {CANDIDATES, STATUS, MATRIX}

    def _on_trial_refuted(self, e: ev.TrialRefuted) -> None:
        if (e.trial_id, e.witness_id) not in self.refutations:
            self.add_log("warning", f"{e.task_id}: {e.trial_id} REFUTED by {short_id(e.witness_id, e.task_id)} ({e.status})")
        self.refutations[(e.trial_id, e.witness_id)] = e
        trial = self._trial(e.task_id, e.trial_id)
        trial.state, trial.by = "refuted", e.witness_id
        self.dirty |= {TRIALS, STATUS}

    @property
    def refuted_trials(self) -> int:
        return len({trial for trial, _ in self.refutations})

    def _on_refutation_withdrawn(self, e: ev.RefutationWithdrawn) -> None:
        self.refutations.pop((e.trial_id, e.witness_id), None)
        trial = self._trial(e.task_id, e.trial_id)
        if trial.by == e.witness_id:
            trial.state, trial.by = "ambiguous", f"{e.witness_id} (ρ={e.rho:.2f})"
        self.dirty |= {TRIALS, STATUS}

    def _on_budget_changed(self, e: ev.BudgetChanged) -> None:
        self.budget = e
        self.dirty.add(BUDGET)

    def _on_log(self, e: ev.Log) -> None:
        self.add_log(e.level, e.message)

    def _on_image_progress(self, e: ev.ImageProgress) -> None:
        self.add_log("info", e.message)

    def add_log(self, level: str, message: str) -> None:
        self.log.append((level, message))
        self.log_times.append(self._event_at if self._event_at is not None else time.time())
        self.log_total += 1
        self.dirty.add(LOG)


def gauge_fraction(used: float, limit: float | None) -> float | None:
    """How much of a limit is used (None when unlimited)."""
    if not limit:
        return None
    return max(0.0, used / limit)


def gauge_level(fraction: float | None) -> str:
    """Colour class of a budget gauge: red near the limit, amber past two thirds."""
    if fraction is None:
        return "unlimited"
    if fraction >= 0.9:
        return "danger"
    if fraction >= 0.66:
        return "warning"
    return "ok"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# kind (snake case of the class name, as Event.kind computes it) → event class
EVENT_CLASSES: dict[str, type] = {
    _snake(value.__name__): value for value in vars(ev).values()
    if isinstance(value, type) and issubclass(value, ev.Event) and value is not ev.Event}


def event_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild an event from its stored dict (`Event.to_dict`); None for unknown kinds."""
    cls = EVENT_CLASSES.get(str(data.get("kind", "")))
    if cls is None:
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in names}
    try:
        return cls(**values)
    except TypeError:
        return None
