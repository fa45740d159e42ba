"""DataTable helpers shared by the live tables."""
from __future__ import annotations

from textual.widgets import DataTable


def clear_rows(table: DataTable) -> None:
    """Clear the rows and let column widths follow what is shown now: DataTable keeps the
    widest cell it ever saw, so a finished session would look different depending on which
    intermediate states happened to be drawn."""
    table.clear()
    for column in table.columns.values():
        if column.auto_width:
            column.content_width = column.label.cell_len
