"""The Audit screen's live view, under the operator's keys (screens/audit.py `AuditScreen`).

The engine runs on the app's event loop in an async worker (`session.run()`); its events land
in an EventInbox and are folded into a LiveSession every FLUSH seconds, and only the parts that
changed are redrawn. Here: the layout, the engine's worker, the fold and redraw, the status line,
which pane has the focus and which tab is on show, and the operator's editor waking when the
engine waits for a test.
"""
from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Input, Label, RichLog, Static, TextArea
from textual.worker import Worker, WorkerState

from testjack_tui.engine.budget import usd_text
from testjack_tui.tui import live_state as ls
from testjack_tui.tui import live_views as lv
from testjack_tui.tui.guard import guarded, reporter, session_host
from testjack_tui.tui.inbox import EventInbox
from testjack_tui.tui.logs import log_exception
from testjack_tui.tui.session_word import header_state
from testjack_tui.tui.task_lines import task_status
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
STATE_STYLE = {"running": "bold green", "paused": "bold yellow", "waiting": "bold yellow", "finished": "bold cyan",
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


class AuditLive(Screen[None]):
    """The live session on show: see the module's docstring; AuditScreen adds the keys."""

    # Textual repaints the whole screen when focus moves; the widgets that gain and lose focus
    # restyle (and repaint) themselves, so that second full frame after every tab key only
    # doubled the cost of the key press.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self, session: Any, benchmark: Any = None, trials: list[lv.TrialView] | None = None,
                 resumed: bool = False, roles: Any = None):
        super().__init__()
        self.roles = roles
        self.session = session
        self.benchmark = benchmark
        self.resumed = resumed
        self.state = ls.LiveSession(session.id, trials)
        self.state.lender = session.config.reuse_runs or ""
        self.inbox = EventInbox()
        self._worker: Worker[Any] | None = None
        self._unsubscribe: Any = None
        self.config = session.config
        self._log_shown = 0
        self._output_drawn = 0.0
        self._output_waiting = False
        self._operator_waiting: tuple[str, str | None] | None = None  # (task, trial) while the engine waits for a test
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
        self.call_after_refresh(session_host(self).settle_heap)  # the long-lived part of a live session

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
        session_host(self).session = self.session
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
            reporter(self).report_error(event.worker.error, context="audit session", title="Session failed")
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
                reporter(self).notify_error(self.state.reason or "the session failed (see the Log tab)",
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
                if view is not None and unsettled and final and view.state != final:
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
        rounds: int | None = cfg.rounds
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
        word, waits = header_state(s, self._operator_waiting[0] if self._operator_waiting else "")
        text.append(f"● {word}", style=STATE_STYLE.get(word, ""))
        if waits:
            text.append(f" ({waits})", style="yellow")
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
        if s.lender:  # what ran nowhere here: the runs taken from the earlier session
            text.append_text(cell(f"  {s.lent_runs} run{'s' if s.lent_runs != 1 else ''} taken from session {s.lender}",
                                  style="dim"))
        tasks = s.tasks or sorted({t.task_id for t in s.trials.values()})
        if s.running or s.state == "paused":
            lines = [(t, s.task_line(t)) for t in tasks]
            lines = [(t, line) for t, line in lines if line]
            if lines:
                shown = self.query("#audit-status")  # none yet while the screen is composed
                width = (shown.first().content_region.width if shown else 0) or self.size.width - 2
                width = width if width > 1 else 10_000  # not laid out yet: every task in full
                used = len(text.wrap(self.app.console, width)) + (1 if s.running and s.model_waits else 0)
                text.append("\n")
                text.append_text(task_status(lines, width, STATUS_LINES - used, self.app.console))
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
        super()._watch_focused()  # type: ignore[no-untyped-call]  # Textual's own watcher is unannotated
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
            parent = node.parent
            node = parent if isinstance(parent, Widget) else None
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
            self.query_one(OperatorEditor).set_framework(self.benchmark.tasks[waiting[0]].tests.framework,
                                                         task=self.benchmark.tasks[waiting[0]])
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

    @guarded
    def _show_requirements(self) -> None:
        s = self.state
        tasks = s.tasks or sorted({t.task_id for t in s.trials.values()})
        self.query_one(RequirementsPanel).show(self.session.store, self.query_one(ReplayMatrix).task_id
                                               or s.current_task, tasks)

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

    def _active_tab(self) -> str:
        try:
            return self.query_one("#audit-tabs", LightTabs).active
        except Exception:  # noqa: BLE001 - not composed yet
            return ""

    def on_unmount(self) -> None:
        if callable(self._unsubscribe):
            try:
                self._unsubscribe()
            except Exception as error:  # noqa: BLE001
                log_exception(error, "unsubscribe")
        host = session_host(self)
        if host.session is self.session:
            host.session = None
