"""One copy per witness: two candidates are the same test when their normalised source is the
same, i.e. they assert the same thing on the same input whatever the test, class or local
variable names, docstrings, comments and layout. Counts, reports and exports keep the first
(by id order of confirmation) and list the others as its duplicates.
"""
from __future__ import annotations

import ast
import hashlib
import re
from typing import Iterable
from .records import JsonObject


class _Canonical(ast.NodeTransformer):
    """Rename test functions, classes, parameters and local variables by order of appearance."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, old: str, prefix: str) -> str:
        if old not in self.names:
            self.names[old] = f"{prefix}{len(self.names)}"
        return self.names[old]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:  # noqa: N802 - ast API
        if node.name.startswith("test") or node.name.startswith("_"):
            node.name = self._name(node.name, "f")
        for arg in node.args.args + node.args.kwonlyargs:
            if arg.arg not in ("self", "cls"):
                arg.arg = self._name(arg.arg, "v")
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:  # noqa: N802
        node.name = self._name(node.name, "c")
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802
        if isinstance(node.ctx, ast.Store) or node.id in self.names:
            node.id = self._name(node.id, "v")
        return node


def _drop_docstring(node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        node.body = node.body[1:] or [ast.Pass()]


def fingerprint(source: str) -> str:
    """A key equal for the same test written differently (see the module docstring)."""
    try:
        tree = ast.parse(source)
        if not tree.body:
            raise ValueError("no code")  # comments only: compare the text
        _drop_docstring(tree)
        text = ast.dump(_Canonical().visit(tree), include_attributes=False)
    except (SyntaxError, ValueError):
        text = "\n".join(re.sub(r"\s+", " ", line).strip() for line in source.splitlines() if line.strip())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def group(witnesses: Iterable[JsonObject]) -> dict[str, str]:
    """witness id -> the id of the first witness of the same task with the same fingerprint
    (itself for the first)."""
    first: dict[tuple[str, str], str] = {}
    out: dict[str, str] = {}
    for w in witnesses:
        key = (w.get("task_id", ""), fingerprint(w.get("source") or ""))
        out[w["id"]] = first.setdefault(key, w["id"])
    return out
