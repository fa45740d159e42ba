"""Appending witness files to one existing Python test file without changing what any test means.

An official export can only add tests where the task's own `test.sh` already runs them, so the
witnesses are appended to a T0 test file. Every witness was written and validated as a file of its
own; pasted one after the other into one module, their top-level names would meet: a witness's
`ROWS = [...]` rebinds the `ROWS` that T0's tests read (functions look globals up when they run,
so even tests defined earlier see the new value), and two witnesses' helpers of the same name but
different bodies break one of them. T0's names are never touched; a witness's top-level name that
is already bound to something else in the file is renamed throughout that witness
(`ROWS` → `ROWS_tj_<witness>`), test functions and classes included, and the renames are returned
so the export can state the ids the grader will see. Identical bindings (the same import, the
same helper) are shared as they are.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field


@dataclass
class Folded:
    text: str
    # witness id -> {old top-level name: new name}
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)


def _bindings(tree: ast.Module) -> dict[str, tuple[str, ast.stmt]]:
    """Top-level name -> (what it is bound to, as comparable text; the binding statement)."""
    out: dict[str, tuple[str, ast.stmt]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            module = stmt.module if isinstance(stmt, ast.ImportFrom) else None
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                name = alias.asname or alias.name.split(".")[0]
                level = stmt.level if isinstance(stmt, ast.ImportFrom) and module is not None else 0
                out[name] = (f"import {module}:{level}:{alias.name}", stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = (ast.dump(stmt), stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        out[node.id] = (ast.dump(stmt), stmt)
    return out


def _suffix(witness_id: str) -> str:
    return "_tj_" + (re.sub(r"\W+", "_", witness_id).strip("_") or "w")


def _rename(source: str, tree: ast.Module, renames: dict[str, str]) -> str:
    """`source` with every top-level name in `renames` renamed where it is used as a name
    (attributes `x.ROWS` and keyword arguments `f(ROWS=...)` keep theirs)."""
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
               and any((a.asname or a.name.split(".")[0]) in renames for a in s.names)]
    in_import = {row for s in imports for row in range(s.lineno, (s.end_lineno or s.lineno) + 1)}
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, col, length, new)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                                       tokenize.INDENT, tokenize.DEDENT)]
    calls: list[bool] = []  # per open bracket: is it a call's argument list?
    for i, tok in enumerate(significant):
        if tok.type == tokenize.OP and tok.string in "([{":
            calls.append(tok.string == "(" and i > 0 and significant[i - 1].type == tokenize.NAME
                         and not (i > 1 and significant[i - 2].string == "def"))
        elif tok.type == tokenize.OP and tok.string in ")]}" and calls:
            calls.pop()
        if tok.type != tokenize.NAME or tok.string not in renames or tok.start[0] in in_import:
            continue
        before = significant[i - 1].string if i else ""
        after = significant[i + 1].string if i + 1 < len(significant) else ""
        if before == "." or (calls and calls[-1] and after == "=" and before in ("(", ",")):
            continue  # an attribute, or a keyword argument of a call
        edits.append((tok.start[0], tok.start[1], len(tok.string), renames[tok.string]))
    for row, col, length, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[col + length:]
    for stmt in sorted(imports, key=lambda s: s.lineno, reverse=True):
        kept, extra = [], []
        for alias in stmt.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound not in renames:
                kept.append(alias)
            elif isinstance(stmt, ast.Import) and not alias.asname and "." in alias.name:
                # `import a.b` binds the package `a` (with `a.b` loaded): so does __import__.
                extra.append(f"{renames[bound]} = __import__({alias.name!r})")
            else:
                kept.append(ast.alias(alias.name, renames[bound]))
        stmt.names = kept
        first = lines[stmt.lineno - 1]
        indent = first[:len(first) - len(first.lstrip())]
        text = ([ast.unparse(stmt)] if kept else []) + extra
        lines[stmt.lineno - 1:stmt.end_lineno or stmt.lineno] = [indent + t + "\n" for t in text]
    return "".join(lines)


def _without_future(source: str, tree: ast.Module) -> tuple[str, ast.Module]:
    # `from __future__` must open a module; mid-file it is a syntax error. The witnesses ran
    # with it, and on the interpreters T0 runs on it only changes how annotations are kept.
    rows = {r for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"
            for r in range(s.lineno, (s.end_lineno or s.lineno) + 1)}
    if not rows:
        return source, tree
    kept = "".join(line for n, line in enumerate(source.splitlines(keepends=True), 1) if n not in rows)
    return kept, ast.parse(kept)


def fold_into(host: str, witnesses: list[tuple[str, str, str]]) -> Folded:
    """`host` with each (witness id, reason, source) appended under a comment line, its clashing
    top-level names renamed (see the module docstring). A witness that does not parse is appended
    as it is: the export's own run then reports it."""
    out = host if host.endswith("\n") else host + "\n"
    folded = Folded(out)
    try:
        bound = _bindings(ast.parse(out))
    except SyntaxError:
        bound = {}
    for witness_id, reason, source in witnesses:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            tree = None
        if tree is not None:
            source, tree = _without_future(source, tree)
            mine = _bindings(tree)
            clashes = {name for name, (what, _) in mine.items() if name in bound and bound[name][0] != what}
            renames = {name: name + _suffix(witness_id) for name in sorted(clashes)}
            if renames:
                source = _rename(source, tree, renames)
                folded.renamed[witness_id] = renames
                tree = ast.parse(source)
            bound.update(_bindings(tree))
        head = " ".join((reason or "").split())[:200]
        out += f"\n\n# --- TestJack witness {witness_id}: {head}\n" + source
        out = out if out.endswith("\n") else out + "\n"
    folded.text = out
    return folded


def renamed_id(node_id: str, renames: dict[str, str]) -> str:
    """A pytest id (`path::Class::test` or `path::test[param]`) after its witness's renames."""
    path, _, rest = node_id.partition("::")
    if not rest:
        return node_id
    parts = rest.split("::")
    head, bracket, param = parts[0].partition("[")
    parts[0] = renames.get(head, head) + bracket + param
    return "::".join([path, *parts])
