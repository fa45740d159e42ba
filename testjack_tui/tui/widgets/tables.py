"""DataTable helpers shared by the live tables."""
from __future__ import annotations

from typing import TYPE_CHECKING, Hashable, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Log

if TYPE_CHECKING:
    from textual.scroll_view import ScrollView

    _ScrollViewMixin = ScrollView  # what the mixin is put in front of (typing only)
else:
    _ScrollViewMixin = object

Cell = Text | str  # what our tables show: untrusted text made a Text (tui/text.cell), or plain words


class SteadyScroll(_ScrollViewMixin):
    """For a ScrollView (DataTable, Log): every layout pass of the screen hands each widget its
    size and the layout's idea of its virtual size, which for a ScrollView never equals the one
    it keeps itself, so its scrollbars were refreshed on every pass, and a scrollbar at the
    other end of the screen stretched each tab switch's repaint to the whole screen. The
    scrollbars are updated only when the size, the container or the content's size changed."""

    _steady_layout: tuple[Size, Size, Size]

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        key = (size, self.virtual_size, container_size)
        if key == getattr(self, "_steady_layout", None):
            return False
        self._steady_layout = key
        return super()._size_updated(size, virtual_size, container_size, layout)


class SteadyLog(SteadyScroll, Log):
    """A Log whose scrollbar is not redrawn by unrelated layout passes (SteadyScroll), which
    works out its style once per repaint, not once per line (Log asks for `rich_style`, a walk
    up the DOM, for every line it draws: ~5 ms per repaint of a streaming world's output),
    draws a line once, and measures new lines on the app's thread, not in a new thread per
    write."""

    _pass_style: Style | None = None

    @property
    def rich_style(self) -> Style:
        if self._pass_style is not None:
            return self._pass_style
        return super().rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        self._pass_style = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    def _render_line_strip(self, y: int, rich_style: Style) -> Strip:
        # Log renders each plain line through a rich Text and the console, and its line cache
        # is only filled while a selection is on (so every repaint re-rendered every line): a
        # plain line is one segment in the widget's style, kept until the lines or styles change.
        if self.text_selection is not None or self.highlight:
            return super()._render_line_strip(y, rich_style)
        line = self._render_line_cache.get(y)
        if line is None:
            text = self._process_line(self._lines[y])
            line = Strip([Segment(text, rich_style)], self._line_width(text))
            self._render_line_cache[y] = line
        return line

    def _update_size(self, updates: int, lines: list[str]) -> None:  # type: ignore[override]
        # Log starts a thread per write for this; a flush brings tens of lines, and the
        # thread's start and its hand-back cost more than measuring them here.
        if lines:
            self._update_maximum_width(updates, max(map(self._line_width, lines)))

    @classmethod
    def _line_width(cls, line: str) -> int:
        # Plain ASCII without tabs is as wide as it is long (control codes become one "�"):
        # a world's 2,000 buffered lines measure in 0.1 ms instead of 2.4.
        if line.isascii() and "\t" not in line:
            return len(line)
        return cell_len(cls._process_line(line))


class SteadyTable(SteadyScroll, DataTable[Cell]):
    """A DataTable that keeps its rendered lines when a tab hides and shows it.

    DataTable drops every cached cell and line on each Resize (one arrives whenever a hidden
    tab is shown again, same size or not) and on each style update (focus and blur restyle it,
    and the tab keys move focus into the table they show), although its caches are keyed by
    size and by the focus state already. Rebuilding a 15-row table cost ~7 ms of every tab
    switch. Here only a real size change or a change of the styles themselves (theme, CSS)
    drops them."""

    # Set on first use (read with getattr until then).
    _steady_size: Size
    _steady_styles: dict[Hashable, tuple[int, Style]]
    _synced_cells: dict[str, list[Cell]]  # what sync_rows last drew
    _synced_widths: list[int] | None

    def _on_resize(self, event: events.Resize) -> None:
        event.prevent_default()  # DataTable's own handler bumps the update count on any Resize
        if self.size != getattr(self, "_steady_size", None):
            self._steady_size = self.size
            self._update_count += 1

    def _style_signature(self) -> tuple[int, Style]:
        # The app's CSS generation (a theme or stylesheet change bumps it) and the table's own
        # style (an ancestor's class can change it); the components (cursor, header, stripes)
        # are styled by DataTable's CSS only, through the focus state that keys the caches.
        return (self.app._css_update_count, self.rich_style)

    def notify_style_update(self) -> None:
        Widget.notify_style_update(self)  # the widget's own style caches, always
        state = self.get_pseudo_class_state()
        signature = self._style_signature()
        seen: dict[Hashable, tuple[int, Style]] = getattr(self, "_steady_styles", {})
        if seen.get(state, signature) == signature:
            # Same styles as the last time the table had this focus state: the caches
            # (keyed by that state) still hold. Style lookups per cell kind are not keyed by it.
            seen[state] = signature
            self._steady_styles = seen
            self._styles_cache.clear()
            self._get_styles_to_render_cell.cache_clear()
            self.refresh()
            return
        self._steady_styles = {state: signature}
        super().notify_style_update()


def clear_rows(table: SteadyTable) -> None:
    """Clear the rows and let column widths follow what is shown now: DataTable keeps the
    widest cell it ever saw, so a finished session would look different depending on which
    intermediate states happened to be drawn."""
    table.clear()
    table._synced_cells = {}  # what sync_rows last drew
    table._synced_widths = None
    for column in table.columns.values():
        if column.auto_width:
            column.content_width = column.label.cell_len


def text_width(cell: Cell) -> int:
    """Cells the widest line of a table cell takes."""
    if isinstance(cell, Text):
        return max((cell_len(line) for line in cell.plain.splitlines()), default=0)
    return max((cell_len(line) for line in str(cell).splitlines()), default=0)


def column_room(table: SteadyTable, rows: Sequence[Sequence[Cell]], index: int, last_keeps: int,
                width: int) -> int:
    """Cells column `index` can have in `width` once the table's other columns have what their
    cells need, the last column (which takes whatever is left) at most `last_keeps` of them."""
    columns = list(table.columns.values())
    room = width - table.styles.scrollbar_size_vertical  # kept free, shown or not (see candidates)
    for i, col in enumerate(columns):
        needed = max([col.label.cell_len] + [text_width(cells[i]) for cells in rows if i < len(cells)])
        if i != index:
            room -= (min(needed, last_keeps) if i == len(columns) - 1 else needed) + 2 * table.cell_padding
    return room - 2 * table.cell_padding


def fit(text: Text, width: int) -> Text:
    """`text` cut to `width` cells with an ellipsis when it is longer."""
    if text.cell_len <= width:
        return text
    cut = text.copy()
    cut.truncate(max(1, width), overflow="ellipsis")
    return cut


def sync_rows(table: SteadyTable, rows: Sequence[tuple[str, Sequence[Cell]]]) -> bool:
    """Show `rows` ((key, cells) in order, cells in column order), touching only the cells that
    changed when the same rows are on show with the same column widths; anything else (rows
    added, removed or reordered, a column that must grow or shrink) rebuilds the table, so
    what is drawn never depends on which intermediate states were drawn. Returns True when it
    rebuilt."""
    shown: dict[str, list[Cell]] = getattr(table, "_synced_cells", {})
    keys = [key for key, _ in rows]
    columns = list(table.columns.values())
    widths = [max([col.label.cell_len] + [text_width(cells[i]) for _, cells in rows]) for i, col in enumerate(columns)]
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
    # DataTable measures new rows when it is next idle: a frame painted before that (likely on a
    # busy machine) drew columns as wide as their labels, and when the measure then matched the
    # last one nothing repainted them, so names stayed cut. The widths are known here.
    for column, width in zip(columns, widths):
        if column.auto_width:
            column.content_width = width
    table._synced_cells = {key: list(cells) for key, cells in rows}
    table._synced_widths = widths
    return True
