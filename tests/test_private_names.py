"""A name with a leading underscore is its module's own: no other module of the package imports
it (a name two modules share is public, or lives in the module that owns it)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "testjack_tui"


def private_imports(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.relative_to(package)}:{node.lineno}: {'.' * node.level}{node.module} {a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_name():
    assert private_imports() == []


def test_the_walk_sees_a_private_import_and_passes_dunders(tmp_path):
    (tmp_path / "loop.py").write_text("from .loop_base import _cases_of, kept\nfrom x import __version__\n")
    assert private_imports(tmp_path) == ["loop.py:1: .loop_base _cases_of"]
