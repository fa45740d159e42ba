"""The requirements panel: the task's requirements (from the task analysis and the audits), T0's
coverage of each, and the witnesses confirmed against it with the trials they fail on."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Label

from testjack_tui.services.requirements import requirements_table
from testjack_tui.tui.live_state import short_id
from testjack_tui.tui.text import cell
from testjack_tui.tui.widgets.tables import SteadyTable


class RequirementsPanel(Vertical):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.task_id = ""
        self.rows: list = []
        self._drawn: list[tuple] = []

    def compose(self) -> ComposeResult:
        yield Label("Requirements", id="requirements-title", classes="section-title")
        yield SteadyTable(id="requirements-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in (("req", "Requirement"), ("explicit", "In P"), ("t0", "T0 covers"),
                           ("witnesses", "Witnesses"), ("fails", "Trials failing")):
            table.add_column(label, key=key)

    def show(self, store: Any, task_id: str) -> None:
        """Re-read the store for one task; redraw only when something changed."""
        self.task_id = task_id
        self.rows = requirements_table(store, task_id) if task_id else []
        drawn = [(r.clause, r.explicit, r.covered_by_t0, tuple(r.witnesses), len(r.failing_trials),
                  len(r.open_questions)) for r in self.rows]
        if drawn == self._drawn:
            return
        self._drawn = drawn
        table = self.query_one(DataTable)
        table.clear()
        for i, r in enumerate(self.rows):
            t0 = {True: Text("yes", style="green"), False: Text("NO", style="bold yellow"),
                  None: Text("not recorded", style="dim")}[r.covered_by_t0]
            explicit = {True: "explicit", False: "implicit", None: "?"}[r.explicit]
            if r.open_questions:  # someone judged a test of it questionable: P may not settle it
                explicit = "open question"
            table.add_row(cell(r.clause[:110]), explicit, t0,
                          cell(", ".join(short_id(w, task_id) for w in r.witnesses) or "—",
                               style="bold red" if r.witnesses else "dim"),
                          Text(str(len(r.failing_trials)), style="bold red" if r.failing_trials else "dim"),
                          key=str(i))
        uncovered = sum(1 for r in self.rows if r.covered_by_t0 is False)
        with_witness = sum(1 for r in self.rows if r.witnesses)
        self.query_one("#requirements-title", Label).update(cell(
            f"Requirements of {task_id}: {len(self.rows)} — {uncovered} not covered by T0, "
            f"{with_witness} with a witness" if self.rows else
            f"Requirements of {task_id}: none recorded yet (the task analysis lists them)"))
