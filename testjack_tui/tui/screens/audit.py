"""Screen 3: the live session — trials, worlds, agents, candidates, approvals, budget, stepper.

The engine runs on the app's event loop in an async worker (`session.run()`); its events land
in an EventInbox and are folded into a LiveSession every FLUSH seconds, and only the parts that
changed are redrawn. The operator's keys call the session's control methods; approvals are
answered through `session.answer`, so a pending decision blocks only the work that needs it.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Header, Input, Label, RichLog, Static, TextArea
from textual.worker import Worker, WorkerState

from testjack_tui.engine.budget import usd_text
from testjack_tui.tui import live_state as ls
from testjack_tui.tui.guard import guarded
from testjack_tui.tui.inbox import EventInbox
from testjack_tui.tui.logs import log_exception
from testjack_tui.tui.text import cell, clean, untrusted
from testjack_tui.tui.widgets.agent_stream import AgentStream
from testjack_tui.tui.widgets.budget import BudgetGauges
from testjack_tui.tui.widgets.candidates import CandidatesPanel
from testjack_tui.tui.widgets.editor import OperatorEditor
from testjack_tui.tui.widgets.matrix import ReplayMatrix
from testjack_tui.tui.widgets.panes import LightTabs, Pane
from testjack_tui.tui.widgets.requirements import RequirementsPanel
from testjack_tui.tui.widgets.trials import STATE_TEXT as TRIAL_STATE_TEXT, TrialsTable
from testjack_tui.tui.widgets.worlds import WorldsPanel
from testjack_tui.tui.widgets.footer import QuietFooter

TAB_TITLES = {"trials-tab": ("Trials", "F2"), "candidates-tab": ("Candidates", "F3"), "worlds-tab": ("Worlds", "F4"),
              "agent-tab": ("Agent", "F5"), "editor-tab": ("Editor", "F6"), "log-tab": ("Log", "F7"),
              "matrix-tab": ("Matrix", "F8"), "requirements-tab": ("Reqs", "F9")}
# The widget each tab's key focuses (the keys of that tab then work at once).
TAB_FOCUS = {"candidates-tab": "#candidate-table", "worlds-tab": "#world-table", "agent-tab": "#agent-stream",
             "editor-tab": "#editor-source", "log-tab": "#event-log", "trials-tab": "#trials-table-narrow",
             "matrix-tab": "#matrix-table", "requirements-tab": "#requirements-table"}
FLUSH = 0.1  # seconds between folding engine events into the screen
CLOCK = 1.0  # seconds between two readings of the session's clock and usage (no event needed)
OUTPUT_FLUSH = 0.25  # world output redraws at most this often: each one re-lays out the log
STATUS_LINES = 4  # the status line's max-height (app.tcss)
LOG_STYLE = {"info": "", "warning": "yellow", "error": "bold red"}
# The panes that take the focus, innermost first: the one holding the focus carries FOCUSED_PANE
# (app.tcss draws it), so the operator sees where Down, enter and the letters go.
FOCUS_PANES = ("#trials-table", "#trials-table-narrow", "#candidate-table", "#candidate-detail", "#world-table",
               "#world-log", "#agent-stream", "#editor", "#event-log", "#matrix-table", "#requirements-table")
FOCUSED_PANE = "-focused-pane"
STATE_STYLE = {"running": "bold green", "paused": "bold yellow", "finished": "bold cyan",
               "stopped": "bold red", "failed": "bold red", "starting": "dim"}


def operator_agent(roles: Any) -> Any:
    """The operator's queue (an object with submit_candidate/finish) among the session's roles."""
    if roles is None:
        return None
    for name in ("audit", "task_analysis"):
        obj = getattr(roles, name, None)
        if obj is not None and hasattr(obj, "submit_candidate") and hasattr(obj, "finish"):
            return obj
    return None


def trial_views(benchmark: Any, tasks: list[str] | None, trials: list[str] | None) -> list[ls.TrialView]:
    """The trials the session will consider, so the table is full before the first event."""
    if benchmark is None:
        return []
    out = []
    for t in benchmark.trials:
        if not t.official_pass or (tasks and t.task_id not in tasks) or (trials and t.id not in trials):
            continue
        out.append(ls.TrialView(t.task_id, t.id, model=t.model, agent=t.agent))
    return out


def start_new_session(app: Any, kwargs: dict, benchmark: Any) -> None:
    from testjack_tui.compose import session_deps
    from testjack_tui.engine.session import AuditSession, BudgetLimits, SessionConfig
    from testjack_tui.services.sessions import SessionOptions, plan_session

    kwargs = dict(kwargs)
    kwargs["budget"] = BudgetLimits(**kwargs["budget"])
    # someone is at the TUI: asked about verdicts, step mode allowed; roles only for the operator
    plan = plan_session(SessionOptions(SessionConfig(**kwargs), interactive=True, headless=False,
                                       all_roles=False, benchmark=benchmark))
    session = AuditSession.create(plan.config, session_deps(benchmark=plan.benchmark, roles=plan.roles,
                                                            operator=True))
    chosen = plan.trial_ids()
    views = [v for v in trial_views(plan.benchmark, None, None) if v.trial_id in chosen]
    app.push_screen(AuditScreen(session, plan.benchmark, views, roles=plan.roles))


def stored_trial_views(store: Any) -> list[ls.TrialView]:
    """The session's passing trials with model and agent, from its own record (the corpus it
    stored when it started): a reopened session shows them before the benchmark is read."""
    views = []
    for task_id, trials in sorted((store.get_meta("corpus") or {}).items()):
        for t in trials:
            if t.get("official_pass"):
                views.append(ls.TrialView(task_id, t["id"], model=t.get("model") or "",
                                          agent=t.get("agent") or ""))
    return views


def open_existing_session(app: Any, session_id: str, info: dict | None = None) -> None:
    """A finished session opens on its report; anything else resumes on the Audit screen."""
    from testjack_tui.compose import session_deps
    from testjack_tui.engine.session import AuditSession

    session = AuditSession.open(session_id, session_deps(operator=True))
    if session.state == "finished":
        from testjack_tui.tui.screens.report import ReportScreen
        app.push_screen(ReportScreen(session))
        return
    from testjack_tui.benchmarks import load_benchmark

    # Loaded once here: the run needs it, and the prompt and diff views show it.
    benchmark = load_benchmark(session.config.benchmark)
    from testjack_tui.services.sessions import operator_roles

    roles = operator_roles(session.config.agents, benchmark)
    session = AuditSession.open(session_id, session_deps(benchmark=benchmark, roles=roles, operator=True))
    # A session created by `audit` and opened here has not stored its corpus yet: the
    # benchmark's passing trials fill the table, so queued tasks show their rows from the start.
    views = stored_trial_views(session.store) or trial_views(benchmark, session.config.tasks,
                                                             session.config.trials)
    app.push_screen(AuditScreen(session, benchmark, views, resumed=True, roles=roles))


class AuditScreen(Screen):
    # Textual repaints the whole screen when focus moves; the widgets that gain and lose focus
    # restyle (and repaint) themselves, so that second full frame after every tab key only
    # doubled the cost of the key press.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    HELP_TITLE = "Audit"
    HELP = ("The live session. Left: the trials and their standing (active, sampled, refuted by a "
            "witness, audited clean, ambiguous). Right: candidates (approve or overrule the reviewer "
            "there), the worlds and their output, the agents' stream, the operator's editor and the "
            "log, the replay matrix (F8: witnesses × trials) and the task's requirements (F9). "
            "v opens a pending decision with everything it rests on (runs, the reviewer's quote, a "
            "note), and ctrl+r does from anywhere, the editor included; i shows the prompt, d the "
            "selected trial's diff with ghost lines. In step mode "
            "each task waits before each round: n lets the one waiting longest go on (the status line "
            "names it), r runs to the end; a verdict asks for your decision at once. A task waiting "
            "for you holds no place: the others keep working, and tasks not started say queued. Raising a "
            "budget limit (l) resumes a session paused by its budget. [ and ] resize the trials pane.")
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [
        # Help (F1), approve and overrule stay out of the footer so it fits 80 columns: the status
        # line names a / o whenever a decision waits, and F1 works everywhere.
        Binding("f1", "app.help", "Help", show=False, id="audit.help"),
        Binding("n", "next_round", "Next", tooltip="let the engine go on to its next step (step mode)",
                id="audit.next"),
        Binding("r", "run_to_end", "Run all", tooltip="leave step mode and run to the end", id="audit.run"),
        Binding("p", "pause", "Pause", tooltip="hold every task at its next step", id="audit.pause"),
        Binding("s", "stop", "Stop", tooltip="stop the session (it stays resumable)", id="audit.stop"),
        Binding("v", "review", "Review", tooltip="open the pending decision: the candidate, its runs, the "
                "reviewer's quote of the prompt, the prompt and the diff", id="audit.review"),
        # The same from anywhere, the editor's fields included (v is a letter there): a resumed
        # operator session can bring back a decision and an audit waiting for tests at once.
        Binding("ctrl+r", "review_anywhere", "Review", show=False, priority=True,
                tooltip="open the pending decision, wherever the focus is", id="audit.review_anywhere"),
        Binding("a", "approve", "Approve", tooltip="accept the reviewer's verdict on the pending candidate "
                "(with the operator as reviewer: valid)", show=False,
                id="audit.approve"),
        Binding("o", "overrule", "Overrule", tooltip="reverse the reviewer's verdict on the pending candidate "
                "(with the operator as reviewer: invalid)", show=False,
                id="audit.overrule"),
        Binding("l", "limits", "Limits", tooltip="change budget limits; raising one resumes a paused session",
                id="audit.limits"),
        Binding("g", "report", "Report", tooltip="open the report of this session", id="audit.report"),
        Binding("i", "prompt", "Prompt", tooltip="the task prompt P of the selected trial or candidate",
                id="audit.prompt"),
        Binding("d", "diff", "Diff", tooltip="the diff of the selected trial (ghost lines marked)",
                id="audit.diff"),
        Binding("f2", "tab('trials-tab')", "Trials", priority=True, show=False, id="audit.tab_trials",
                tooltip="the trials: the left pane on a wide screen, a tab on a narrow one"),
        Binding("f3", "tab('candidates-tab')", "Candidates tab", priority=True, show=False,
                id="audit.tab_candidates"),
        Binding("f4", "tab('worlds-tab')", "Worlds tab", priority=True, show=False, id="audit.tab_worlds"),
        Binding("f5", "tab('agent-tab')", "Agent tab", priority=True, show=False, id="audit.tab_agent"),
        Binding("f6", "tab('editor-tab')", "Editor tab", priority=True, show=False, id="audit.tab_editor"),
        Binding("f7", "tab('log-tab')", "Log tab", priority=True, show=False, id="audit.tab_log"),
        Binding("f8", "tab('matrix-tab')", "Replay matrix tab", priority=True, show=False, id="audit.tab_matrix"),
        Binding("f9", "tab('requirements-tab')", "Requirements tab", priority=True, show=False,
                id="audit.tab_requirements"),
        Binding("ctrl+k", "validate", "Check", tooltip="check the test in the editor before sharing it",
                priority=True, id="audit.validate"),
        Binding("ctrl+e", "share", "Share", tooltip="hand the test in the editor to the engine", priority=True,
                id="audit.share"),
        Binding("ctrl+d", "operator_done", "Done", tooltip="no more tests for the audit that waits",
                priority=True, id="audit.operator_done"),
        Binding("left_square_bracket", "resize_left(-5)", "Narrower trials", show=False,
                tooltip="make the trials pane narrower ([) — ] widens it", id="audit.left_narrower"),
        Binding("right_square_bracket", "resize_left(5)", "Wider trials", show=False,
                tooltip="make the trials pane wider (]) — [ narrows it", id="audit.left_wider"),
        Binding("ctrl+o", "leave_editor", "Leave editor", priority=True,
                tooltip="move out of the editor's source to its Requirement field (Tab indents in the "
                "source; from the fields Tab and shift+Tab move as usual)", id="audit.leave_editor"),
        Binding("escape", "back", "Back", show=False, id="audit.back"),
    ]

    def __init__(self, session: Any, benchmark: Any = None, trials: list[ls.TrialView] | None = None,
                 resumed: bool = False, roles: Any = None):
        super().__init__()
        self.roles = roles
        self.session = session
        self.benchmark = benchmark
        self.resumed = resumed
        self.state = ls.LiveSession(session.id, trials)
        self.inbox = EventInbox()
        self._worker: Worker | None = None
        self._unsubscribe: Any = None
        self.config = session.config
        self._log_shown = 0
        self._output_drawn = 0.0
        self._output_waiting = False
        self._operator_waiting: tuple | None = None  # (task, trial) while the engine waits for a test
        self._status_typing = False  # the focus was in a text field when the status was drawn
        self._status_lines = 0  # the status line's height when it was drawn
        self._focused_pane: Widget | None = None
        self.left_percent = 42
        self._stored_counts = {"witnesses": 0, "refuted": 0, "rounds": 0, "decisions": 0, "overrules": 0}
        agents = self.config.agents
        # With the operator as reviewer there is no reviewer's label to approve: a = valid, o = invalid.
        self.operator_judges = agents.get("reviewer") == "operator"

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="audit-status")
        yield BudgetGauges(id="budget")
        with Horizontal(id="audit-main"):
            with Vertical(id="audit-left"):
                yield Label("Trials", id="trials-title", classes="section-title")
                yield TrialsTable(id="trials-table")
            with LightTabs(initial="candidates-tab", id="audit-tabs"):
                with Pane("Trials F2", id="trials-tab"):
                    yield TrialsTable(id="trials-table-narrow")
                with Pane("Candidates F3", id="candidates-tab"):
                    yield CandidatesPanel(id="candidates")
                with Pane("Worlds F4", id="worlds-tab"):
                    yield WorldsPanel(id="worlds")
                with Pane("Agent F5", id="agent-tab"):
                    yield AgentStream(id="agent-stream")
                with Pane("Editor F6", id="editor-tab"):
                    yield OperatorEditor(id="editor")
                with Pane("Log F7", id="log-tab"):
                    yield RichLog(id="event-log", max_lines=1000, wrap=True, markup=False)
                with Pane("Matrix F8", id="matrix-tab"):
                    yield ReplayMatrix(id="matrix")
                with Pane("Reqs F9", id="requirements-tab"):
                    yield RequirementsPanel(id="requirements")
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one(CandidatesPanel).operator_judges = self.operator_judges
        self.sub_title = f"Audit — {self.state.session_id}"
        self._apply_layout()
        self._unsubscribe = self.session.subscribe(self.inbox)
        self.set_interval(FLUSH, self.flush)
        self.set_interval(CLOCK, self._tick_clock)
        self._replay_history()
        self._redraw_all()
        self._start_run()
        self.call_after_refresh(self.app.settle_heap)  # the long-lived part of a live session

    def on_resize(self) -> None:
        self._apply_layout()

    def _tab_label(self, tab: str) -> str:
        """Tab titles carry their F-key where there is room (the keys work everywhere)."""
        # Fixed titles: the tab bar's underline does not follow a title that changes length, and
        # the status line already leads with the decisions waiting.
        name, key = TAB_TITLES[tab]
        return name if self.size.width < 100 else f"{name} {key}"

    def _apply_layout(self) -> None:
        tabs = self.query_one("#audit-tabs", LightTabs)
        for tab in TAB_TITLES:
            tabs.set_label(tab, self._tab_label(tab))
        narrow = self.size.width < 120
        if narrow:
            tabs.show_tab("trials-tab")
        else:
            if tabs.active == "trials-tab":
                tabs.active = "candidates-tab"
            tabs.hide_tab("trials-tab")
        self.call_after_refresh(self._keep_focus)

    def _keep_focus(self) -> None:
        """Some pane always has the focus (and shows it), so arrows and enter act on what the
        operator sees: at 80 columns nothing took it, and a resize can hide the pane that had it."""
        if not self.is_attached:
            return
        focused = self.focused
        if focused is not None and all(node.display for node in focused.ancestors_with_self
                                       if isinstance(node, Widget)):
            return
        wide = self.size.width >= 120
        target = "#trials-table" if wide else TAB_FOCUS.get(self._active_tab(), "#candidate-table")
        self.query_one(target).focus()

    def _replay_history(self) -> None:
        """A resumed session shows what happened before: the engine stores its events."""
        if not self.resumed:
            return
        try:
            stored = self.session.events()
        except Exception as error:  # noqa: BLE001 - history is nice to have, not essential
            log_exception(error, "session history")
            return
        for data in stored:
            event = ls.event_from_dict(data)
            if event is not None:
                self.state.apply(event)
        if self.state.state in ("running", "starting"):
            self.state.state = "starting"  # it is not running until run() is called again

    # -- the engine --------------------------------------------------------------------------
    @property
    def session_running(self) -> bool:
        worker_alive = self._worker is not None and self._worker.state in (
            WorkerState.PENDING, WorkerState.RUNNING)
        return worker_alive and self.state.state not in ("finished", "stopped", "failed")

    def _start_run(self) -> None:
        if self.session_running:
            return
        self._worker = self.run_worker(self._run_session(), group="session", exit_on_error=False,
                                       name="audit session")
        self.app.session = self.session
        self.refresh_bindings()

    async def _run_session(self) -> None:
        self.session.operator_present = True  # questionable verdicts come to this screen's queue
        await self.session.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:
            return
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.state.state = "failed"
            self.state.dirty.add(ls.STATUS)
            self.app.report_error(event.worker.error, context="audit session", title="Session failed")
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.flush()
            self.refresh_bindings()

    def flush(self) -> None:
        self._watch_operator()
        events = self.inbox.drain()
        if not events and not self._output_waiting:
            return
        before = self.state.state
        self.state.apply_all(events)
        dirty = self.state.take_dirty()
        now = time.monotonic()
        if ls.OUTPUT in dirty or self._output_waiting:
            if now - self._output_drawn < OUTPUT_FLUSH and ls.WORLDS not in dirty:
                dirty.discard(ls.OUTPUT)
                self._output_waiting = True
            else:
                dirty.add(ls.OUTPUT)
                self._output_waiting = False
                self._output_drawn = now
        if dirty:
            self._redraw(dirty)
        after = self.state.state
        if ls.APPROVALS in dirty and after == before:
            self.refresh_bindings()  # approve/overrule appear and go with pending decisions
        if after != before:
            self.refresh_bindings()
            if after in ("finished", "stopped", "failed"):
                self._settle_trials()  # a pause (step, budget) leaves trials in play
            if after == "finished":
                self.app.notify("Session finished — press g for the report.", title="Audit")
            elif after == "failed":
                self.app.notify_error(self.state.reason or "the session failed (see the Log tab)",
                                      "Session failed")
            elif after == "paused" and self.state.reason.startswith("budget"):
                self.app.notify(f"Paused: {self.state.reason}. Press l to raise the limit.",
                                severity="warning", title="Budget")

    @guarded
    def _tick_clock(self) -> None:
        """The header's time, runs, tokens and spend, read from the session once a second: the
        engine announces usage only when it spends, and the wall clock runs between (a long
        test run, a decision the operator is reading)."""
        if not self.session_running:
            return
        now = self.session.budget.snapshot()
        last = self.state.budget
        if last is not None and (now.seconds, now.waiting_seconds, now.usd, now.tokens, now.test_runs) == \
                (last.seconds, last.waiting_seconds, last.usd, last.tokens, last.test_runs):
            return
        self.state.budget = now
        self.query_one(BudgetGauges).show(self.state, self._rounds_limit(), self._stored_counts["rounds"])

    @guarded
    def _settle_trials(self) -> None:
        """Take the trials' final standing from the session's summary, as the report shows it:
        the loop's events leave unsampled trials 'active', and an ambiguous-only witness failing
        on a trial that was never audited makes it 'ambiguous' there."""
        changed = False
        for task_id, task in self.session.summary().tasks.items():
            for trial_id, trial in task.trials.items():
                view = self.state.trials.get((task_id, trial_id))
                final = trial.state
                unsettled = view is not None and view.state in ("active", "pending", "sampled", "queued", "checking")
                if unsettled and final and view.state != final:
                    view.state = final
                    changed = True
        if changed:
            self._redraw({ls.TRIALS})

    def _redraw_all(self) -> None:
        self._redraw({ls.TRIALS, ls.WORLDS, ls.OUTPUT, ls.AGENT, ls.CANDIDATES, ls.BUDGET,
                      ls.STATUS, ls.LOG, ls.APPROVALS})

    @guarded
    def _redraw(self, dirty: set[str]) -> None:
        s = self.state
        if dirty & {ls.STATUS, ls.APPROVALS, ls.TRIALS}:
            self._show_status()
        if ls.TRIALS in dirty:
            for table in self.query(TrialsTable):
                table.show(s)
            # Every trial in the table (counts(None) would mean the current task's only).
            counts: dict[str, int] = {}
            for t in s.trials.values():
                counts[t.state] = counts.get(t.state, 0) + 1
            parts = [f"{n} {TRIAL_STATE_TEXT.get(k, k)}" for k, n in sorted(counts.items())]
            # A fixed-size label: new numbers repaint it without laying out the screen again.
            self.query_one("#trials-title", Label).update("Trials — " + (", ".join(parts) or "none"),
                                                          layout=False)
        if dirty & {ls.WORLDS, ls.OUTPUT}:
            # Output goes into the log only while the Worlds tab is on show: a growing log
            # re-lays out the whole screen, and nobody is reading a hidden one. Switching to
            # the tab catches up (tab_changed).
            self.query_one(WorldsPanel).show(s, table_changed=ls.WORLDS in dirty,
                                             output=self._active_tab() == "worlds-tab")
        if ls.AGENT in dirty:
            self.query_one(AgentStream).show(s)
        if dirty & {ls.CANDIDATES, ls.APPROVALS}:
            self.query_one(CandidatesPanel).show(s)
        if ls.BUDGET in dirty or ls.STATUS in dirty:
            self.query_one(BudgetGauges).show(s, self._rounds_limit(), self._stored_counts["rounds"])
        if ls.MATRIX in dirty or ls.TRIALS in dirty or ls.STATUS in dirty:
            self.query_one(ReplayMatrix).show(s)
            if self._active_tab() == "requirements-tab":
                self._show_requirements()  # reads the store: only while on show
        if ls.LOG in dirty:
            log = self.query_one("#event-log", RichLog)
            new = min(s.log_total - self._log_shown, len(s.log))
            entries = list(zip(s.log, s.log_times))[len(s.log) - new:]
            for (level, message), at in entries:
                line = Text(time.strftime("%H:%M:%S ", time.localtime(at)), style="dim")
                line.append_text(untrusted(f"[{level}] {message}", style=LOG_STYLE.get(level, "")))
                log.write(line)
            self._log_shown = s.log_total

    def _rounds_limit(self) -> int | None:
        cfg = self.config
        rounds = cfg.rounds
        if not rounds or cfg.mode != "lightweight":
            return None
        tasks = self.state.tasks or sorted({t.task_id for t in self.state.trials.values()})
        return rounds * max(1, len(tasks))

    def _counts(self) -> dict[str, int]:
        """The headline numbers from the session's store: the same the report and `sessions`
        show, however many times events were replayed."""
        try:
            self._stored_counts = self.session.store.counts()
        except Exception as error:  # noqa: BLE001 - a closed store: keep the last numbers
            log_exception(error, "store counts")
        return self._stored_counts

    def _status_text(self) -> Text:
        s = self.state
        text = Text()
        if s.pending:
            n = len(s.pending)
            keys = "v review · a valid · o invalid" if self.operator_judges else "v review · a approve · o overrule"
            if self._typing():
                keys = "ctrl+r reviews"  # letters go to the field that has the focus
            text.append(f" {n} decision{'s' if n != 1 else ''} waiting for you ({keys}) ",
                        style="bold reverse yellow")
            text.append(" ")
        if self._operator_waiting:
            task, trial = self._operator_waiting
            text.append_text(cell(f" waiting for your test on {trial or 'the task analysis of ' + task} (F6) ",
                                  style="bold reverse yellow"))
            text.append(" ")
        text.append(f"● {s.state}", style=STATE_STYLE.get(s.state, ""))
        if s.state == "paused" and s.reason.startswith("budget"):
            text.append(f" ({self._budget_reason()} — l raises it)", style="yellow")
        elif s.reason and s.state not in ("running", "paused"):
            text.append_text(cell(f" ({s.reason})", style="dim"))
        counts = self._counts()
        limit = self._rounds_limit()
        text.append(f"  refuted {counts['refuted']} · witnesses {counts['witnesses']} · "
                    f"rounds {counts['rounds']}" + (f"/{limit}" if limit else ""))
        if counts.get("overrules"):
            text.append(f" · overrules {counts['overrules']}", style="magenta")
        if s.mode:
            text.append(f"  {s.mode}", style="dim")
        tasks = s.tasks or sorted({t.task_id for t in s.trials.values()})
        if s.running or s.state == "paused":
            lines = [(t, s.task_line(t)) for t in tasks]
            lines = [(t, line) for t, line in lines if line]
            if lines:
                text.append("\n")
                for i, (task, line) in enumerate(lines):
                    if i:
                        text.append("  │  ", style="dim")
                    text.append_text(cell(f"{task}: ", style="bold"))
                    text.append_text(cell(line, style="yellow" if line.startswith("waits") else ""))
        if s.running and s.model_waits:
            text.append("\n")
            text.append_text(cell("  │  ".join(list(s.model_waits.values())[-3:]), style="dim"))
        return text

    def _show_status(self) -> None:
        """Redraw the status line; the screen is laid out again only when its height changes
        (it follows the engine's events, several times a second while a session runs)."""
        status = self.query_one("#audit-status", Static)
        text = self._status_text()
        width = max(1, status.content_region.width or self.size.width - 2)
        lines = min(STATUS_LINES, len(text.wrap(self.app.console, width)))
        status.update(text, layout=lines != self._status_lines)
        self._status_lines = lines

    def _typing(self) -> bool:
        return isinstance(self.focused, (Input, TextArea))

    def _watch_focused(self) -> None:
        super()._watch_focused()
        self._mark_focused_pane()
        # The status line names the keys that reach a pending decision from where the focus is.
        typing = self._typing()
        if typing != self._status_typing:
            self._status_typing = typing
            if self.state.pending and self.is_mounted:
                self._show_status()

    def focused_pane(self) -> Widget | None:
        """The pane holding the focus (one of FOCUS_PANES), None when the focus is elsewhere."""
        node = self.focused
        panes = {selector.lstrip("#") for selector in FOCUS_PANES}
        while isinstance(node, Widget) and node is not self:
            if node.id in panes:
                return node
            node = node.parent
        return None

    def _mark_focused_pane(self) -> None:
        pane = self.focused_pane()
        if pane is self._focused_pane:
            return
        if self._focused_pane is not None:
            self._focused_pane.remove_class(FOCUSED_PANE)
        if pane is not None:
            pane.add_class(FOCUSED_PANE)
        # The left pane's title goes with its table (the tabs' pane has its tab title lit).
        for title in self.query("#trials-title"):  # (none while the screen is composed or torn down)
            title.set_class(pane is not None and pane.id == "trials-table", FOCUSED_PANE)
        self._focused_pane = pane

    def _budget_reason(self) -> str:
        """The limit that paused the session, in the gauge's own numbers."""
        b = self.state.budget
        name = self.state.reason.split(":", 1)[1].strip() if ":" in self.state.reason else ""
        if b is None or not name:
            return self.state.reason
        used, limit = {"usd": (usd_text(b.usd, b.unpriced, 2), b.usd_limit), "tokens": (str(b.tokens), b.tokens_limit),
                       "seconds": (f"{b.seconds:.0f}s", b.seconds_limit),
                       "test_runs": (str(b.test_runs), b.test_runs_limit)}.get(name, ("", None))
        label = name.replace("_", " ")
        return f"{label} limit reached: {used} of {limit}" if limit is not None else f"{label} limit reached"

    def _watch_operator(self) -> None:
        """Tell the operator when the engine starts or stops waiting for their candidate tests."""
        agent = operator_agent(self.roles)
        waiting = getattr(agent, "waiting_for", None) if agent is not None else None
        if waiting == self._operator_waiting:
            return
        self._operator_waiting = waiting
        if waiting is not None and self.benchmark is not None and waiting[0] in self.benchmark.tasks:
            self.query_one(OperatorEditor).set_framework(self.benchmark.tasks[waiting[0]].tests.framework)
        self.query_one(OperatorEditor).set_target(waiting)
        self.refresh_bindings()
        self._show_status()
        if waiting is None:
            return
        task, trial = waiting
        what = f"trial {trial}" if trial else f"the task analysis of {task} (solution-blind)"
        self.query_one(OperatorEditor).set_status(
            " Write one, ctrl+k checks it, ctrl+e shares it; ctrl+d when you have no more.",
            lead=clean(f"The engine waits for your tests on {what}."), lead_style="bold yellow")
        if self.state.pending:
            # Decisions come first (they lead the status line): the editor does not take the
            # focus from them; F6 opens it when the operator is ready.
            n = len(self.state.pending)
            self.app.notify(f"The engine also waits for your test for {what}: F6 opens the Editor "
                            f"once you have decided ({n} decision{'s' if n != 1 else ''} waiting, v reviews).",
                            title="Operator")
            return
        tabs = self.query_one("#audit-tabs", LightTabs)
        if tabs.active != "editor-tab":
            self.action_tab("editor-tab")
        self.app.notify(f"Your turn: write a test for {what} in the Editor (F6).", title="Operator")

    # -- stepper -----------------------------------------------------------------------------
    @guarded
    def action_next_round(self) -> None:
        if self.state.pending and self.session.control.waiting == 0 and self.session_running:
            # Nothing is held at a step gate: every task waits for the operator's decisions.
            n = len(self.state.pending)
            self.app.notify(f"n has nothing to step: the engine waits for {n} decision"
                            f"{'s' if n != 1 else ''} of yours — v reviews, a approves, o overrules.",
                            severity="warning", title="Waiting for you")
            return
        self.session.step_next()
        self._start_run()

    @guarded
    def action_run_to_end(self) -> None:
        self.session.run_to_end()
        self._start_run()
        if self.state.pending:
            n = len(self.state.pending)
            self.app.notify(f"Step mode off, but {n} decision{'s' if n != 1 else ''} still wait for you "
                            "(v reviews): the tasks behind them stay put until you decide.",
                            severity="warning", title="Run all")
        else:
            self.app.notify("Running to the end (step mode off).")

    @guarded
    def action_pause(self) -> None:
        self.session.pause()
        self.app.notify("Pausing at the next step… (n: next round, r: run to end)")

    def action_stop(self) -> None:
        from testjack_tui.tui.screens.dialogs import ConfirmScreen

        def decided(yes: bool | None) -> None:
            if yes:
                self.session.stop()
                self.app.notify("Stopping: the session ends after the current step.")

        self.app.push_screen(ConfirmScreen("Stop this session?",
                                           "Work done so far is kept; the report shows it.",
                                           yes="Stop", no="Keep running"), decided)

    def action_limits(self) -> None:
        from testjack_tui.tui.screens.dialogs import LimitsScreen

        b = self.state.budget
        budget = self.config.budget
        current = {
            "usd": b.usd_limit if b else budget.usd,
            "tokens": b.tokens_limit if b else budget.tokens,
            "seconds": b.seconds_limit if b else budget.seconds,
            "test_runs": b.test_runs_limit if b else budget.test_runs,
        }
        self.app.push_screen(LimitsScreen(current), self._limits_chosen)

    @guarded
    def _limits_chosen(self, limits: dict | None) -> None:
        if limits is None:
            return
        self.session.raise_limits(**limits)
        self.state.limits_raised()
        self._redraw({ls.STATUS, ls.BUDGET})
        self.app.notify("Limits updated.")
        if self.state.state == "paused" or not self.session_running:
            self._start_run()

    # -- approvals ---------------------------------------------------------------------------
    def _target_request(self) -> tuple[str, Any] | None:
        """The selected candidate's pending request, else the oldest one in the queue."""
        chosen = self.query_one(CandidatesPanel).selected()
        if chosen is not None and chosen.decision == "pending" and chosen.request_id in self.state.pending:
            return chosen.request_id, self.state.pending[chosen.request_id]
        if self.state.pending:
            return next(iter(self.state.pending.items()))
        return None

    def _decide(self, overrule: bool, request_id: str | None = None, note: str = "",
                said: dict[str, Any] | None = None, questionable: bool = False) -> None:
        from testjack_tui.services.approvals import operator_decision

        target = self._target_request() if request_id is None else (
            (request_id, self.state.pending[request_id]) if request_id in self.state.pending else None)
        if target is None:
            self.app.notify("No decision is waiting.", severity="warning")
            return
        request_id, request = target
        decision = operator_decision(request.label, overrule=overrule, operator_judges=self.operator_judges,
                                     note=note, where="in the TUI", questionable=questionable)
        if said:  # the operator's requirement / explicit / quote, stored beside the reviewer's
            decision = dataclasses.replace(decision, **said)
        asked = self.session.answer(request_id, decision)
        verb = ("Questionable" if questionable else "Judged" if self.operator_judges
                else "Overruled" if overrule else "Approved")
        effect = "counts as a witness" if decision.counts else "does not count"
        if asked:
            self.app.notify(f"{verb} {request.candidate_id}: {effect}.", title="Decision sent")
        else:
            # A decision shown from before a resume that the engine has not reached again yet
            # (step mode holds it at a gate): it is kept and applies when the engine asks.
            self.app.notify(f"{verb} {request.candidate_id}: {effect} — kept until the engine comes back to "
                            "it (n / r go on).", title="Decision kept")

    def action_review_anywhere(self) -> None:
        self.action_review()

    @guarded
    def action_review(self, request_id: str | None = None) -> None:
        """Open the approval dialog on the selected (or oldest) pending decision."""
        target = self._target_request() if request_id is None else (
            (request_id, self.state.pending[request_id]) if request_id in self.state.pending else None)
        if target is None:
            self.app.notify("No decision is waiting.", severity="warning")
            return
        from testjack_tui.services.approvals import approval_context
        from testjack_tui.tui.screens.approval import ApprovalScreen

        rid, request = target
        ctx = approval_context(self.session.store, request.candidate_id, self._task_of(request.task_id),
                               self._trial_of(request.trial_id))
        if not ctx.label:
            ctx.label = request.label
        if not ctx.reason:
            ctx.reason = request.reason

        def decided(answer: tuple[str, str, dict[str, Any]] | None) -> None:
            if answer is None or rid not in self.state.pending:
                return
            choice, note, said = answer
            self._decide(choice == "overrule", request_id=rid, note=note, said=said,
                         questionable=choice == "questionable")

        self.app.push_screen(ApprovalScreen(ctx, self.operator_judges, task=self._task_of(request.task_id),
                                            trial=self._trial_of(request.trial_id),
                                            evidence=self._evidence_of(request.trial_id),
                                            waiting=len(self.state.pending)), decided)

    # -- what the operator judges: prompt and diff ---------------------------------------------
    def _task_of(self, task_id: str | None) -> Any:
        tasks = self.benchmark.tasks if self.benchmark is not None else {}
        return tasks.get(task_id or "")

    def _trial_of(self, trial_id: str | None) -> Any:
        if self.benchmark is None or not trial_id:
            return None
        return next((t for t in self.benchmark.trials if t.id == trial_id), None)

    def _evidence_of(self, trial_id: str | None) -> dict | None:
        return self.session.store.get_evidence(trial_id) if trial_id else None

    def _selected_target(self) -> tuple[str, str | None]:
        """(task, trial) the prompt / diff keys act on: the focused table's row."""
        focused = self.focused
        if isinstance(focused, TrialsTable) and focused.row_count:
            key = focused.coordinate_to_cell_key(focused.cursor_coordinate).row_key.value or ""
            task, _, trial = key.partition("/")
            return task, trial
        chosen = self.query_one(CandidatesPanel).selected()
        if chosen is not None and chosen.trial_id:
            return chosen.task_id, chosen.trial_id
        if self.state.round_trial:
            return self.state.current_task, self.state.round_trial
        # Nothing aimed at a trial (a task-analysis candidate, no round yet): the trial under
        # the cursor of the trials table on show.
        table = self.query_one("#trials-table" if self.size.width >= 120 else "#trials-table-narrow", TrialsTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""
            task, _, trial = key.partition("/")
            return task, trial
        return (chosen.task_id if chosen else self.state.current_task), None

    @guarded
    def action_prompt(self) -> None:
        from testjack_tui.tui.screens.inspect import PromptScreen

        task_id, _ = self._selected_target()
        quote = ""
        panel = self.query_one(RequirementsPanel)
        if self.focused is not None and self.focused.id == "requirements-table" and panel.task_id:
            task_id, quote = panel.task_id, panel.selected_quote()  # the requirement's words marked in P
        task = self._task_of(task_id) or self._task_of(self.state.current_task)
        if task is None:
            self.app.notify("The prompt is not available: the benchmark is not loaded.", severity="warning")
            return
        self.app.push_screen(PromptScreen(task, highlight=quote))

    @on(DataTable.RowSelected, "#requirements-table")
    def _requirement_chosen(self, event: DataTable.RowSelected) -> None:
        self.action_prompt()

    @guarded
    def action_diff(self, trial_id: str | None = None) -> None:
        from testjack_tui.tui.screens.inspect import DiffScreen

        trial_id = trial_id or self._selected_target()[1]
        trial = self._trial_of(trial_id)
        if trial is None:
            self.app.notify("No trial to show: select one in the Trials pane (f2) or a candidate aimed at "
                            "one (f3), then d.", severity="warning")
            return
        self.app.push_screen(DiffScreen(trial, self._evidence_of(trial.id)))

    @on(DataTable.RowSelected, "#candidate-table")
    def _candidate_chosen(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value if event.row_key is not None else None
        c = self.state.candidates.get(key or "")
        if c is not None and c.decision == "pending" and c.request_id in self.state.pending:
            self.action_review(c.request_id)
        elif c is not None and c.trial_id:
            self.action_diff(c.trial_id)

    @guarded
    def _show_requirements(self) -> None:
        s = self.state
        tasks = s.tasks or sorted({t.task_id for t in s.trials.values()})
        self.query_one(RequirementsPanel).show(self.session.store, self.query_one(ReplayMatrix).task_id
                                               or s.current_task, tasks)

    @on(ReplayMatrix.OpenRun)
    @guarded
    def _open_run(self, message: ReplayMatrix.OpenRun) -> None:
        from testjack_tui.tui.screens.inspect import RunScreen

        run = self.session.store.get_run(message.run_key) if message.run_key else None
        witness = next((w for w in self.session.store.witnesses(message.task_id) if w["id"] == message.witness_id), None)
        self.app.push_screen(RunScreen(run, message.witness_id, message.trial_id, message.status,
                                       witness["path"] if witness else ""))

    @on(DataTable.RowSelected, "TrialsTable")
    def _trial_chosen(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value if event.row_key is not None else ""
        self.action_diff(key.partition("/")[2])

    @guarded
    def action_approve(self) -> None:
        self._decide(overrule=False)

    @guarded
    def action_overrule(self) -> None:
        self._decide(overrule=True)

    # -- operator editor ---------------------------------------------------------------------
    def action_validate(self) -> None:
        self.query_one(OperatorEditor).validate()

    def action_share(self) -> None:
        self.query_one(OperatorEditor).share()

    @on(OperatorEditor.Share)
    @guarded
    def _share(self, message: OperatorEditor.Share) -> None:
        agent = operator_agent(self.roles)
        editor = self.query_one(OperatorEditor)
        if agent is None:
            editor.set_status(" — choose 'operator' for a role on the Selection screen.",
                              lead="This session has no operator agent", lead_style="bold red")
            return
        try:
            agent.submit_candidate(message.path, message.source, message.requirement)
        except ValueError as error:
            editor.set_status(str(error), lead="not accepted: ", lead_style="bold red")
            return
        waiting = self._operator_waiting
        target = (waiting[1] or f"task analysis of {waiting[0]}") if waiting else "the next audit"
        editor.add_queued(target, message.path, message.requirement)
        editor.set_status(f" {message.path} — queued; ctrl+d when you have no more, "
                          "then watch it on the Candidates tab", lead="shared", lead_style="bold green")
        self.app.notify(f"Shared {message.path} with the engine.", title="Operator")

    @on(OperatorEditor.Finish)
    def _finish_message(self) -> None:
        self.action_operator_done()

    @guarded
    def action_operator_done(self) -> None:
        agent = operator_agent(self.roles)
        if agent is None:
            self.app.notify("This session has no operator agent.", severity="warning")
            return
        agent.finish()
        editor = self.query_one(OperatorEditor)
        n = len(editor.queued)
        editor.clear_queued()
        editor.set_status(f"handed {n} test(s) to the engine; it runs them on the reference and model "
                          "worlds (Candidates tab)" if n else "finished this audit; the engine moves on")

    # -- navigation --------------------------------------------------------------------------
    def action_tab(self, tab: str) -> None:
        tabs = self.query_one("#audit-tabs", LightTabs)
        if tab == "trials-tab" and self.size.width >= 120:
            self.query_one("#trials-table", TrialsTable).focus()
            return
        tabs.active = tab
        if tab == "worlds-tab":
            # Catch the output up in this same turn: the switch and the output it shows are then
            # laid out and painted once, not twice (TabActivated arrives after the first paint).
            self.query_one(WorldsPanel).show(self.state, table_changed=False)
        focus = TAB_FOCUS.get(tab)
        if tab == "requirements-tab":
            self._show_requirements()
        if focus:
            self.query_one(focus).focus()

    def action_report(self) -> None:
        from testjack_tui.tui.screens.report import ReportScreen

        self.app.push_screen(ReportScreen(self.session, self.benchmark))

    def action_resize_left(self, step: int) -> None:
        """The trials pane takes 25–75 % of a wide screen; [ and ] move the split."""
        self.left_percent = max(25, min(75, self.left_percent + step))
        self.query_one("#audit-left").styles.width = f"{self.left_percent}%"

    def action_leave_editor(self) -> None:
        # To the field a shared test also needs (and from there Tab / shift+Tab move on).
        self.query_one("#editor-requirement").focus()

    def action_back(self) -> None:
        if self.session_running:
            self.app.notify("The session keeps running; pause (p) or stop (s) it first.",
                            severity="warning")
            return
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer shows only the keys that do something now, so it fits 80 columns.
        s = self.state
        if action == "leave_editor":
            return isinstance(self.focused, TextArea)
        if action == "review_anywhere":
            return bool(s.pending)
        if action in ("validate", "share", "operator_done"):
            if operator_agent(self.roles) is None:
                return False
            if self._active_tab() == "editor-tab":
                return True
            # Elsewhere only "done" (the editor's content is not on show; the footer fits 80 columns).
            return action == "operator_done" and self._operator_waiting is not None
        if isinstance(self.focused, (Input, TextArea)) and action not in ("tab", "back"):
            return False  # letters belong to the field being edited
        ended = s.state in ("finished", "stopped", "failed")
        if action in ("approve", "overrule", "review"):
            return bool(s.pending)
        if action in ("prompt", "diff"):
            return self.benchmark is not None
        if action == "next_round":
            return not ended and (s.state in ("paused", "starting") or self._step_mode())
        if action == "run_to_end":
            return not ended and (s.state == "paused" or self._step_mode())
        if action == "pause":
            return not ended and s.state != "paused" and not self._step_mode()
        if action == "stop":
            return not ended
        if action == "report":
            return ended or not self.session_running
        return True

    def help_hidden(self, action: str) -> bool:
        """Keys F1 leaves out: the operator's editor keys in a session without an operator."""
        return action in ("validate", "share", "operator_done", "leave_editor") and operator_agent(self.roles) is None

    def _active_tab(self) -> str:
        try:
            return self.query_one("#audit-tabs", LightTabs).active
        except Exception:  # noqa: BLE001 - not composed yet
            return ""

    def _step_mode(self) -> bool:
        return self.session.control.step

    @on(LightTabs.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()
        if self._active_tab() == "worlds-tab":
            self.query_one(WorldsPanel).show(self.state, table_changed=False)

    def on_unmount(self) -> None:
        if callable(self._unsubscribe):
            try:
                self._unsubscribe()
            except Exception as error:  # noqa: BLE001
                log_exception(error, "unsubscribe")
        if self.app.session is self.session:
            self.app.session = None
