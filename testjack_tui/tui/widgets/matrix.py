"""The replay matrix: a task's confirmed witnesses × its trials, filling in as replay runs.

Each cell is one witness run on one trial's model world: ✗ fails (the trial violates the
requirement), ✓ passes, · not run yet, ~ flaky, ! error. Enter on a cell opens that run's
output. This is the lightweight loop made visible: one audit's witness refuting many trials.
Only cells that changed are redrawn.
"""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Label

from testjack_tui.engine.runner import is_failing
from testjack_tui.tui.live_state import LiveSession
from testjack_tui.tui.live_views import short_id
from testjack_tui.tui.text import cell
from testjack_tui.tui.widgets.tables import SteadyTable

CELL = {"fails": ("✗", "bold red"), "passes": ("✓", "green"), "not_run": ("·", "dim"),
        "flaky": ("~", "bold yellow"), "error": ("!", "yellow")}


def cell_kind(status: str | None) -> str:
    """The cell for a runner status; "fails" and "error" both count as failing (runner.is_failing)."""
    if not status:
        return "not_run"
    if "flaky" in status:
        return "flaky"
    if status == "failed":
        return "fails"
    return "error" if is_failing(status) else "passes"


def matrix_of(state: LiveSession, task_id: str) -> tuple[list[str], list[str], dict[tuple[str, str], tuple[str, str | None]]]:
    """(witness ids, trial ids, {(witness, trial): (status, run key)}) for one task."""
    witnesses = [w for w, e in state.witnesses.items() if e.task_id == task_id]
    for (task, witness, _), _value in state.replays.items():
        if task == task_id and witness not in witnesses:
            witnesses.append(witness)
    trials = sorted(t.trial_id for t in state.trials.values()
                    if t.task_id == task_id and t.state not in ("not_reproducible", "excluded"))
    cells = {(w, t): v for (task, w, t), v in state.replays.items() if task == task_id}
    return witnesses, trials, cells


class ReplayMatrix(Vertical):
    BINDINGS = [Binding("t", "next_task", "Next task", id="matrix.next_task")]

    class OpenRun(Message):
        def __init__(self, task_id: str, witness_id: str, trial_id: str, status: str, run_key: str | None):
            super().__init__()
            self.task_id, self.witness_id, self.trial_id = task_id, witness_id, trial_id
            self.status, self.run_key = status, run_key

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task_id = ""
        self.pinned = False  # the operator chose a task with t: stop following the current one
        self._layout: tuple[object, ...] = ()  # (task, witnesses, trials) last laid out
        self._drawn: dict[tuple[str, str], str] = {}
        self._state: LiveSession | None = None
        self.cells: dict[tuple[str, str], tuple[str, str | None]] = {}

    def compose(self) -> ComposeResult:
        yield Label("Replay matrix: no witness yet", id="matrix-title", classes="section-title")
        yield SteadyTable(id="matrix-table", cursor_type="cell", zebra_stripes=False)
        yield Label("✗ fails (refutes) · ✓ passes · · not run · ~ flaky · ! error — enter opens the run; "
                    "t: next task", id="matrix-legend")

    def show(self, state: LiveSession) -> None:
        self._state = state
        tasks = state.tasks or sorted({t.task_id for t in state.trials.values()})
        if not self.pinned or self.task_id not in tasks:
            self.task_id = state.current_task or (tasks[0] if tasks else "")
        witnesses, trials, cells = matrix_of(state, self.task_id)
        self.cells = cells
        table = self.query_one("#matrix-table", DataTable)
        layout = (self.task_id, tuple(witnesses), tuple(trials))
        if layout != self._layout:
            self._layout = layout
            self._drawn = {}
            table.clear(columns=True)
            table.add_column("Witness", key="__witness")
            table.add_column("fails", key="__fails")
            for t in trials:
                table.add_column(cell(short_id(t, self.task_id)), key=t)
            for w in witnesses:
                table.add_row(cell(short_id(w, self.task_id)), "", *["" for _ in trials], key=w)
        for w in witnesses:
            fails = 0
            for t in trials:
                status, _ = cells.get((w, t), ("", None))
                kind = cell_kind(status)
                fails += is_failing(status) if status else 0
                if self._drawn.get((w, t)) != kind:
                    mark, style = CELL[kind]
                    table.update_cell(w, t, Text(mark, style=style, justify="center"))
                    self._drawn[(w, t)] = kind
            if self._drawn.get((w, "__fails")) != str(fails):
                table.update_cell(w, "__fails", Text(str(fails), style="bold red" if fails else "dim"))
                self._drawn[(w, "__fails")] = str(fails)
        refuted = len({t for (w, t), (s, _) in cells.items() if s and is_failing(s)})
        title = (f"Replay matrix — {self.task_id}: {len(witnesses)} witness(es) × {len(trials)} trial(s); "
                 f"{refuted} trial(s) fail a witness") if witnesses else \
            f"Replay matrix — {self.task_id}: no witness yet (confirmed witnesses are replayed on every trial)"
        self.query_one("#matrix-title", Label).update(cell(title))

    def action_next_task(self) -> None:
        if self._state is None:
            return
        tasks = self._state.tasks or sorted({t.task_id for t in self._state.trials.values()})
        if not tasks:
            return
        i = tasks.index(self.task_id) if self.task_id in tasks else -1
        self.task_id = tasks[(i + 1) % len(tasks)]
        self.pinned = True
        self.show(self._state)

    @on(DataTable.CellSelected, "#matrix-table")
    def _cell(self, event: DataTable.CellSelected) -> None:
        witness = event.cell_key.row_key.value or ""
        trial = event.cell_key.column_key.value or ""
        if trial.startswith("__"):
            return
        status, key = self.cells.get((witness, trial), ("", None))
        self.post_message(self.OpenRun(self.task_id, witness, trial, status, key))
