"""DataTable helpers shared by the live tables."""
from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable


def clear_rows(table: DataTable) -> None:
    """Clear the rows and let column widths follow what is shown now: DataTable keeps the
    widest cell it ever saw, so a finished session would look different depending on which
    intermediate states happened to be drawn."""
    table.clear()
    table._synced_cells = {}  # what sync_rows last drew
    table._synced_widths = None
    for column in table.columns.values():
        if column.auto_width:
            column.content_width = column.label.cell_len


def _width(cell) -> int:
    if isinstance(cell, Text):
        return max((cell_len(line) for line in cell.plain.splitlines()), default=0)
    return max((cell_len(line) for line in str(cell).splitlines()), default=0)


def sync_rows(table: DataTable, rows: list[tuple[str, list]]) -> bool:
    """Show `rows` ((key, cells) in order, cells in column order), touching only the cells that
    changed when the same rows are on show with the same column widths; anything else (rows
    added, removed or reordered, a column that must grow or shrink) rebuilds the table, so
    what is drawn never depends on which intermediate states were drawn. Returns True when it
    rebuilt."""
    shown: dict[str, list] = getattr(table, "_synced_cells", {})
    keys = [key for key, _ in rows]
    columns = list(table.columns.values())
    widths = [max([col.label.cell_len] + [_width(cells[i]) for _, cells in rows]) for i, col in enumerate(columns)]
    # Compared with the widths of the last rebuild (DataTable measures new rows lazily).
    same_shape = (keys == list(shown) and len(table.rows) == len(keys)
                  and getattr(table, "_synced_widths", None) == widths)
    if same_shape:
        for key, cells in rows:
            before = shown[key]
            for column, old, new in zip(columns, before, cells):
                if old != new:
                    table.update_cell(key, column.key, new)
        table._synced_cells = {key: list(cells) for key, cells in rows}
        return False
    clear_rows(table)
    for key, cells in rows:
        table.add_row(*cells, key=key)
    table._synced_cells = {key: list(cells) for key, cells in rows}
    table._synced_widths = widths
    return True
