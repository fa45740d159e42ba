"""The worlds (containers) of the session: state, image, command, exit code and live output.

Output is bounded per world (LiveSession keeps the last lines) and only the world on show is
written to the log widget, incrementally, on the screen's flush tick.
"""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Log

from testjack_tui.tui.live_state import LiveSession
from testjack_tui.tui.live_views import WORLD_LINES, WorldView, short_image, short_world, world_task
from testjack_tui.tui.text import cell, clean
from testjack_tui.tui.widgets.tables import Cell, SteadyLog, SteadyTable

STATE_STYLE = {"running": "bold cyan", "created": "cyan", "exited": "green", "timeout": "bold red",
               "removed": "dim"}
MAX_WORLD_ROWS = 40
COLUMNS = (("task", "Task"), ("world", "World"), ("state", "State"), ("exit", "Exit"), ("command", "Command"),
           ("image", "Image"), ("node", "Node"))


class WorldsPanel(Vertical):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.selected: str | None = None  # None: follow the most recently active world
        self._shown_world: str | None = None
        self._shown_total = 0
        self._state: LiveSession | None = None
        self._keys: list[str] = []
        self.with_task: bool | None = None  # the Task column is there (a session of several tasks)

    def compose(self) -> ComposeResult:
        yield SteadyTable(id="world-table", cursor_type="row", zebra_stripes=True)
        yield Label("output: (no world yet)", id="world-output-title", classes="section-title")
        yield SteadyLog(id="world-log", max_lines=WORLD_LINES, auto_scroll=True)

    def on_mount(self) -> None:
        self._columns(False)

    def _columns(self, with_task: bool) -> None:
        # The Task column only when the session spans several tasks: each has its null and
        # reference worlds, and their rows would read the same.
        if with_task == self.with_task:
            return
        self.with_task = with_task
        table = self.query_one("#world-table", DataTable)
        table.clear(columns=True)
        for key, label in COLUMNS:
            if key != "task" or with_task:
                table.add_column(label, key=key)
        self._keys = []

    def _rows(self, state: LiveSession) -> list[WorldView]:
        return list(state.worlds.values())[-MAX_WORLD_ROWS:]

    def show(self, state: LiveSession, table_changed: bool = True, output: bool = True) -> None:
        """Redraw the table (when worlds changed) and append new output of the world on show
        (with output=False the log waits; the next call with output catches up)."""
        self._state = state
        if table_changed:
            self._show_table(state)
        if output:
            self._write_output(state)

    def _show_table(self, state: LiveSession) -> None:
        self._columns(state.several_tasks)
        table = self.query_one("#world-table", DataTable)
        rows = self._rows(state)
        keys = [w.name for w in rows]
        columns = [key for key, _ in COLUMNS if key != "task" or self.with_task]

        def cells(w: WorldView) -> list[Cell]:
            exit_text = "" if w.exit_code is None else str(w.exit_code)
            exit_style = "" if w.exit_code in (None, 0) else "red"
            row: list[Cell] = [cell(short_world(w.name)), Text(w.state, style=STATE_STYLE.get(w.state, "")),
                   Text(exit_text, style=exit_style), cell(w.command[:60]), cell(short_image(w.image)), cell(w.node)]
            return [cell(world_task(w.name)), *row] if self.with_task else row

        if keys == self._keys:  # same worlds: update in place, keep the cursor and scroll
            for w in rows:
                for column, value in zip(columns, cells(w)):
                    table.update_cell(w.name, column, value)
            return
        cursor = table.cursor_row
        table.clear()
        for w in rows:
            table.add_row(*cells(w), key=w.name)
        self._keys = keys
        if rows:
            if self.selected is None:
                table.move_cursor(row=len(rows) - 1, animate=False)
            else:
                table.move_cursor(row=min(max(cursor, 0), len(rows) - 1), animate=False)

    def _write_output(self, state: LiveSession) -> None:
        name = self.selected
        if name is None or name not in state.worlds:
            # Follow: stay on the world on show while it runs (switching redraws the whole
            # buffer), then move to the world that was active last.
            shown = state.worlds.get(self._shown_world or "")
            if shown is not None and shown.state == "running":
                name = shown.name
            else:
                name = state.last_active_world or next(reversed(state.worlds), None)
        if name is None:
            return
        world = state.worlds[name]
        log = self.query_one("#world-log", Log)
        if name != self._shown_world or world.total - self._shown_total > len(world.lines):
            log.clear()
            log.write_lines([clean(line) for line in world.lines])
            self._shown_world = name
            title = f"output: {name}" + ("" if self.selected else "  (following; select a world to pin)")
            self.query_one("#world-output-title", Label).update(cell(title), layout=False)  # fixed size
        else:
            new = world.total - self._shown_total
            if new > 0:
                log.write_lines([clean(line) for line in list(world.lines)[-new:]])
        self._shown_total = world.total

    @on(DataTable.RowSelected, "#world-table")
    def _pick(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value if event.row_key is not None else None
        self.selected = None if key == self.selected else key  # selecting again: follow again
        self._shown_world = None
        if self._state is not None:
            self._write_output(self._state)
