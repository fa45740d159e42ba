"""The requirements panel: the task's requirements (from the task analysis and the audits), T0's
coverage of each, and the witnesses confirmed against it with the trials they fail on."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Label

from testjack_tui.services.requirements import RequirementRow, requirements_table
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.text import cell
from testjack_tui.tui.widgets.tables import SteadyTable

if TYPE_CHECKING:
    from testjack_tui.engine.store import SessionStore


T0_STYLE = {"yes": "green", "partial": "yellow", "no": "bold yellow", "not recorded": "dim"}
FIXED_WIDTH = 60  # the short columns with their padding: the requirement gets what is left


class RequirementsPanel(Vertical):
    """One task's checklist; t shows the next task's (the panel then stays on it)."""

    BINDINGS = [Binding("t", "next_task", "Next task", id="requirements.next_task")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task_id = ""
        self.pinned = False  # the operator chose a task with t: stop following the current one
        self.rows: list[RequirementRow] = []
        self._drawn: Sequence[tuple[object, ...]] = []  # what was drawn, compared for a redraw
        self._store: SessionStore | None = None
        self._tasks: list[str] = []

    def compose(self) -> ComposeResult:
        yield Label("Requirements", id="requirements-title", classes="section-title")
        yield SteadyTable(id="requirements-table", cursor_type="row", zebra_stripes=True)
        # The keys first, and wrapped rather than cut (at 80 columns the keys fell off the end).
        yield Label("t: next task · enter or i: P with the requirement's words marked — T0: yes / partial / no / "
                    "not recorded (the task analysis's tracing, else the audits')", id="requirements-legend")

    def on_mount(self) -> None:
        self._columns(self.query_one(DataTable))

    @staticmethod
    def _columns(table: DataTable[Any]) -> None:
        for key, label in (("req", "Requirement"), ("explicit", "In P"), ("t0", "T0 covers"),
                           ("witnesses", "Witnesses"), ("fails", "Fails"), ("held", "Held")):
            table.add_column(label, key=key)

    def show(self, store: SessionStore, task_id: str, tasks: list[str] | None = None) -> None:
        """Re-read the store for one task (the pinned one once t was pressed); redraw only when
        something changed."""
        self._store = store
        if tasks is not None:
            self._tasks = list(tasks)
        if not self.pinned or self.task_id not in self._tasks:
            self.task_id = task_id
        task_id = self.task_id
        self.rows = requirements_table(store, task_id) if task_id else []
        width = max(16, min(110, (self.size.width or 120) - FIXED_WIDTH))
        drawn = [(r.clause, r.explicit, r.coverage_text(), tuple(r.witnesses), len(r.failing_trials),
                  len(r.open_questions), tuple(r.held), width) for r in self.rows]
        if drawn == self._drawn:
            return
        self._drawn = drawn
        table = self.query_one(DataTable)
        table.clear(columns=True)  # a column keeps its widest cell: narrower rows need new ones
        self._columns(table)
        for i, r in enumerate(self.rows):
            t0 = r.coverage_text()
            explicit = {True: "explicit", False: "implicit", None: "?"}[r.explicit]
            if r.open_questions:  # someone judged a test of it questionable: P may not settle it
                explicit = "open q."
            witnesses = ", ".join(short_id(w, task_id) for w in r.witnesses)
            table.add_row(cell(_clip(r.clause, width)), explicit, Text(t0, style=T0_STYLE[t0]),
                          cell(_clip(witnesses, 18) or "—", style="bold red" if r.witnesses else "dim"),
                          Text(str(len(r.failing_trials)), style="bold red" if r.failing_trials else "dim"),
                          Text(str(len(r.held)), style="green" if r.held else "dim"),
                          key=str(i))
        self.query_one("#requirements-title", Label).update(cell(checklist_title(task_id, self.rows)))

    def selected_quote(self) -> str:
        """The words of P the requirement under the cursor rests on; with no quote recorded, the
        requirement's own words (an audit often restates P verbatim: they are marked where P has
        them, and nothing is marked where it does not)."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return ""
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""
        if not (key.isdigit() and int(key) < len(self.rows)):
            return ""
        row = self.rows[int(key)]
        return row.quote or row.clause

    def on_resize(self) -> None:
        if self._store is not None:
            self.show(self._store, self.task_id)

    def action_next_task(self) -> None:
        tasks = self._tasks or ([self.task_id] if self.task_id else [])
        if not tasks or self._store is None:
            return
        i = tasks.index(self.task_id) if self.task_id in tasks else -1
        self.task_id = tasks[(i + 1) % len(tasks)]
        self.pinned = True
        self.show(self._store, self.task_id)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def checklist_title(task_id: str, rows: list[RequirementRow]) -> str:
    """The panel's header, counting each T0 answer the rows show (so it never contradicts them)."""
    if not rows:
        return f"Requirements of {task_id}: none recorded yet (the task analysis lists them)"
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.coverage_text()] = counts.get(r.coverage_text(), 0) + 1
    t0 = ", ".join(f"{counts[k]} {k}" for k in ("yes", "partial", "no", "not recorded") if counts.get(k))
    with_witness = sum(1 for r in rows if r.witnesses)
    return (f"Requirements of {task_id}: {len(rows)} · T0 covers: {t0} · {with_witness} with a witness · "
            f"{sum(1 for r in rows if r.held)} with a test that held")
