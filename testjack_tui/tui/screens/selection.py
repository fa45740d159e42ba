"""Screen 2: choose tasks and trials, set up the session, optionally run `verify` first."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import (Checkbox, DataTable, Header, Input, Label, ProgressBar, Select,
                             Static, TabbedContent, TabPane)
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from testjack_tui.errors import InputError
from testjack_tui.tui import selection_memory
from testjack_tui.tui.choices import ROLES, SessionForm, agent_choices, samplers
from testjack_tui.tui.guard import guarded, reporter
from testjack_tui.tui.lenders import NO_LENDER, NO_LENDER_LABEL, checked_lender, lender_choices
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.recent import display_path
from testjack_tui.tui.text import cell, clean
from testjack_tui.tui.widgets.footer import QuietFooter
from testjack_tui.tui.widgets.tables import Cell

if TYPE_CHECKING:
    from testjack_tui.model import Benchmark, Trial
    from testjack_tui.services.verification import TaskVerification

TICK, EMPTY = "●", "○"
MODE_CHOICES = (("lightweight loop", "lightweight"), ("per-trial audit", "per-trial"))
MODES = tuple(value for _, value in MODE_CHOICES)


def short_models(models: list[str], width: int = 22) -> str:
    text = ", ".join(models)
    return text if len(text) <= width else text[: width - 1] + "…"


def verification_summary(result: TaskVerification | None) -> str:
    """One cell: is the task well-formed, and how many recorded verdicts reproduce."""
    if result is None:
        return "—"
    text = "ok" if result.well_formed else "ILL-FORMED"
    text += f" {result.reproduced}/{result.recorded}"
    if result.vacuous:
        text += f", {len(result.vacuous)} vacuous"
    return text


def trial_reproduction(result: TaskVerification | None, trial_id: str) -> str:
    """'yes' / 'NO: reason' / '—' (not verified yet) for one trial."""
    if result is None:
        return "—"
    for item in result.trials:
        if item.trial_id == trial_id:
            if item.recorded == "unknown":
                return "unknown (no recorded verdict)"
            if item.reproducible:
                return "yes"
            return f"NO: {item.reason}" if item.reason else "NO"
    return "—"


SWITCHES = {
    # Fits 80 columns (the longer wording was cut); a verdict the operator decides is its own step
    # (engine/approval.judge): only automatic ones stop at a gate.
    "step": ("pause before rounds and automatic verdicts", "run without pausing"),
    "auto_approve": ("'valid' verdicts count without asking me", "I approve every verdict"),
}


def switch_label(name: str, value: bool) -> str:
    on_text, off_text = SWITCHES[name]
    return f"on: {on_text}" if value else f"off: {off_text}"


class SelectionScreen(Screen[None]):
    HELP_TITLE = "Selection"
    HELP = ("Choose which tasks and which officially passing trials to audit (failing trials are "
            "shown for context; the benchmark already counts them as unsolved), then set up the "
            "session on the Settings tab and start it. Verify runs the benchmark's own checks in "
            "containers first: is the task well-formed, and does each trial's recorded verdict "
            "reproduce? i opens the current task's verify report (the vacuous tests by name). "
            "Settings, picks and verify results are kept for this benchmark between visits.")
    BINDINGS = [
        Binding("f1", "app.help", "Help", id="selection.help"),
        Binding("space", "pick", "Pick", tooltip="select or leave out the task or trial under the cursor",
                id="selection.toggle"),
        Binding("a", "select_all", "All", id="selection.all"),
        Binding("n", "select_none", "None", id="selection.none"),
        Binding("m", "by_model", "Models", tooltip="select the passing trials of chosen models",
                id="selection.by_model"),
        Binding("v", "verify", "Verify", id="selection.verify"),
        # Not in the footer (it must fit 80 columns); the line under the trials names the key.
        Binding("i", "verify_report", "Verify report", show=False,
                tooltip="the current task's verify result: problems, vacuous tests by name, trials that "
                        "do not reproduce", id="selection.verify_report"),
        Binding("ctrl+s", "start", "Start", tooltip="start the audit session", priority=True,
                id="selection.start"),
        Binding("f2", "show_tab('tasks')", "Tasks tab", priority=True, show=False, id="selection.tab_tasks"),
        Binding("f3", "show_tab('settings')", "Settings tab", priority=True, show=False,
                id="selection.tab_settings"),
        Binding("escape", "back", "Back", show=False, id="selection.back"),
    ]

    def __init__(self, benchmark: Benchmark, path: str, reuse_runs: str = "") -> None:
        super().__init__()
        self.benchmark = benchmark
        self.path = path
        self.task_ids = sorted(benchmark.tasks)
        self.selected_tasks: set[str] = set(self.task_ids)
        self.selected_trials: set[str] = {t.id for t in benchmark.trials if t.official_pass}
        self.verification: dict[str, Any] = {}
        self.verified_at: dict[str, float] = {}
        self.current_task = self.task_ids[0] if self.task_ids else ""
        self.form = SessionForm()
        self.lenders: list[str] = []  # the sessions offered to reuse runs of, once listed
        self.verifying = False
        self._restore()
        self.form.reuse_runs = reuse_runs  # `testjack-tui tui BENCH --reuse-runs SESSION`, checked there

    # -- kept between visits -----------------------------------------------------------------
    def _restore(self) -> None:
        """Settings, picks and verify results from the last visit to this benchmark (this run of
        the app or an earlier one), minus whatever no longer fits it."""
        memory = selection_memory.load(self.path)
        form = memory.form
        agents = set(agent_choices())
        form.agents = {role: name if name in agents else "scripted" for role, name in form.agents.items()}
        if form.sampler not in samplers():
            form.sampler = SessionForm.sampler
        if form.mode not in MODES:
            form.mode = SessionForm.mode
        self.form = form
        passing = {t.id for t in self.benchmark.trials if t.official_pass}
        if memory.tasks is not None:
            self.selected_tasks = set(memory.tasks) & set(self.task_ids)
        if memory.trials is not None:
            self.selected_trials = set(memory.trials) & passing
        for task_id, kept in memory.verification.items():
            if task_id in self.benchmark.tasks and selection_memory.still_valid(
                    kept, [t.id for t in self.benchmark.trials_of(task_id)]):
                self.verification[task_id] = kept.result
                self.verified_at[task_id] = kept.at

    def remember(self) -> None:
        """Save what the screen holds now; called on every change, so quitting from anywhere
        keeps it. A failure to write is logged, never in the way."""
        from testjack_tui.tui.logs import log_exception

        if self.is_mounted and self.query("#mode"):
            self.form = self.read_form()
        memory = selection_memory.SelectionMemory(
            form=self.form, tasks=sorted(self.selected_tasks), trials=sorted(self.selected_trials),
            verification={task_id: selection_memory.KeptVerification(
                result, [t.id for t in self.benchmark.trials_of(task_id)], self.verified_at.get(task_id, 0.0))
                for task_id, result in self.verification.items()})
        try:
            selection_memory.save(self.path, memory)
        except OSError as error:
            log_exception(error, "remember selection")

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        b = self.benchmark
        passing = sum(1 for t in b.trials if t.official_pass)
        yield Static(Text.assemble(cell(b.name, "bold"), f"  {b.format} · {len(b.tasks)} tasks · "
                                   f"{len(b.trials)} trials · {passing} passing  ",
                                   cell(display_path(self.path), "dim")),
                     id="selection-title")
        with TabbedContent(initial="tasks", id="selection-tabs"):
            with TabPane("Tasks & trials F2", id="tasks"):
                yield DataTable(id="task-table", cursor_type="row", zebra_stripes=True)
                yield Label("", id="trial-title", classes="section-title")
                yield DataTable(id="trial-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="verify-detail", markup=False)
            with TabPane("Settings F3", id="settings"):
                with VerticalScroll(id="settings-form"):
                    yield from self._form()
        with Horizontal(id="selection-status"):
            yield Static("", id="selection-summary")
            yield ProgressBar(id="verify-progress", show_eta=False)
        yield QuietFooter(compact=True)

    def _form(self) -> ComposeResult:
        f = self.form

        def row(label: str, widget: Widget) -> Horizontal:
            return Horizontal(Label(label, classes="form-label"), widget, classes="form-row")

        yield Label("Method", classes="section-title")
        yield row("Mode", Select(list(MODE_CHOICES), value=f.mode, allow_blank=False, id="mode", compact=True))
        yield row("Rounds per task", Input(f.rounds, id="rounds", compact=True, type="integer"))
        yield row("k repairs", Input(f.k_repairs, id="k_repairs", compact=True, type="integer"))
        yield row("Sampler", Select([(s, s) for s in samplers()], value=f.sampler,
                                    allow_blank=False, id="sampler", compact=True))
        yield row("Seed", Input(f.seed, id="seed", compact=True, type="integer"))
        yield Label("Budget (empty = no limit)", classes="section-title")
        yield row("USD", Input(f.usd, id="usd", compact=True, placeholder="no limit"))
        yield row("Tokens", Input(f.tokens, id="tokens", compact=True, placeholder="no limit"))
        yield row("Wall time (s)", Input(f.seconds, id="seconds", compact=True, placeholder="no limit"))
        yield row("Test runs", Input(f.test_runs, id="test_runs", compact=True, placeholder="no limit"))
        yield Label("Agents", classes="section-title")
        choices = agent_choices()
        for role, label in ROLES:
            yield row(label, Select([(c, c) for c in choices], value=f.agents.get(role, "scripted"),
                                    allow_blank=False, id=f"agent-{role}", compact=True))
        yield Label("Operator", classes="section-title")
        yield row("Step mode", Checkbox(switch_label("step", f.step), f.step, id="step", compact=True))
        yield row("Auto-approve", Checkbox(switch_label("auto_approve", f.auto_approve), f.auto_approve,
                                           id="auto_approve", compact=True))
        yield Label("Reuse runs of an earlier session (not run again)", classes="section-title")
        preset = [(f.reuse_runs, f.reuse_runs)] if f.reuse_runs else []  # listed with the others once read
        yield row("Runs of session", Select([(NO_LENDER_LABEL, NO_LENDER), *preset], value=f.reuse_runs,
                                            allow_blank=False, id="reuse_runs", compact=True))

    @on(Checkbox.Changed)
    def _switch_changed(self, event: Checkbox.Changed) -> None:
        # The box itself differs only by colour; the words say on or off (also in a text capture).
        if event.checkbox.id in SWITCHES:
            event.checkbox.label = switch_label(event.checkbox.id, event.value)

    def on_mount(self) -> None:
        tasks = self.query_one("#task-table", DataTable)
        # Verify before Models: at 80 columns the models list is what gets cut, not the verdict.
        for key, label in (("sel", " "), ("task", "Task"), ("lang", "Lang"), ("trials", "Trials"),
                           ("passing", "Pass"), ("verify", "Verify"), ("models", "Models")):
            tasks.add_column(label, key=key)
        trials = self.query_one("#trial-table", DataTable)
        for key, label in (("sel", " "), ("trial", "Trial"), ("model", "Model"), ("agent", "Agent"),
                           ("official", "Official"), ("reward", "Reward"), ("repro", "Reproduced")):
            trials.add_column(label, key=key)
        self.query_one("#verify-progress").display = False
        self.sub_title = f"Selection — {clean(self.benchmark.name)}"
        self._fill_tasks()
        self._fill_trials()
        tasks.focus()
        self.list_lenders()
        # Widgets post Changed while they settle; only the operator's own changes are saved.
        self.call_after_refresh(self._start_remembering)

    @work(thread=True, exclusive=True, group="lenders", exit_on_error=False)
    def list_lenders(self) -> None:
        self.app.call_from_thread(self._show_lenders, lender_choices(self.path))

    def _show_lenders(self, choices: list[tuple[str, str]]) -> None:
        field = self.query_one("#reuse_runs", Select)
        chosen = str(field.value)
        self.lenders = [value for _, value in choices if value]
        field.set_options(choices)
        field.value = chosen if chosen in self.lenders else NO_LENDER

    def _start_remembering(self) -> None:
        self._remembering = True

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _setting_changed(self) -> None:
        if getattr(self, "_remembering", False):
            self.remember()

    # -- tables ------------------------------------------------------------------------------
    def _task_cells(self, task_id: str) -> list[Cell]:
        task = self.benchmark.tasks[task_id]
        trials = self.benchmark.trials_of(task_id)
        passing = [t for t in trials if t.official_pass]
        chosen = sum(1 for t in passing if t.id in self.selected_trials)
        mark = TICK if task_id in self.selected_tasks else EMPTY
        return [mark, cell(task_id), cell(task.language), str(len(trials)),
                f"{chosen}/{len(passing)}" if chosen != len(passing) else str(len(passing)),
                verification_summary(self.verification.get(task_id)),
                cell(short_models(self.benchmark.models_of(task_id), width=max(22, self.size.width - 80)))]

    def on_resize(self) -> None:
        # Wider screens show the whole models list instead of leaving half the row empty.
        if self.is_mounted and self.query("#task-table"):
            self._fill_tasks()

    def _fill_tasks(self) -> None:
        table = self.query_one("#task-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        for task_id in self.task_ids:
            table.add_row(*self._task_cells(task_id), key=task_id)
        if self.task_ids:
            table.move_cursor(row=min(max(cursor, 0), len(self.task_ids) - 1))
        self._update_summary()

    def _fill_trials(self) -> None:
        table = self.query_one("#trial-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        trials = self.benchmark.trials_of(self.current_task) if self.current_task else []
        for t in trials:
            if t.official_pass:
                mark = TICK if t.id in self.selected_trials else EMPTY
            else:
                mark = " "
            official = Text(t.recorded, style="green" if t.official_pass else "dim")
            reward = "" if t.reward is None else f"{t.reward:g}"
            # The title names the task; the id without its task prefix leaves room for the rest.
            table.add_row(mark, cell(short_id(t.id, self.current_task)), cell(t.model), cell(t.agent), official,
                          reward, cell(trial_reproduction(self.verification.get(self.current_task), t.id)),
                          key=t.id)
        if trials:
            table.move_cursor(row=min(max(cursor, 0), len(trials) - 1))
        self.query_one("#trial-title", Label).update(Text.assemble(
            "Trials of ", cell(self.current_task), " — space toggles, m selects by model"))
        self._show_verify_detail()

    def _show_verify_detail(self) -> None:
        """Under the trials: the current task's verify result in one or two lines, the vacuous
        tests by name (the whole report is one key away)."""
        detail = self.query_one("#verify-detail", Static)
        result = self.verification.get(self.current_task)
        if result is None:
            detail.update(Text("Not verified yet — v runs the benchmark's own checks", style="dim"))
            self.refresh_bindings()
            return
        when = self.verified_at.get(self.current_task)
        text = Text.assemble(
            ("Verify ", "bold"),
            (f"({selection_memory.age(time.time() - when)}) " if when else "", "dim"),
            ("well-formed" if result.well_formed else "NOT well-formed",
             "green" if result.well_formed else "bold red"),
            f" · {result.reproduced}/{len(result.trials)} reproduce")
        if result.vacuous:
            text.append(f" · {len(result.vacuous)} vacuous: ", style="yellow")
            text.append(clean(", ".join(result.vacuous)))
        elif result.problems:
            text.append(clean(f" · {result.problems[0]}"))
        text.append("  (i or enter: report)", style="dim")
        detail.update(text)
        self.refresh_bindings()

    def _update_summary(self) -> None:
        tasks = [t for t in self.task_ids if t in self.selected_tasks]
        trials = self._chosen_trials()
        self.query_one("#selection-summary", Static).update(
            f"Selected: {len(tasks)} task(s), {len(trials)} passing trial(s)")

    def _chosen_trials(self) -> list[str]:
        return [t.id for t in self.benchmark.trials
                if t.official_pass and t.task_id in self.selected_tasks and t.id in self.selected_trials]

    @on(DataTable.RowHighlighted, "#task-table")
    def _task_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        if key and key != self.current_task:
            self.current_task = key
            self._fill_trials()

    @on(DataTable.RowSelected, "#task-table")
    def _task_chosen(self) -> None:
        if self.current_task in self.verification:
            self.action_verify_report()

    # -- selecting ---------------------------------------------------------------------------
    def _focused_table(self) -> DataTable[Cell] | None:
        return self.focused if isinstance(self.focused, DataTable) else None

    def action_pick(self) -> None:
        table = self._focused_table()
        if table is None:
            return
        if table.id == "task-table":
            # The row under the cursor, not current_task: the highlight message that updates
            # current_task may still be queued behind this key when keys come fast.
            row = table.cursor_row
            if 0 <= row < len(self.task_ids):
                self.selected_tasks ^= {self.task_ids[row]}
        elif table.id == "trial-table":
            trials = self.benchmark.trials_of(self.current_task)
            row = table.cursor_row
            if 0 <= row < len(trials):
                trial = trials[row]
                if not trial.official_pass:
                    self.app.notify("Only officially passing trials are audited.", severity="warning")
                    return
                self.selected_trials ^= {trial.id}
                if trial.id in self.selected_trials:
                    self.selected_tasks.add(self.current_task)
        self._refresh_tables()

    def _scope_trials(self) -> list[Trial] | None:
        """What 'all'/'none' act on: the passing trials of the current task (the trial table
        has focus), or None: every task."""
        table = self._focused_table()
        if table is not None and table.id == "trial-table":
            return [t for t in self.benchmark.trials_of(self.current_task) if t.official_pass]
        return None

    def action_select_all(self) -> None:
        items = self._scope_trials()
        if items is not None:
            self.selected_trials |= {t.id for t in items}
            self.selected_tasks.add(self.current_task)
        else:
            self.selected_tasks = set(self.task_ids)
            self.selected_trials |= {t.id for t in self.benchmark.trials if t.official_pass}
        self._refresh_tables()

    def action_select_none(self) -> None:
        items = self._scope_trials()
        if items is not None:
            self.selected_trials -= {t.id for t in items}
        else:
            self.selected_tasks = set()
        self._refresh_tables()

    def action_by_model(self) -> None:
        from testjack_tui.tui.screens.dialogs import ChooseScreen

        models = sorted({t.model for t in self.benchmark.trials if t.official_pass})
        chosen_now = sorted({t.model for t in self.benchmark.trials
                             if t.official_pass and t.id in self.selected_trials})

        def apply(models_chosen: list[str] | None) -> None:
            if models_chosen is None:
                return
            keep = set(models_chosen)
            self.selected_trials = {t.id for t in self.benchmark.trials
                                    if t.official_pass and t.model in keep}
            self.selected_tasks = {t.task_id for t in self.benchmark.trials
                                   if t.id in self.selected_trials}
            self._refresh_tables()

        self.app.push_screen(ChooseScreen("Audit the passing trials of these models", models, chosen_now),
                             apply)

    def _refresh_tables(self) -> None:
        self._fill_tasks()
        self._fill_trials()
        self.remember()

    def _on_settings(self) -> bool:
        try:
            return self.query_one("#selection-tabs", TabbedContent).active == "settings"
        except Exception:  # noqa: BLE001 - not composed yet
            return False

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#selection-tabs", TabbedContent).active = tab
        if tab == "tasks":
            self.query_one("#task-table", DataTable).focus()
        else:
            self.query_one("#mode", Select).focus()

    def action_back(self) -> None:
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pick", "select_all", "select_none", "by_model") and self._on_settings():
            return False  # they act on the tables: not shown on the Settings tab (the footer fits 80 columns)
        if action in ("pick", "select_all", "select_none", "by_model", "verify", "back") \
                and isinstance(self.focused, Input):
            return None  # typing into a field; the keys are letters there
        if action in ("pick", "select_all", "select_none") and self._focused_table() is None:
            return None
        if action == "verify" and self.verifying:
            return None
        if action == "verify_report":
            return (not self._on_settings() and not isinstance(self.focused, Input)
                    and self.current_task in self.verification)
        return True

    # -- the form ----------------------------------------------------------------------------
    def read_form(self) -> SessionForm:
        f = SessionForm()
        f.mode = str(self.query_one("#mode", Select).value)
        f.sampler = str(self.query_one("#sampler", Select).value)
        for name in ("rounds", "k_repairs", "seed", "usd", "tokens", "seconds", "test_runs"):
            setattr(f, name, self.query_one(f"#{name}", Input).value)
        f.agents = {role: str(self.query_one(f"#agent-{role}", Select).value) for role, _ in ROLES}
        f.step = self.query_one("#step", Checkbox).value
        f.auto_approve = self.query_one("#auto_approve", Checkbox).value
        f.reuse_runs = str(self.query_one("#reuse_runs", Select).value)
        return f

    @guarded
    def action_start(self) -> None:
        tasks = [t for t in self.task_ids if t in self.selected_tasks]
        trials = self._chosen_trials()
        if not tasks:
            reporter(self).notify_error("Select at least one task (space on the Tasks tab).", "Nothing selected")
            return
        if not trials:
            reporter(self).notify_error("None of the selected tasks has a selected passing trial.",
                                  "Nothing selected")
            return
        self.form = self.read_form()
        self.remember()
        try:
            kwargs = self.form.config_kwargs(self.path, tasks, trials)
        except ValueError as error:
            self.action_show_tab("settings")
            reporter(self).notify_error(str(error), "Check the settings")
            return
        # Full scopes are stored as "all" so the session reads well in lists and reports.
        all_passing = [t.id for t in self.benchmark.trials if t.official_pass and t.task_id in tasks]
        if sorted(trials) == sorted(all_passing):
            kwargs["trials"] = None
        if len(tasks) == len(self.task_ids):
            kwargs["tasks"] = None
        if kwargs["reuse_runs"]:
            try:  # as `audit --reuse-runs` checks it: this benchmark's, with T0 run on the trials chosen
                kwargs["reuse_runs"] = checked_lender(kwargs["reuse_runs"], self.path, kwargs["trials"])
            except InputError as error:
                self.action_show_tab("settings")
                reporter(self).notify_error(error.message, "Reuse runs")
                return
        from testjack_tui.tui.screens.audit_start import start_new_session

        start_new_session(self.app, kwargs, self.benchmark)

    # -- verify ------------------------------------------------------------------------------
    def action_verify(self) -> None:
        tasks = [t for t in self.task_ids if t in self.selected_tasks]
        if not tasks:
            reporter(self).notify_error("Select at least one task to verify.", "Nothing selected")
            return
        self.verifying = True
        bar = self.query_one("#verify-progress", ProgressBar)
        bar.display = True
        # verify_task reports one step for the null world, one for the reference, one per trial.
        total = sum(2 + len(self.benchmark.trials_of(t)) for t in tasks)
        bar.update(total=total, progress=0)
        self.run_verify(tasks)
        self.refresh_bindings()

    @work(exclusive=True, group="verify", exit_on_error=False)
    async def run_verify(self, tasks: list[str]) -> None:
        from testjack_tui.services.verification import verify_each
        from testjack_tui.config import load_config

        config = load_config()  # the same backend `verify` and new sessions use

        bar = self.query_one("#verify-progress", ProgressBar)
        summary = self.query_one("#selection-summary", Static)
        done_units = 0

        def progress(*args: Any, **kwargs: Any) -> None:
            # verify_task reports steps as it goes; each one moves the bar.
            nonlocal done_units
            done_units += 1
            bar.advance(1)
            text = next((a for a in args if isinstance(a, str)), "")
            if text:
                summary.update(cell(f"Verifying: {text}"))

        def image_log(message: str) -> None:
            # From a sandbox worker thread: an image build (minutes for a toolchain) says so.
            self.app.call_from_thread(summary.update, cell(f"Verifying: {message}"))

        def starting(i: int, task_id: str) -> None:
            summary.update(cell(f"Verifying {task_id} ({i}/{len(tasks)})…"))

        async for task_id, result in verify_each(self.benchmark, tasks, on_progress=progress, on_start=starting,
                                                 backend=config.backend, ray_address=config.ray_address,
                                                 log=image_log, session="tui-verify"):
            self.verification[task_id] = result
            self.verified_at[task_id] = time.time()
            self._refresh_tables()
        self.app.notify(f"Verified {len(tasks)} task(s).", title="Verify")

    def action_verify_report(self) -> None:
        from testjack_tui.services.verification import report_lines, vacuous_meaning
        from testjack_tui.tui.screens.inspect import ReportTextScreen

        result = self.verification.get(self.current_task)
        if result is None:
            return
        when = self.verified_at.get(self.current_task)
        self.app.push_screen(ReportTextScreen(
            f"Verify report of {self.current_task}", "\n".join(report_lines(result)),
            (f"verified {selection_memory.age(time.time() - when)} · " if when else "")
            + "vacuous: " + vacuous_meaning()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "verify":
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.verifying = False
            self.query_one("#verify-progress").display = False
            self._update_summary()
            self.refresh_bindings()
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            reporter(self).report_error(event.worker.error, context="verify", title="Verify failed")
