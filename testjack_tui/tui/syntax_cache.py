"""One compiled highlight query per language for every editor of the process.

Textual 8 compiles a TextArea's tree-sitter highlight query each time the area gets a document
(`SyntaxAwareDocument.prepare_query`, ~30 ms for Python's): the Audit screen's editor pays it on
every open, and again whenever the waiting task's language changes it. A compiled query is only
read (each highlight pass runs it through a QueryCursor of its own), so one per (language, query
text) serves every editor.
"""
from __future__ import annotations

from typing import Any

from textual.document._syntax_aware_document import SyntaxAwareDocument

_COMPILED: dict[tuple[Any, str], Any] = {}
_PREPARE = SyntaxAwareDocument.prepare_query


def _prepare_query(self: SyntaxAwareDocument, query: str) -> Any:
    key = (self.language, query)
    if key not in _COMPILED:
        _COMPILED[key] = _PREPARE(self, query)
    return _COMPILED[key]


def install() -> None:
    """Compile each query once (a Textual whose method was already replaced is left as it is)."""
    if SyntaxAwareDocument.prepare_query is _PREPARE:
        SyntaxAwareDocument.prepare_query = _prepare_query  # type: ignore[method-assign]
