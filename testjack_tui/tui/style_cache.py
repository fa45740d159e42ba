"""Textual's cache of a widget's background colours, keyed by the colours alone.

Textual 8 caches `StylesCache.get_inner_outer(base, background)` with `lru_cache(1024)` on the
method, so the key holds the widget's StylesCache, and with it every line it last rendered (a
Strip and its seven small caches each). After the widget is gone, up to 1024 of them stay alive:
in a session that opens and closes dialogs, screens and report rows, ~7,000 objects per closed
screen that every full collection walks again (Textualize/textual#6665, open). The result depends
only on the two colours, so one cache shared by every widget gives the same styles and holds no
widget.
"""
from __future__ import annotations

from functools import lru_cache

from textual._styles_cache import StylesCache
from textual.color import Color
from textual.style import Style


@lru_cache(1024)
def inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """The inner and outer background of a widget on `base_background` (Textual's own formula)."""
    return Style(background=base_background + background), Style(background=base_background)


def _get_inner_outer(self: StylesCache, base_background: Color, background: Color) -> tuple[Style, Style]:
    return inner_outer(base_background, background)


def install() -> None:
    """Replace Textual's per-widget cache with `inner_outer` (once; a Textual whose method is no
    longer an lru_cache has changed it and is left as it is)."""
    if hasattr(StylesCache.get_inner_outer, "cache_clear"):
        StylesCache.get_inner_outer.cache_clear()  # what earlier apps of this process left there
        StylesCache.get_inner_outer = _get_inner_outer  # type: ignore[method-assign,assignment]
