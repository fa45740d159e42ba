"""One line of a widget drawn straight from a Rich renderable.

A widget's `render()` goes through Textual's Visual conversion, ~0.5 ms for a single line of
styled text; the footer and the tab bar redraw on most key presses. The console renders the
same segments in a third of that; the widget's own style goes under them and each cell gets
its offset, as the Visual path gives them (text selection and clicks rely on it).
"""
from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget


def line_strip(widget: Widget, renderable: RenderableType, y: int) -> Strip:
    """Line `y` of `widget`: the first line `renderable` renders to at the widget's width."""
    width = widget.size.width
    base = widget.rich_style
    console = widget.app.console
    segments = []
    for segment in console.render(renderable, console.options.update_width(width)):
        if segment.text == "\n":
            break
        segments.append(segment)
    strip = Strip(list(Segment.apply_style(segments, base)))
    return strip.crop_extend(0, width, base).apply_offsets(0, y)
