"""Candidate tests run under names the trial's code cannot predict, and are reported under the
names their author gave them.

A trial's library code runs inside the test process: it can look at the test file's name, the
calling test's function name (`sys._getframe`, `PYTEST_CURRENT_TEST`) and behave only there.
So each run renames the candidate test files (`test_<word>_<word>_<hex>.py`) and the test functions,
methods and classes defined in them (to names built like the canaries' names, so a witness
looks like a canary: sandbox/canaries.py). Ids go in renamed (`run_id`) and outcomes, ids and
messages come back under the original names (`restore`). Ids in a runner's own scheme that name
the module (Django's `test_m (app.test_x.Class)`) come back with the original module and names
too. Only definitions are renamed; the run log keeps the run's names (it is what ran).
"""
from __future__ import annotations

import ast
import dataclasses
import random
import re
import secrets
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .api import TestOutcome
from .canaries import _name


@dataclass
class HiddenNames:
    paths: dict[str, str] = field(default_factory=dict)  # repo path -> the path it runs under
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # run path -> {name: run name}

    def run_id(self, test_id: str) -> str:
        path, sep, rest = test_id.partition("::")
        run_path = self.paths.get(path, path)
        names = self.names.get(run_path)
        if names and rest:
            rest = "::".join(_swap(part, names) for part in rest.split("::"))
        return run_path + sep + rest

    def original_id(self, run_id: str) -> str:
        back_paths = {new: old for old, new in self.paths.items()}
        path, sep, rest = run_id.partition("::")
        names = self.names.get(path)
        if names and rest:
            back = {new: old for old, new in names.items()}
            rest = "::".join(_swap(part, back) for part in rest.split("::"))
        return back_paths.get(path, path) + sep + rest

    def restore(self, outcomes: dict[str, TestOutcome]) -> dict[str, TestOutcome]:
        """Outcomes keyed and worded with the original names."""
        if not self.paths and not self.names:
            return outcomes
        words = {new: old for old, new in self.paths.items()}
        # Runners that name tests by module (Django's `test_m (app.test_x.Class)`) say the stem.
        words.update({PurePosixPath(new).stem: PurePosixPath(old).stem for old, new in self.paths.items()})
        for names in self.names.values():
            words.update({new: old for old, new in names.items()})
        pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
        out = {}
        for node, outcome in outcomes.items():
            node = self.original_id(node)
            if "::" not in node and words:  # an id in a runner's own scheme
                node = pattern.sub(lambda m: words[m.group(0)], node)
            message = pattern.sub(lambda m: words[m.group(0)], outcome.message) if words else outcome.message
            out[node] = dataclasses.replace(outcome, id=node, message=message)
        return out


def _swap(part: str, names: dict[str, str]) -> str:
    """An id part (`name` or `name[params]`) with its name swapped by `names`."""
    name, bracket, params = part.partition("[")
    return names.get(name, name) + bracket + params


def hide(files: dict[str, str]) -> tuple[HiddenNames, dict[str, str]]:
    """(the renaming, files under their run paths with their tests renamed) for candidate test
    modules (not conftest.py, not helpers: those are imported by name)."""
    hidden = HiddenNames()
    run_files: dict[str, str] = {}
    rng = random.Random(secrets.randbits(64))
    taken: set[str] = set()
    for path, text in files.items():
        p = PurePosixPath(path)
        if p.suffix != ".py" or not (p.name.startswith("test_") or p.name.endswith("_test.py")):
            run_files[path] = text
            continue
        # Nothing of the author's name is kept (a prefix is as good as the name to a trial).
        new = (f"{_name(rng, taken)}.py" if p.name.startswith("test_")
               else f"{_name(rng, taken, prefix='')}_test.py")
        run_path = str(p.with_name(new))
        hidden.paths[path] = run_path
        source, names = rename_tests(text, rng)
        run_files[run_path] = source
        if names:
            hidden.names[run_path] = names
    return hidden, run_files


def rename_tests(source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
    """The source with its test functions, test classes and their test methods renamed at their
    definitions, and {old name: new name}. Unparsable source comes back unchanged."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source, {}
    taken: set[str] = set()
    names: dict[str, str] = {}
    edits: list[tuple[int, str, str]] = []  # (line number, keyword, name)

    def new_name(old: str, is_class: bool) -> str:
        if old not in names:
            fresh = _name(rng, taken)
            names[old] = ("Test" + "".join(w.capitalize() for w in fresh[5:].split("_"))
                          if is_class else fresh)
        return names[old]

    def visit_functions(body: list[ast.stmt], in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _test_name(node.name):
                new_name(node.name, False)
                edits.append((node.lineno, "def", node.name))
            elif isinstance(node, ast.ClassDef) and not in_class and (
                    (node.name.startswith("Test") and len(node.name) > 4) or _lone_test_case(node, source)):
                new_name(node.name, True)
                edits.append((node.lineno, "class", node.name))
                visit_functions(node.body, True)

    visit_functions(tree.body, False)
    if not edits:
        return source, {}
    lines = source.splitlines(keepends=True)
    for lineno, keyword, old in edits:
        i = lineno - 1
        if 0 <= i < len(lines):
            lines[i] = re.sub(rf"(\b{keyword}\s+){re.escape(old)}\b",
                              lambda m: m.group(1) + names[old], lines[i], count=1)
    return "".join(lines), names


def _lone_test_case(node: ast.ClassDef, source: str) -> bool:
    """A unittest class named otherwise (Django's `FooTests(SimpleTestCase)`), renamed only when
    nothing else in the file names it: only definitions are renamed. Canaries' classes are
    `Test<Words>`, so a witness class must not keep a shape of its own."""
    bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
    return (any(b.endswith("TestCase") for b in bases)
            and len(re.findall(rf"\b{re.escape(node.name)}\b", source)) == 1)


def _test_name(name: str) -> bool:
    return name.startswith("test") and len(name) > 4
