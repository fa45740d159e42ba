"""The trials of the session with their standing in the loop."""
from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from testjack_tui.tui.live_state import LiveSession, short_id

STATE_STYLE = {
    "pending": "dim", "active": "cyan", "sampled": "bold magenta", "refuted": "bold red",
    "clean": "green", "ambiguous": "yellow", "not_reproducible": "dim yellow", "excluded": "dim",
}
STATE_TEXT = {"clean": "audited clean", "ambiguous": "ambiguous only",
              "not_reproducible": "not reproducible"}


class TrialsTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in (("task", "Task"), ("trial", "Trial"), ("model", "Model"),
                           ("state", "State"), ("by", "Refuted by / note")):
            self.add_column(label, key=key)

    def show(self, state: LiveSession) -> None:
        rows = sorted(state.trials.values(), key=lambda t: (t.task_id, t.trial_id))
        keep = self.cursor_row
        self.clear()
        for t in rows:
            style = STATE_STYLE.get(t.state, "")
            marker = "▶ " if (t.task_id, t.trial_id) == (state.current_task, state.round_trial) \
                and state.running else ""
            self.add_row(t.task_id, marker + short_id(t.trial_id, t.task_id), t.model,
                         Text(STATE_TEXT.get(t.state, t.state), style=style), short_id(t.by, t.task_id),
                         key=f"{t.task_id}/{t.trial_id}")
        if rows:
            self.move_cursor(row=min(max(keep, 0), len(rows) - 1))
