"""The trials of the session with their standing in the loop."""
from __future__ import annotations

from rich.text import Text

from testjack_tui.tui.widgets.tables import SteadyTable, column_room, fit, sync_rows
from testjack_tui.tui.live_state import LiveSession
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.text import cell

STATE_STYLE = {
    "pending": "dim", "active": "cyan", "sampled": "bold magenta", "refuted": "bold red",
    "clean": "green", "ambiguous": "yellow", "not_reproducible": "dim yellow", "excluded": "dim",
    "unaudited": "dim", "audit_failed": "bold yellow", "queued": "dim italic", "checking": "cyan",
}
STATE_TEXT = {"clean": "audited clean", "ambiguous": "ambiguous only", "checking": "checking T0",
              "not_reproducible": "not reproducible", "audit_failed": "AUDIT FAILED (not sound)"}


MIN_TASK = 16  # a task name is cut no shorter than this (the table scrolls instead)
MIN_NOTE = 8  # cells of the last column ("Refuted by / note") kept beside whole task names

COLUMNS = (("task", "Task"), ("trial", "Trial"), ("model", "Model"), ("state", "State"),
           ("by", "Refuted by / note"))


class TrialsTable(SteadyTable):
    """Trial ids are shown without their task prefix; the Task column appears only when the
    session spans several tasks (with one task it would repeat the same name on every row)."""

    with_task: bool | None = None
    _state: LiveSession | None = None
    _shown_width = 0

    def on_resize(self) -> None:
        # Task names are fitted to the width: a new width (a tab shown, the terminal resized) fits them again.
        if self._state is not None and self.with_task and self.size.width != self._shown_width:
            self.show(self._state)

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self._columns(True)

    def _columns(self, with_task: bool) -> None:
        if with_task == self.with_task:
            return
        self.with_task = with_task
        self.clear(columns=True)
        for key, label in COLUMNS:
            if key != "task" or with_task:
                self.add_column(label, key=key)

    def show(self, state: LiveSession) -> None:
        rows = sorted(state.trials.values(), key=lambda t: (t.task_id, t.trial_id))
        keep = self.cursor_row
        self._columns(len({t.task_id for t in rows} | set(state.tasks)) > 1)
        table_rows = []
        for t in rows:
            style = STATE_STYLE.get(t.state, "")
            marker = "▶ " if (t.task_id, t.trial_id) == (state.current_task, state.round_trial) \
                and state.running else ""
            cells = [cell(marker + short_id(t.trial_id, t.task_id)), cell(t.model),
                     Text(STATE_TEXT.get(t.state, t.state), style=style), cell(short_id(t.by, t.task_id))]
            if self.with_task:
                cells.insert(0, cell(t.task_id))
            table_rows.append((f"{t.task_id}/{t.trial_id}", cells))
        if self.with_task and table_rows:
            # Task names whole when the table has room for them beside the other columns and
            # MIN_NOTE cells of the note; cut with an ellipsis only as far as they must be.
            self._shown_width = self.size.width
            room = column_room(self, [cells for _, cells in table_rows], 0, MIN_NOTE, self.size.width or 10_000)
            for _, cells in table_rows:
                cells[0] = fit(cells[0], max(MIN_TASK, room))
        self._state = state
        # Only the cells that changed are touched (a state change repaints one row, not the
        # table); the cursor stays where the operator left it.
        if sync_rows(self, table_rows) and rows:
            self.move_cursor(row=min(max(keep, 0), len(rows) - 1))
