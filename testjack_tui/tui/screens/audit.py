"""Screen 3: the live session — trials, worlds, agents, candidates, approvals, budget, stepper.

What is on show and how it follows the engine's events is `AuditLive` (screens/audit_live.py);
starting or opening a session, screens/audit_start.py. Here: the operator's keys. They call the
session's control methods; approvals are answered through `session.answer`, so a pending decision
blocks only the work that needs it.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from textual import on
from textual.binding import Binding
from textual.widgets import DataTable, Input, TextArea

from testjack_tui.tui import live_state as ls
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.guard import guarded
from testjack_tui.tui.widgets.candidates import CandidatesPanel
from testjack_tui.tui.widgets.editor import OperatorEditor
from testjack_tui.tui.widgets.matrix import ReplayMatrix
from testjack_tui.tui.widgets.panes import LightTabs
from testjack_tui.tui.widgets.requirements import RequirementsPanel
from testjack_tui.tui.widgets.trials import TrialsTable
from testjack_tui.tui.widgets.worlds import WorldsPanel
from testjack_tui.tui.screens.audit_live import AuditLive, operator_agent


class AuditScreen(AuditLive):
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
        self.refresh_bindings()  # n / r go, p comes: step mode is off (the footer kept n and r)
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
        self.refresh_bindings()
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
    def _limits_chosen(self, limits: dict[str, Any] | None) -> None:
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
        # The id as the tables write it, and its task (the full id repeats the task's name twice).
        shown = f"{short_id(request.candidate_id, request.task_id)} of {request.task_id}"
        if asked:
            self.app.notify(f"{verb} {shown}: {effect}.", title="Decision sent")
        else:
            # A decision shown from before a resume that the engine has not reached again yet
            # (step mode holds it at a gate): it is kept and applies when the engine asks.
            self.app.notify(f"{verb} {shown}: {effect} — kept until the engine comes back to "
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

    def _evidence_of(self, trial_id: str | None) -> dict[str, Any] | None:
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


    @on(ReplayMatrix.OpenRun)
    @guarded
    def _open_run(self, message: ReplayMatrix.OpenRun) -> None:
        from testjack_tui.tui.screens.inspect import RunScreen

        run = self.session.store.get_run(message.run_key) if message.run_key else None
        witness = next((w for w in self.session.store.witnesses(message.task_id) if w.id == message.witness_id), None)
        self.app.push_screen(RunScreen(run, message.witness_id, message.trial_id, message.status,
                                       witness.path if witness else ""))

    @on(DataTable.RowSelected, "TrialsTable")
    def _trial_chosen(self, event: DataTable.RowSelected) -> None:
        key = (event.row_key.value if event.row_key is not None else None) or ""
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


    def _step_mode(self) -> bool:
        return bool(self.session.control.step)

    @on(LightTabs.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()
        if self._active_tab() == "worlds-tab":
            self.query_one(WorldsPanel).show(self.state, table_changed=False)

