"""Candidates and witnesses: a table, and the selected one's source, runs and verdict."""
from __future__ import annotations

from typing import Any, Sequence

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from testjack_tui.repo_files import source_language
from testjack_tui.tui.widgets.tables import Cell, SteadyTable, column_room, fit, sync_rows, text_width
from testjack_tui.tui.live_state import LiveSession
from testjack_tui.tui.live_views import CandidateView, short_id
from testjack_tui.tui.text import cell, clean, untrusted

STATUS_STYLE = {"witness": "bold red", "awaiting you": "bold reverse yellow", "dropped": "dim",
                "rejected": "dim", "approved": "bold green",
                "overruled": "bold magenta", "judged": "bold green", "valid": "green", "questionable": "yellow", "invalid": "magenta",
                "discriminates": "cyan", "passes both": "dim", "fails on reference": "dim", "error": "red"}
OUTCOME_TEXT = {"discriminates": "ref ✓ model ✗", "passes_both": "passes both",
                "fails_reference": "fails ref", "error": "error"}


MIN_REQUIREMENT = 10  # below this the Requirement column scrolls rather than shrinks
MIN_TASK = 16  # a task name is cut no shorter than this (the column scrolls instead)


DECISION_TEXT = {"approved": "approved by the operator", "overruled": "OVERRULED by the operator",
                 "judged": "judged by the operator (as reviewer)", "auto": "decided automatically",
                 "questionable-awaiting": "waiting for the operator (questionable: not counted)"}


def decision_text(c: CandidateView) -> Text:
    """Who decided what: the reviewer's label, the operator's decision, its note and time."""
    import datetime

    text = Text("decision: ", style="bold")
    text.append(DECISION_TEXT.get(c.decision, c.decision),
                style="bold magenta" if c.decision == "overruled" else "bold")
    if c.reviewer_label and c.decision != "judged":
        text.append_text(cell(f" (reviewer said {c.reviewer_label})"))
        if c.label and c.label != c.reviewer_label:
            text.append_text(cell(f" → {c.label}"))
    text.append(" — counts as a witness" if c.counts else " — does not count")
    if c.decided_at and c.decision != "auto":
        at = datetime.datetime.fromtimestamp(c.decided_at).strftime("%H:%M:%S")
        text.append(f" · {at}", style="dim")
    if c.note:
        text.append("\n  note: ", style="dim")
        text.append_text(untrusted(c.note, style="italic"))
    said = c.operator or {}
    if said:  # the operator's own judgement of the requirement, beside the reviewer's above
        text.append("\n  operator: ", style="dim")
        if "requirement" in said:
            text.append_text(untrusted(f"requirement {said['requirement']}; "))
        if "explicit" in said:
            text.append_text(untrusted(f'explicit, P says "{said.get("quote", "")}"' if said["explicit"]
                                       else "implicit (P does not state it)"))
    return text


def candidate_detail(c: CandidateView, operator_judges: bool = False) -> Group:
    head = Text()
    head.append_text(cell(c.candidate_id, "bold"))
    head.append_text(cell(f"  {c.path}  (by {c.author or '?'}, attempt {c.attempt})", "dim"))
    head.append("\nrequirement: ", style="bold")
    head.append_text(untrusted(c.requirement or "—"))
    head.append("\noracle: ", style="bold")
    head.append_text(cell(f"reference {c.reference or '…'} · model {c.model or '…'}"
                          + (f" → {OUTCOME_TEXT.get(c.outcome, c.outcome.replace('_', ' '))}" if c.outcome else "")))
    head.append("\n")
    for world, of in (("reference", c.reference_of), ("trial", c.model_of)):
        if of:  # nothing ran there for it: the same test's earlier run answered
            head.append_text(cell(f"  {world}: the run of {of} (the same test)", "dim"))
            head.append("\n")
    for world, summary in c.runs[-4:]:
        head.append_text(cell(f"  run on {world}: {summary}", "dim"))
        head.append("\n")
    if c.dropped:
        head.append_text(untrusted(f"dropped: {c.dropped}\n", "yellow"))
    said = c.reviewer_label or c.label  # the reviewer's own word, beside (never under) the operator's
    if said:
        head.append("reviewer: ", style="bold")
        head.append_text(cell(said, STATUS_STYLE.get(said, "")))
        if c.explicit is not None:
            head.append(" (explicit in the prompt)" if c.explicit else " (implicit requirement)", style="dim")
        head.append_text(untrusted(f" — {c.reason}\n" if c.reason else "\n"))
    if c.decision == "pending":
        hint = ("awaiting your judgement: enter / v opens it; a = valid (counts as a witness), o = invalid\n"
                if operator_judges else
                "awaiting your decision: enter / v opens it; a approves the reviewer, o overrules it\n")
        head.append(hint, style="bold reverse yellow")
    elif c.decision:
        head.append_text(decision_text(c))
        head.append("\n")
    if c.witness:
        head.append("WITNESS (confirmed)\n", style="bold red")
    source = Syntax(clean(c.source) or "# (source not received yet)", source_language(c.path or "", "python"), line_numbers=True,
                    word_wrap=False, theme="ansi_dark")
    return Group(head, source)


class CandidatesPanel(Vertical):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.selected_id: str | None = None
        self._state: LiveSession | None = None
        self.operator_judges = False  # the operator is the reviewer: a = valid, o = invalid
        # The detail follows the top row (pending decisions, else the newest candidate) until
        # the operator moves the cursor themselves.
        self.follow = True
        self._laid_out_width = 0

    def compose(self) -> ComposeResult:
        yield SteadyTable(id="candidate-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="candidate-detail"):
            yield Static("No candidates yet. They appear as agents propose tests.", id="candidate-text")

    def on_mount(self) -> None:
        self.with_task: bool | None = None
        self._columns(True)

    def _columns(self, with_task: bool) -> None:
        # The Task column only when the session spans several tasks: their candidate ids repeat.
        if with_task == self.with_task:
            return
        self.with_task = with_task
        table = self.query_one("#candidate-table", DataTable)
        table.clear(columns=True)
        for key, label in (("task", "Task"), ("id", "Candidate"), ("trial", "Trial"), ("status", "Status"),
                           ("oracle", "Oracle"), ("requirement", "Requirement")):
            if key != "task" or with_task:
                table.add_column(label, key=key)

    def ordered(self, state: LiveSession) -> list[CandidateView]:
        # Decisions waiting for the operator first, then newest first.
        items = list(state.candidates.values())
        pending = [c for c in items if c.decision == "pending"]
        rest = [c for c in reversed(items) if c.decision != "pending"]
        return pending + rest

    def show(self, state: LiveSession) -> None:
        self._state = state
        table = self.query_one("#candidate-table", SteadyTable)
        rows = self.ordered(state)
        self._columns(len({c.task_id for c in rows} | set(state.tasks)) > 1)
        table_rows = []
        for c in rows:
            status = c.status
            cells = [cell(short_id(c.candidate_id, c.task_id)), cell(short_id(c.trial_id or "analysis", c.task_id)),
                     Text(status, style=STATUS_STYLE.get(status, "")),
                     cell(OUTCOME_TEXT.get(c.outcome, c.outcome.replace("_", " ")))]
            if self.with_task:
                cells.insert(0, cell(c.task_id))
            table_rows.append((c.candidate_id, cells))
        # The width laid out for: 0 while the tab is hidden, so showing it redraws at its width
        # (the walk: requirements cut to 9 cells in a 116-cell pane after a hidden update).
        self._laid_out_width = self.size.width
        if self.with_task and table_rows:
            # Task names whole when the pane has room for them and MIN_REQUIREMENT cells of the
            # requirement; cut with an ellipsis only as far as they must be.
            width = table.size.width or self.size.width or 10_000
            room = column_room(table, [cells + [""] for _, cells in table_rows], 0, MIN_REQUIREMENT, width)
            for _, cells in table_rows:
                cells[0] = fit(cells[0], max(MIN_TASK, room))
        room = self._requirement_room(table, [cells for _, cells in table_rows])
        for (_, cells), c in zip(table_rows, rows):
            cells.append(fit(cell(c.requirement or ""), room))
        sync_rows(table, table_rows)
        if not rows:
            return
        ids = [c.candidate_id for c in rows]
        if self.follow or self.selected_id not in ids:
            self.selected_id = ids[0]
        table.move_cursor(row=ids.index(self.selected_id), animate=False)
        self._show_detail()

    def _requirement_room(self, table: SteadyTable, rows: Sequence[Sequence[Cell]]) -> int:
        """Cells left for the Requirement column once the other columns have what they need:
        the requirement takes the rest of the pane's width (whatever the screen and the trials
        pane leave), and the detail below shows it whole."""
        columns = list(table.columns.values())[:-1]
        needed = sum(max([col.label.cell_len] + [text_width(cells[i]) for cells in rows]) + 2 * table.cell_padding
                     for i, col in enumerate(columns))
        # The vertical scrollbar's columns are kept free, shown or not, so that a table
        # growing past its height does not push the last column out of sight.
        width = (table.size.width or self.size.width) - table.styles.scrollbar_size_vertical
        return max(MIN_REQUIREMENT, width - needed - 2 * table.cell_padding)

    def on_resize(self) -> None:
        # A Resize also arrives each time the tab is shown again: redraw only for a new width.
        if self._state is not None and self.size.width != self._laid_out_width:
            self._laid_out_width = self.size.width
            self.show(self._state)

    def _show_detail(self) -> None:
        if self._state is None or self.selected_id is None or self.selected_id not in self._state.candidates:
            return
        self.query_one("#candidate-text", Static).update(
            candidate_detail(self._state.candidates[self.selected_id], self.operator_judges))

    def on_key(self, event: events.Key) -> None:
        if event.key in ("up", "down", "pageup", "pagedown", "home", "end"):
            self.follow = False

    def on_click(self) -> None:
        self.follow = False

    @on(DataTable.RowHighlighted, "#candidate-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        if key and key != self.selected_id:
            self.selected_id = key
            self._show_detail()

    def selected(self) -> CandidateView | None:
        if self._state is None or self.selected_id is None:
            return None
        return self._state.candidates.get(self.selected_id)
