"""Candidate tests run under names the trial's code cannot predict, and are reported under the
names their author gave them.

A trial's code runs inside the test process (a conftest hook or library code in Python, a Go
TestMain, a mocha exit hook, a jest processor): it can look at the test file's name and the
test's own name (`sys._getframe`, `PYTEST_CURRENT_TEST`, `-test.run`, a JSON report) and
forge or behave only there. Canaries (sandbox/canaries.py) catch a forgery of every result; a
forgery aimed at one *known* witness name is caught by not having that name. So each run gives
the candidate test files fresh names and renames the tests defined in them, with names built
like the canaries' names in that language, so a witness looks like a canary.

One mechanism for every language (`hide`, `HiddenNames`): ids go in renamed (`run_id`) and
outcomes, ids and messages come back under the original names (`restore`); ids in a runner's
own scheme that name the module or binary (Django's `test_m (app.test_x.Class)`, Go's
`<import path>.TestX`, cargo's `<package>::<target>: <test>`) come back with the original
names too. A runner only says, through its `names` style (`NameStyle`), which files are test
files, what a fresh file name looks like, how tests are renamed in its language and how an id
splits into names:
- Python (`PYTHON`): `test_*.py` / `*_test.py` modules; test functions, methods and classes.
- Go (`GO`): `*_test.go`; `func TestX(t *testing.T)` (not TestMain, Example or Fuzz).
- Rust (`RUST`): integration tests `tests/<name>.rs`; `#[test]` functions.
- JavaScript/TypeScript (`JS`): `*.test.*` / `*.spec.*`, files under `__tests__/` and files an
  id names; the literal titles of describe/it/test/suite/context/specify (a title built at run
  time, like `test.each`'s, keeps its text).
Only definitions are renamed; the run log keeps the run's names (it is what ran).
"""
from __future__ import annotations

import ast
import dataclasses
import random
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Callable, Protocol

from .api import TestOutcome
from .canaries import _camel, _go_package, _name
from .test_ids import module_of


class NameStyle(Protocol):
    """How one language's candidate test files and tests are renamed; everything else (fresh
    names per run, mapping ids both ways) is this module's."""

    # A regex with one group: what separates the names in an id after its file (`::`, ` > `),
    # or a tail that is kept as written (pytest's `[params]`, Go's `/subtest`).
    id_parts: str

    def test_file(self, path: PurePosixPath, requested: bool) -> bool:
        """Is this candidate file a test file to rename (`requested`: an id names it)?"""
        ...

    def file_name(self, path: PurePosixPath, rng: random.Random, taken: set[str]) -> str:
        """A fresh base name for the test file (its runner still collects it)."""
        ...

    def rename(self, source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        """(the source with its tests renamed at their definitions, {old name: new name})."""
        ...

    def scheme_id(self, test_id: str, old: str, new: str, names: dict[str, str]) -> str | None:
        """An id in the runner's own scheme (Go's `<import path>.TestX`, cargo's
        `<package>::<target>: <test>`) naming a test of the file `old`, under the run's names
        (`new`, `names`); None when it names none of that file's tests."""
        ...


@dataclass
class HiddenNames:
    paths: dict[str, str] = field(default_factory=dict)  # repo path -> the path it runs under
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # run path -> {name: run name}
    style: NameStyle | None = None  # None: nothing renamed

    def run_id(self, test_id: str) -> str:
        """The id under the run's names (an id of no renamed file is unchanged)."""
        if self.style is None:
            return test_id
        for old, new in self.paths.items():
            if test_id == old:
                return new
            for sep in ("::", ": "):  # `<file>: <name>` is JS's grader scheme
                if test_id.startswith(old + sep):
                    names = self.names.get(new, {})
                    rest = test_id[len(old) + len(sep):]
                    parts = re.split(self.style.id_parts, rest)
                    # Even items are names, odd ones the separators and kept tails.
                    swapped = [names.get(p, p) if i % 2 == 0 else p for i, p in enumerate(parts)]
                    return new + sep + "".join(swapped)
        for old, new in self.paths.items():
            found = self.style.scheme_id(test_id, old, new, self.names.get(new, {}))
            if found is not None:
                return found
        return test_id

    def _words(self) -> dict[str, str]:
        words = {new: old for old, new in self.paths.items()}
        # Runners that name tests by module or binary (Django's `test_m (app.test_x.Class)`,
        # cargo's `<package>::<target>: <test>`) and Go's messages (`x_test.go:9:`) say the stem
        # or the base name.
        for old, new in self.paths.items():
            o, n = PurePosixPath(old), PurePosixPath(new)
            words.update({n.name: o.name, n.stem: o.stem})
        for names in self.names.values():
            words.update({new: old for old, new in names.items()})
        return words

    def original_id(self, run_id: str) -> str:
        swap = _swapper(self._words())
        return swap(run_id) if swap else run_id

    def swap_text(self, text: str) -> str:
        """Text (a problem, a message) with the run's names swapped back."""
        return self.original_id(text)

    def restore_keys(self, table: dict[str, Any]) -> dict[str, Any]:
        """A table keyed by run ids, keyed by the original ids."""
        swap = _swapper(self._words())
        return {swap(k): v for k, v in table.items()} if swap else dict(table)

    def restore(self, outcomes: dict[str, TestOutcome]) -> dict[str, TestOutcome]:
        """Outcomes keyed and worded with the original names. The run's names are fresh random
        words, so swapping them back wherever they occur (ids of any scheme, messages) is safe."""
        swap = _swapper(self._words())
        if swap is None:
            return outcomes
        out = {}
        for node, outcome in outcomes.items():
            node = swap(node)
            out[node] = dataclasses.replace(outcome, id=node, message=swap(outcome.message))
        return out


def _swapper(words: dict[str, str]) -> Callable[[str], str] | None:
    """A function that swaps every word for its original, longest first; made once per run.
    Plain substring replacement, no regex: a run's words are fresh random names (a random hex
    part each), so none overlaps another except as its own stem, which the longest-first order
    settles, and no original contains one. (One alternation pattern of a hundred words cost the
    engine 0.05-0.2 CPU-s per run to build and apply.)"""
    if not words:
        return None
    order = sorted(words.items(), key=lambda item: len(item[0]), reverse=True)

    def swap(text: str) -> str:
        for word, original in order:
            if word in text:
                text = text.replace(word, original)
        return text
    return swap


def _names_file(test_id: str, path: str) -> bool:
    return test_id == path or test_id.startswith((path + "::", path + ": "))


# Draws of a run name that holds a hidden name before one is kept anyway: only a name every draw
# holds (a test named `test_`) gets that far, and holding it tells a trial nothing (the
# canaries' names hold it too). Any other name is avoided on the first draws.
_DRAWS = 100


def hide(files: dict[str, str], style: NameStyle | None = None, test_ids: Iterable[str] = ()
         ) -> tuple[HiddenNames, dict[str, str]]:
    """(the renaming, files under their run paths with their tests renamed) for candidate test
    files in `style`'s language (Python when None); other files (conftest.py, helpers: imported
    by name) keep their names. `test_ids`: the run's ids (a file an id names is a test file)."""
    way: NameStyle = style or PYTHON
    ids = list(test_ids)
    hidden = HiddenNames(style=way)
    run_files: dict[str, str] = {}
    rng = random.Random(secrets.randbits(64))
    taken: set[str] = set()
    for path, text in files.items():
        p = PurePosixPath(path)
        if not way.test_file(p, any(_names_file(i, path) for i in ids)):
            run_files[path] = text
            continue
        source, names = way.rename(text, rng)
        # Nothing of the author's names is kept (a prefix is as good as the name to a trial):
        # not the file's, nor its tests' (`test_parse_value_3fa2c1.py` would name the test
        # `test_parse_value` it hides; drawn about once in 900 runs).
        hidden_names, draws = [p.stem, *names], 0
        while True:
            run_path = str(p.with_name(way.file_name(p, rng, taken)))
            if run_path in files or run_path in run_files:
                continue
            draws += 1
            if draws >= _DRAWS or not any(old in PurePosixPath(run_path).name for old in hidden_names):
                break
        hidden.paths[path] = run_path
        run_files[run_path] = source
        if names:
            hidden.names[run_path] = names
    return hidden, run_files


class PythonNames:
    """pytest and unittest modules: `test_*.py` / `*_test.py`; test functions, classes and
    their test methods (`rename_tests`)."""

    id_parts = r"(::|\[.*$)"

    def test_file(self, path: PurePosixPath, requested: bool) -> bool:
        return path.suffix == ".py" and (path.name.startswith("test_") or path.name.endswith("_test.py"))

    def file_name(self, path: PurePosixPath, rng: random.Random, taken: set[str]) -> str:
        return (f"{_name(rng, taken)}.py" if path.name.startswith("test_")
                else f"{_name(rng, taken, prefix='')}_test.py")

    def rename(self, source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        return rename_tests(source, rng)

    def scheme_id(self, test_id: str, old: str, new: str, names: dict[str, str]) -> str | None:
        # JUnit's `path.to.test_x.Class.test_y[params]` (sandbox/test_ids.py).
        module = module_of(old) + "."
        if not test_id.startswith(module):
            return None
        head, bracket, params = test_id[len(module):].partition("[")
        return module_of(new) + "." + ".".join(names.get(p, p) for p in head.split(".")) + bracket + params


PYTHON = PythonNames()


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
        # A run name that holds the old one (`TestMergeOrder…` for `TestMerge`) would let code
        # matching on the witness's own name find it: draw again.
        if old in names:
            return names[old]
        for _ in range(_DRAWS):
            fresh = _name(rng, taken)
            names[old] = ("Test" + "".join(w.capitalize() for w in fresh[5:].split("_"))
                          if is_class else fresh)
            if old not in names[old]:
                break
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


def _fresh(rng: random.Random, taken: set[str], source: str, make: str) -> str:
    """A fresh name for a test (`make`: "snake", "camel" or "words"), never one the source
    already uses."""
    while True:
        if make == "camel":
            name = _camel(rng, taken, "Test")
        else:
            name = _name(rng, taken, prefix="")
            name = " ".join(name.split("_")) if make == "words" else name
        if name not in source:
            return name


def _rename_at(source: str, pattern: re.Pattern[str], rng: random.Random, make: str
               ) -> tuple[str, dict[str, str]]:
    """Every match's `name` group renamed (the same old name always to the same new one)."""
    taken: set[str] = set()
    names: dict[str, str] = {}

    def swap(m: re.Match[str]) -> str:
        old = m.group("name")
        if old not in names:
            names[old] = _fresh(rng, taken, source, make)
        start, end = m.span("name")
        return m.group(0)[:start - m.start()] + names[old] + m.group(0)[end - m.start():]

    return pattern.sub(swap, source), names


# `func TestX(t *testing.T)`: TestMain (`*testing.M`), benchmarks, examples and fuzz targets
# keep their names (go test runs them by name shape, and examples name what they document).
_GO_TEST = re.compile(r"(?m)^func\s+(?P<name>Test\w*)\s*\(\s*\w+\s+\*\s*(?:testing\.)?T\s*\)")


class GoNames:
    """go test: `*_test.go` files; their `func TestX(t *testing.T)` (named like GoCanaries')."""

    id_parts = r"(::|/.*$)"  # `path::TestX/sub`: subtests run under their parent's new name

    def test_file(self, path: PurePosixPath, requested: bool) -> bool:
        return path.name.endswith("_test.go")

    def file_name(self, path: PurePosixPath, rng: random.Random, taken: set[str]) -> str:
        return _name(rng, taken, prefix="") + "_test.go"

    def rename(self, source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        return _rename_at(source, _GO_TEST, rng, "camel")

    def scheme_id(self, test_id: str, old: str, new: str, names: dict[str, str]) -> str | None:
        # `<import path>.TestX[/sub]`, the import path ending in the file's folder (any import
        # path for a file at the module's root: the module's path is not known here).
        package = _go_package(test_id)
        folder = str(PurePosixPath(old).parent)
        if not package or not (folder == "." or package == folder or package.endswith("/" + folder)):
            return None
        top, slash, sub = test_id[len(package) + 1:].partition("/")
        return package + "." + names[top] + slash + sub if top in names else None


GO = GoNames()

# `#[test]` (or `#[tokio::test]`, among other attributes) then the function it marks.
_RUST_TEST = re.compile(r"#\[(?:\w+::)*test\]\s*(?:#\[[^\]]*\]\s*|//[^\n]*\n\s*)*"
                        r"(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(?P<name>[A-Za-z_]\w*)")


class RustNames:
    """cargo test: integration tests `tests/<name>.rs` (a helper `tests/common/mod.rs` is not
    one); their `#[test]` functions (named like CargoCanaries')."""

    id_parts = r"(::)"

    def test_file(self, path: PurePosixPath, requested: bool) -> bool:
        return path.suffix == ".rs" and path.parent.name == "tests" and "src" not in path.parts

    def file_name(self, path: PurePosixPath, rng: random.Random, taken: set[str]) -> str:
        return _name(rng, taken, prefix="") + ".rs"

    def rename(self, source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        return _rename_at(source, _RUST_TEST, rng, "snake")

    def scheme_id(self, test_id: str, old: str, new: str, names: dict[str, str]) -> str | None:
        # nextest's `<package>::<target>: <test>`, the target being the file's stem.
        binary, sep, name = test_id.partition(": ")
        package, colons, target = binary.partition("::")
        if not (sep and colons) or target != PurePosixPath(old).stem:
            return None
        return f"{package}::{PurePosixPath(new).stem}: " + "::".join(names.get(p, p) for p in name.split("::"))


RUST = RustNames()

_JS_EXTS = (".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts")
# The literal title of describe/it/test/suite/context/specify (and their .only/.skip/...), not
# of a subtest (`t.test(...)`) or of a title built at run time (`${...}`, `test.each`).
_JS_TITLE = re.compile(
    r"(?<![\w.$])(?:describe|it|test|suite|context|specify)(?:\.(?:only|skip|todo|concurrent|sequential))?"
    r"\s*\(\s*(?P<q>['\"`])(?P<name>(?:(?!(?P=q))[^\\\n$])+)(?P=q)")


class JsNames:
    """vitest, jest, mocha, node --test: `*.test.*`, `*.spec.*`, files under `__tests__/` and
    files an id names; the titles of their suites and tests (worded like JsCanaries')."""

    id_parts = r"(::| > )"

    def test_file(self, path: PurePosixPath, requested: bool) -> bool:
        return path.name.endswith(_JS_EXTS) and (
            requested or "__tests__" in path.parts or re.search(r"\.(test|spec)\.[a-z]+$", path.name) is not None)

    def file_name(self, path: PurePosixPath, rng: random.Random, taken: set[str]) -> str:
        # The suffix the tool's include pattern matches (`.test.ts`, `.spec.js`) stays.
        m = re.search(r"(\.(test|spec))?\.[a-z]+$", path.name)
        return _name(rng, taken, prefix="") + (m.group(0) if m else ".js")

    def rename(self, source: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        return _rename_at(source, _JS_TITLE, rng, "words")

    def scheme_id(self, test_id: str, old: str, new: str, names: dict[str, str]) -> str | None:
        return None  # its grader's `<file>: <titles>` names the file (HiddenNames.run_id)


JS = JsNames()
