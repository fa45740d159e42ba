"""No import cycle anywhere in the package: every `import` statement counts, at module level,
inside functions and under `if TYPE_CHECKING:` alike (a cycle hidden from the interpreter is
still two modules that cannot be understood, tested or moved apart).

The graph is read from the source with `ast` (nothing is imported), one node per module
(a package is its `__init__`); `from pkg import name` is an edge to `pkg.name` when that is a
module, else to `pkg`. Imports made by name at run time (`importlib`) are not statements and are
not seen here.
"""
from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import pytest

import testjack_tui

# The package's graph is read once (package_graph) for both tests that read it: on one worker.
pytestmark = pytest.mark.xdist_group("pure-import-cycles")

PACKAGE = Path(testjack_tui.__file__).resolve().parent
ROOT = "testjack_tui"


def _modules(package_dir: Path, root: str) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package), for every product module (the demo's data left out)."""
    out: dict[str, tuple[Path, bool]] = {}
    # sandbox/, benchmarks/ and prompts/ are links into the package (rglob would not follow them)
    files = (Path(d, f) for d, _, names in os.walk(package_dir, followlinks=True) for f in names)
    for path in sorted(f for f in files if f.suffix == ".py"):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if "demo" in parts:  # benchmarks/demo: a benchmark's repositories, not our code
            continue
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join([root, *parts])] = (path, is_package)
    return out


def import_graph(package_dir: Path = PACKAGE, root: str = ROOT) -> dict[str, dict[str, int]]:
    """Module -> {module it imports: line of the first such import}."""
    modules = _modules(package_dir, root)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, (path, is_package) in modules.items():
        package = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in targets:
                if target == root or target.startswith(root + "."):
                    found = known(target)
                    if found and found != module:
                        graph[module].setdefault(found, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    members = set(component)
    edges = [f"  {a} -> {b} (line {line})" for a in component for b, line in graph[a].items() if b in members]
    return f"{len(component)} modules import each other:\n" + "\n".join(edges)


def test_cycles_are_found(tmp_path):
    """A cycle made only of a TYPE_CHECKING import and a function-level one is a cycle."""
    pkg = tmp_path / "pk"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "loop.py").write_text("from .sub import roles\nfrom . import env\n")
    (pkg / "env.py").write_text("import os\n")
    (pkg / "sub" / "roles.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..loop import Env\n")
    assert cycles(import_graph(pkg, "pk")) == [["pk.loop", "pk.sub.roles"]]
    (pkg / "sub" / "roles.py").write_text("def f():\n    from pk import loop\n    return loop\n")
    graph = import_graph(pkg, "pk")
    assert graph["pk.sub.roles"] == {"pk.loop": 2}
    assert graph["pk.loop"] == {"pk.sub.roles": 1, "pk.env": 2}
    assert cycles(graph) == [["pk.loop", "pk.sub.roles"]]
    (pkg / "sub" / "roles.py").write_text("from pk import env\n")
    assert cycles(import_graph(pkg, "pk")) == []
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]


@functools.cache
def package_graph() -> dict[str, dict[str, int]]:
    return import_graph()


def test_the_graph_is_read():
    graph = package_graph()
    assert "testjack_tui.engine.env" in graph["testjack_tui.engine.loop"]
    assert "testjack_tui.sandbox.backend" in graph["testjack_tui.engine.budgeted"]
    # the linked folders are walked too
    assert {"testjack_tui.sandbox.runners.base", "testjack_tui.benchmarks.swebench"} <= set(graph)


def test_no_import_cycle_in_the_package():
    graph = package_graph()
    found = cycles(graph)
    assert not found, "\n".join(_describe(graph, c) for c in found)
