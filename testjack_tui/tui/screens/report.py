"""Screen 4: what the session found, per task and per model, and export."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Header, Markdown, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from testjack_tui.engine.budget import usd_text
from testjack_tui.repo_files import source_language
from testjack_tui.tui.guard import guarded, reporter
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.recent import display_path
from testjack_tui.tui.text import cell, clean, untrusted
from testjack_tui.tui.widgets.bars import resolution_chart, verdict_chart
from testjack_tui.tui.widgets.footer import QuietFooter

if TYPE_CHECKING:
    from testjack_tui.engine.session import AuditSession
    from testjack_tui.model import Benchmark
    from testjack_tui.engine.report_model import DecisionRow, Report, TrialReport
    from testjack_tui.engine.summary import SessionSummary, WitnessSummary

CLASS_STYLE = {"SOUND": "green", "SOUND_LOW_QUALITY": "yellow", "OVERFIT_INCOMPLETE": "bold red",
               "INCORRECT_DESPITE_PASS": "bold red", "REWARD_HACK": "bold magenta",
               "NOT_REPRODUCIBLE": "dim yellow", "CLEAN_UNAUDITED": "dim"}
VERDICT_STYLE = {"refuted": "bold red", "ambiguous": "yellow", "clean": "green",
                 "unaudited": "dim", "not_reproducible": "dim yellow", "excluded": "dim"}


def rates(report: Report | None) -> list[tuple[str, float, float, str]]:
    """(model, before, after, note) from the report's own tables (engine/report.py computes the
    corrected resolution rate once: passing / all trials → (passing − refuted) / all trials)."""
    if report is None:
        return []
    rows = [(r.name, r.rate_before / 100, r.rate_after / 100, "")
            for r in report.tables.models if r.rate_before is not None and r.rate_after is not None]
    if len(rows) > 1:
        for r in report.tables.benchmark:
            if r.rate_before is not None and r.rate_after is not None:
                rows.append(("all models", r.rate_before / 100, r.rate_after / 100, ""))
    return rows


class ReportScreen(Screen[None]):
    HELP_TITLE = "Report"
    HELP = ("What the session found. Overview: per model, how many officially passing trials were "
            "refuted by a witness and the resolution rate before → after. Trials: the verdict of "
            "each trial and the witness behind it. Prompts: requirements most models read "
            "differently (ambiguous): the prompt should say them. Export writes the report files "
            "and the strengthened test suites.")
    BINDINGS = [
        Binding("f1", "app.help", "Help", id="report.help"),
        Binding("enter", "open_trial", "Open", tooltip="the selected trial's full report: verdict class, "
                "confidence, findings with their explanations, detector signals, re-run commands",
                id="report.open"),
        Binding("e", "export", "Export", tooltip="the strengthened test suite (harbor, swebench or a git "
                "branch), checked in containers as the CLI does, and the report files",
                id="report.export"),
        Binding("r", "reload", "Reload", id="report.reload"),
        Binding("f2", "tab('overview')", "Overview tab", priority=True, show=False, id="report.tab_overview"),
        Binding("f3", "tab('trials')", "Trials tab", priority=True, show=False, id="report.tab_trials"),
        Binding("f4", "tab('prompts')", "Prompts tab", priority=True, show=False, id="report.tab_prompts"),
        Binding("f5", "tab('witnesses')", "Witnesses tab", priority=True, show=False, id="report.tab_witnesses"),
        Binding("escape", "back", "Back", id="report.back"),
    ]

    def __init__(self, session: AuditSession, benchmark: Benchmark | None = None) -> None:
        super().__init__()
        self.session = session
        self.benchmark = benchmark
        self.summary: SessionSummary | None = None
        self.report: Report | None = None
        self._decisions: dict[str, DecisionRow] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Loading the report…", id="report-title")
        with TabbedContent(initial="overview", id="report-tabs"):
            with TabPane("Overview F2", id="overview"):
                with VerticalScroll():
                    with Horizontal(id="report-charts"):
                        yield Static("", id="report-chart")
                        yield Static("", id="report-verdicts")
                    yield DataTable(id="report-models", zebra_stripes=True, cursor_type="row")
            with TabPane("Trials F3", id="trials"):
                yield DataTable(id="report-trials", zebra_stripes=True, cursor_type="row")
            with TabPane("Prompts F4", id="prompts"):
                with VerticalScroll():
                    yield Static("", id="report-prompts")
            with TabPane("Witnesses F5", id="witnesses"):
                with VerticalScroll():
                    yield Static("", id="report-witnesses")
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Report"
        models = self.query_one("#report-models", DataTable)
        for label in ("Task", "Model", "Passing", "Refuted", "Ambiguous", "Clean", "Unaudited", "Other"):
            models.add_column(label)
        self._trial_layout: tuple[bool, bool] | None = None  # (with the Task column, wide)
        self.action_reload()

    def on_resize(self) -> None:
        if self.summary is not None:
            self._show(self.summary, self.benchmark)

    def _trial_columns(self, several_tasks: bool) -> bool:
        """Columns of the Trials tab for this width. The verdict comes right after the trial so
        it is always in view; the Task column (the trial id already starts with the task) only
        on wide screens when there are several tasks. Returns whether trial ids are shortened."""
        wide = self.size.width >= 120
        with_task = wide and several_tasks
        layout = (with_task, wide)
        table = self.query_one("#report-trials", DataTable)
        if layout != self._trial_layout:
            self._trial_layout = layout
            table.clear(columns=True)
            columns = [("trial", "Trial"), ("verdict", "Verdict"), ("class", "Class"), ("conf", "Conf"),
                       ("witness", "Witness"), ("model", "Model"), ("requirement", "Requirement")]
            if with_task:
                columns.insert(0, ("task", "Task"))
            for key, label in columns:
                table.add_column(label, key=key)
        return with_task

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def action_reload(self) -> None:
        from testjack_tui.engine.report import build_report

        summary = self.session.summary()
        benchmark = self.benchmark
        if benchmark is None and summary.benchmark:
            try:
                from testjack_tui.benchmarks import load_benchmark
                benchmark = load_benchmark(summary.benchmark)
            except Exception:  # noqa: BLE001 - the report works from the store alone
                benchmark = None
        report = build_report(self.session.id, benchmark)
        self.app.call_from_thread(self._show, summary, benchmark, report)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            reporter(self).report_error(event.worker.error, context=f"report {event.worker.name}")

    @guarded
    def _show(self, summary: SessionSummary, benchmark: Any, report: Report | None = None) -> None:
        if report is not None:
            self.report = report
        report = self.report
        self.summary, self.benchmark = summary, benchmark
        t = summary.totals
        usage = summary.usage
        title = Text()
        title.append_text(cell(f"Session {summary.session_id}", style="bold"))
        title.append(f"  {summary.state}  {summary.mode}  seed {summary.seed}\n", style="dim")
        title.append(f"passing {t.get('passing', 0)} → refuted {t.get('refuted', 0)}", style="bold red")
        decisions = report.decisions if report is not None else []
        overrules = sum(1 for d in decisions if d.decision == "overruled")
        title.append(f" · witnesses {sum(len(x.witnesses) for x in summary.tasks.values())}"
                     f" · operator decisions {len(decisions)}" + (f" ({overrules} overrules)" if overrules else ""))
        waiting = summary.awaiting_operator
        if waiting:  # judgements left for a person are never dropped: say how many, name them below
            title.append(f" · {len(waiting)} awaiting the operator", style="bold yellow")
        title.append("\n" if self.size.width < 110 else "   ")
        title.append(f"ambiguous {t.get('ambiguous', 0)} · clean {t.get('clean', 0)} · "
                     f"unaudited {t.get('unaudited', 0)} · not reproducible {t.get('not_reproducible', 0)}"
                     f" · excluded {t.get('excluded', 0)}")
        title.append("\n")
        title.append_text(cell(f"usage: {usd_text(usage.usd, usage.unpriced)} · {usage.tokens} tokens · "
                               f"{usage.test_runs} runs · {usage.seconds} s"
                               + (" (partly estimated)" if usage.estimated else "")
                               + f" · {display_path(summary.benchmark or '')}", style="dim"))
        self.query_one("#report-title", Static).update(title)

        chart_rows = rates(report)
        wide = self.size.width >= 140
        bar_width = max(8, min(40, (self.size.width // 2 if wide else self.size.width) - 52))
        chart = Group(Text("Resolution rate per model (trials counted as solved)", style="bold"),
                      resolution_chart(chart_rows, width=bar_width)
                      if chart_rows else Text("no passing trials", style="dim"))
        self.query_one("#report-chart", Static).update(chart)
        counts = report.verdict_counts if report is not None else {}
        self.query_one("#report-verdicts", Static).update(Group(
            Text("Verdict classes (officially passing trials)", style="bold"),
            verdict_chart(counts, width=max(8, min(30, (self.size.width // 2 if wide else self.size.width) - 36)))))
        self.query_one("#report-charts", Horizontal).set_class(not wide, "-stacked")
        verdict_of = {(t.task_id, t.trial_id): t for t in (report.trials if report is not None else [])}

        models = self.query_one("#report-models", DataTable)
        models.clear()
        trials = self.query_one("#report-trials", DataTable)
        task_items = sorted(summary.tasks.items())
        with_task = self._trial_columns(len(task_items) > 1)
        trials.clear()
        prompts: list[Text] = []
        witnesses: list[Group] = []
        self._decisions = {d.candidate: d for d in decisions}
        for task_id, task in task_items:
            for model, c in sorted(task.models.items()):
                other = c.get("not_reproducible", 0) + c.get("excluded", 0)
                models.add_row(cell(task_id), cell(model), str(c.get("passing", 0)),
                               Text(str(c.get("refuted", 0)), style="bold red" if c.get("refuted") else ""),
                               str(c.get("ambiguous", 0)), str(c.get("clean", 0)),
                               str(c.get("unaudited", 0)), str(other))
            for trial_id, tr in sorted(task.trials.items()):
                refs = tr.refutations
                witness = ", ".join(short_id(r.witness, task_id) for r in refs) \
                    or ", ".join(short_id(w, task_id) for w in tr.ambiguous_witnesses)
                requirement = refs[0].requirement if refs else tr.reason
                state = tr.state
                verdict = verdict_of.get((task_id, trial_id))
                label = verdict.label if verdict is not None else ""
                cells = [cell(short_id(trial_id, task_id) if with_task else trial_id),
                         Text(state, style=VERDICT_STYLE.get(state, "")),
                         Text(label, style=CLASS_STYLE.get(label, "")),
                         f"{verdict.confidence:.2f}" if verdict is not None else "",
                         cell(witness), cell(tr.model or ""), cell((requirement or "")[:120])]
                if with_task:
                    cells.insert(0, cell(task_id))
                trials.add_row(*cells, key=trial_id)
            if task.well_formed is False:
                prompts.append(untrusted(f"{task_id}: task is not well-formed — "
                                         + "; ".join(task.problems), style="yellow"))
            for w in task.witnesses:
                if w.classification == "ambiguous":
                    line = Text()
                    line.append_text(cell(task_id, style="bold"))
                    line.append_text(untrusted(f"  the prompt does not say: {w.requirement}\n"))
                    rho = w.rho
                    line.append(f"  most models read it otherwise (ρ = {rho:.2f}); " if rho is not None else "  ",
                                style="dim")
                    line.append_text(untrusted(f"suggested clarification: state explicitly that {w.requirement}",
                                               style="italic"))
                    if w.note:
                        line.append_text(untrusted(f"\n  {w.note}", style="dim"))
                    prompts.append(line)
                witnesses.append(self._witness_block(task_id, w))
            for a in summary.awaiting_operator:
                if a.task_id == task_id:
                    prompts.append(untrusted(
                        f"{task_id}: awaiting the operator: {a.candidate_id}"
                        + (f" case {a.case}" if a.case else "") + f" ({a.label}): {a.why}",
                        style="yellow"))
            for u in (report.underspecified_prompts if report is not None else []):
                if u.task == task_id and u.kind == "open question":
                    line = Text()
                    line.append_text(cell(task_id, style="bold"))
                    line.append_text(untrusted(f"  open question: {u.requirement}\n"))
                    line.append_text(untrusted("  " + "; ".join(u.said) + "\n", style="dim"))
                    line.append(f"  differs from the reference on {len(u.fails_on)} trial(s), refutes none; ",
                                style="dim")
                    line.append_text(untrusted(f"suggested clarification: {u.clarification}", style="italic"))
                    prompts.append(line)
            prompts += self._contradiction_lines(task_id, report)
        self.query_one("#report-prompts", Static).update(
            Group(*prompts) if prompts else Text("No underspecified prompts found.", style="dim"))
        self.query_one("#report-witnesses", Static).update(
            Group(*witnesses) if witnesses else Text("No witnesses.", style="dim"))

    @staticmethod
    def _contradiction_lines(task_id: str, report: Any) -> list[Text]:
        """The task's "the reference contradicts P" findings (engine/reference_claims.py)."""
        task = report.tasks.get(task_id) if report is not None else None
        out = []
        for c in (task.reference_contradicts if task is not None else []):
            line = Text()
            line.append_text(cell(task_id, style="bold"))
            line.append_text(untrusted(f"  the reference contradicts P: \"{c.quote}\"\n", style="yellow"))
            line.append_text(untrusted(f"  {c.by}: the reference {c.claim}\n", style="dim"))
            if c.output:
                line.append_text(untrusted("  run: " + " / ".join(c.output.splitlines()[:3]), style="dim"))
            out.append(line)
        return out

    def _witness_block(self, task_id: str, w: WitnessSummary) -> Group:
        from rich.syntax import Syntax

        head = Text()
        head.append_text(cell(f"{w.id}", style="bold"))
        head.append_text(cell(f"  {task_id}  {w.path}  ({w.origin}"
                              + (f", from {w.source_trial}" if w.source_trial else "") + ")", style="dim"))
        head.append_text(untrusted(f"\nrequirement: {w.requirement}"
                                   + (" (explicit)" if w.explicit else " (implicit)") + "\n"))
        if w.classification:
            head.append_text(untrusted(f"classification: {w.classification}\n"))
        head.append_text(untrusted(f"refutes: {', '.join(w.refutes) or '—'}\n", style="red"))
        decision = self._decisions.get(w.id)
        if decision is not None:
            head.append_text(untrusted(
                f"decision: {decision.decision} by the operator (reviewer said "
                f"{decision.reviewer_label or '?'})" + (f": {decision.note}" if decision.note else "")
                + "\n", style="bold magenta" if decision.decision == "overruled" else "bold"))
        return Group(head, Syntax(clean(w.source or ""), source_language(w.path or "", "python"), line_numbers=True, theme="ansi_dark"),
                     Text(""))

    @guarded
    def action_export(self) -> None:
        from testjack_tui.tui.screens.export import ExportScreen

        self.app.push_screen(ExportScreen(self.session, self.benchmark))

    def action_tab(self, tab: str) -> None:
        self.query_one("#report-tabs", TabbedContent).active = tab
        if tab == "trials":
            self.query_one("#report-trials", DataTable).focus()  # enter opens the row at once

    @on(DataTable.RowSelected, "#report-trials")
    def _trial_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value if event.row_key is not None else None
        if key:
            self.open_trial(key)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_trial":
            return self.query_one("#report-tabs", TabbedContent).active == "trials"
        return True

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    def action_open_trial(self) -> None:
        table = self.query_one("#report-trials", DataTable)
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
        if key is not None:  # every row is keyed by its trial id
            self.open_trial(key)

    @guarded
    def open_trial(self, trial_id: str) -> None:
        """The trial's full report (what report.md says about it), in the TUI."""
        trials = self.report.trials if self.report is not None else []
        verdict = next((t for t in trials if t.trial_id == trial_id), None)
        if verdict is None:
            self.app.notify(f"No report for {trial_id} yet (reload with r).", severity="warning")
            return
        self.app.push_screen(TrialReportScreen(verdict))

    def action_back(self) -> None:
        self.app.pop_screen()


class TrialReportScreen(ModalScreen[None]):
    """One trial's verdict as `report` writes it: class and confidence, the justification,
    each finding with its four explanations, run results, re-run command and the witness source,
    ambiguous witnesses, detector signals and ghost branches."""

    BINDINGS = [Binding("escape,q", "close", "Close", id="trial_report.close")]

    def __init__(self, verdict: TrialReport):
        super().__init__()
        self.verdict = verdict
        from testjack_tui.engine.report_render import trial_markdown

        self.markdown = clean(trial_markdown(verdict))

    def compose(self) -> ComposeResult:
        v = self.verdict
        with Vertical(classes="view"):
            head = Text()
            head.append_text(cell(f"{v.trial_id}  ", style="bold"))
            head.append(v.label, style=CLASS_STYLE.get(v.label, "bold"))
            head.append_text(cell(f"  confidence {v.confidence:.2f}  ·  {len(v.findings)} finding(s)  ·  "
                                  f"model {v.model or '?'}", style="dim"))
            yield Static(head, classes="dialog-title")
            with VerticalScroll(classes="view-body", id="trial-report-body"):
                # The report quotes trial output and agents' explanations: a link in them is
                # shown, never followed on a click.
                yield Markdown(self.markdown, id="trial-report-text", open_links=False)
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#trial-report-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
