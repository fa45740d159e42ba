"""Operator mode: write a candidate test, check it, and share it with the engine."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from rich.text import Text
from textual.widgets import Button, Input, Label, Static, TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from testjack_tui.tui import syntax_cache
from testjack_tui.tui.text import cell, untrusted

TEMPLATE = '''"""A witness candidate: checks one requirement of the task prompt."""


def test_requirement():
    # Arrange the input the prompt talks about, call the code, assert what the prompt asks.
    assert True
'''


# The editor's starting file per kind of test file (the task's runner decides the kind).
TEMPLATES = {
    "python": ("tests/test_tj_operator.py", "python", TEMPLATE),
    "go": ("operator_tj_test.go", "go", '// A witness candidate: checks one requirement of the task prompt.\n'
           'package main // the package of the code it tests (put the file beside it)\n\nimport "testing"\n\n'
           'func TestTJRequirement(t *testing.T) {\n\t// Arrange the input the prompt talks about, call the code, '
           'check what the prompt asks.\n}\n'),
    "rust": ("tests/tj_operator.rs", "rust", "// A witness candidate: checks one requirement of the task prompt.\n"
             "#[test]\nfn requirement() {\n    // Arrange the input the prompt talks about, call the code, "
             "assert what the prompt asks.\n}\n"),
    "js": ("test/operator.tj.test.ts", "javascript",
           "// A witness candidate: checks one requirement of the task prompt.\n"
           "// (vitest: import { describe, it, expect } from \"vitest\"; jest and mocha have them as globals)\n"
           "describe(\"requirement\", () => {\n  it(\"does what the prompt asks\", () => {\n  });\n});\n"),
}
# The JS runners differ in what a test file may use and which files they collect: node --test
# runs *.test.js with node:test's describe/it (no globals, no .ts), vitest imports its own, jest
# and mocha give globals. The walk: a node --test task opened on test/operator.tj.test.ts.
JS_TEMPLATES = {
    "node --test": ("test/operator.tj.test.js", "javascript",
                    "// A witness candidate: checks one requirement of the task prompt.\n"
                    "import { describe, it } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\n"
                    "describe(\"requirement\", () => {\n  it(\"does what the prompt asks\", () => {\n  });\n});\n"),
    "vitest": ("test/operator.tj.test.ts", "javascript",
               "// A witness candidate: checks one requirement of the task prompt.\n"
               "import { describe, it, expect } from \"vitest\";\n\n"
               "describe(\"requirement\", () => {\n  it(\"does what the prompt asks\", () => {\n  });\n});\n"),
    "jest": ("test/operator.tj.test.js", "javascript",
             "// A witness candidate: checks one requirement of the task prompt (describe, it, expect are jest's globals).\n"
             "describe(\"requirement\", () => {\n  it(\"does what the prompt asks\", () => {\n  });\n});\n"),
    "mocha": ("test/operator.tj.test.js", "javascript",
              "// A witness candidate: checks one requirement of the task prompt (describe, it are mocha's globals).\n"
              "const assert = require(\"node:assert/strict\");\n\n"
              "describe(\"requirement\", () => {\n  it(\"does what the prompt asks\", () => {\n  });\n});\n"),
}


def template_for(runner: str | None, kind: str) -> tuple[str, str, str]:
    """(default path, editor language, starting source) for a task's runner and its file kind."""
    return JS_TEMPLATES.get(runner or "", TEMPLATES[kind]) if kind == "js" else TEMPLATES[kind]


def check_candidate(path: str, source: str, framework: str | None = None) -> list[str]:
    """Problems a candidate has before it is worth running (empty list: looks runnable), in the
    terms of the task's runner when it is known (a .go file for go test, .ts for vitest...)."""
    from testjack_tui.commands.operator_input import check_source, kind_of, runner_kind
    from testjack_tui.errors import InputError

    problems = []
    path = path.strip()
    kind = kind_of(path)
    name, takes = runner_kind(framework) if framework else (None, None)
    if not path:
        problems.append("path: give the file's path in the repo, e.g. " + template_for(name, takes or "python")[0])
    elif takes and kind != takes:
        problems.append(f"path: the task's runner {name} takes {template_for(name, takes)[0].rpartition('.')[2]} files")
    elif kind is None:
        problems.append("path: a test file (.py, .go, .rs, .ts/.js)")
    elif kind == "python" and "/test" not in "/" + path:
        problems.append("path: a pytest file named test_*.py")
    try:
        check_source(PurePosixPath(path if kind else "x.py"), source)
    except InputError as error:
        problems.append("source: " + error.message)
    return problems


class WitnessSource(TextArea):
    """The candidate's source. ctrl+a selects all, as in most editors: TextArea binds it to
    the line start (home does that too) and its own select-all key, F7, is the Log tab here."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", show=False)]


EDITOR_KEYS = "Tab indents · ctrl+a all · ctrl+o to Requirement · F2–F9 tabs"


class OperatorEditor(Vertical):
    """Tab indents inside the source (it is Python), ctrl+a selects all; ctrl+o leaves the source for the
    Requirement field, F2–F9 switch tabs.
    The header says which trial a shared test is aimed at; the tests shared for the audit that
    waits are listed until ctrl+d hands them to the engine."""

    class Share(Message):
        def __init__(self, path: str, source: str, requirement: str):
            super().__init__()
            self.path, self.source, self.requirement = path, source, requirement

    class Finish(Message):
        pass

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        syntax_cache.install()  # the source's highlight query, compiled once per process
        self.queued: list[tuple[str, str, str]] = []  # (target, path, requirement) shared, not yet run
        self.framework: str | None = None  # the waiting task's (set_framework)
        self.waiting_task: Any = None  # the waiting task: its world parses non-Python candidates
        self.checks = 0  # toolchain checks run
        self._latest = 0  # the number of the last check asked for: only its answer counts
        # (task, kind, path, source) its toolchain parsed: sharing a file just checked runs no world again.
        self.parsed: set[tuple[str, str, str, str]] = set()

    def compose(self) -> ComposeResult:
        yield Static("No audit waits for your tests now; a shared test goes to the next one that does.",
                     id="editor-target")
        with Horizontal(classes="form-row"):
            yield Label("Path", classes="form-label")
            yield Input("tests/test_tj_operator.py", id="editor-path", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Requirement", classes="form-label")
            yield Input(placeholder='the clause it checks; "quote the prompt" to make it explicit',
                        id="editor-requirement",
                        compact=True)
        yield WitnessSource.code_editor(TEMPLATE, language="python", id="editor-source")
        with Horizontal(id="editor-buttons"):
            yield Button("Validate (ctrl+k)", id="editor-validate", compact=True)
            yield Button("Share (ctrl+e)", variant="primary", id="editor-share", compact=True)
            yield Button("Done with this audit (ctrl+d)", id="editor-finish", compact=True)
        yield Static("", id="editor-status")
        yield Static("", id="editor-queue")
        # One row: it must fit 80 columns (the longer wording lost "F2–F9 tabs" there).
        yield Static(EDITOR_KEYS, id="editor-keys",
                     classes="dialog-detail")

    def set_framework(self, framework: str | None, task: Any = None) -> None:
        """The waiting audit's task runs under this framework: the editor speaks its language
        (and an untouched starting file becomes that language's); a candidate is parsed by its
        toolchain in a world of `task` when checked or shared."""
        from testjack_tui.commands.operator_input import runner_kind

        self.framework = framework
        self.waiting_task = task if task is not None else self.waiting_task
        runner, kind = runner_kind(framework)
        if kind is None:
            return
        source = self.query_one("#editor-source", TextArea)
        path = self.query_one("#editor-path", Input)
        starts = [*TEMPLATES.values(), *JS_TEMPLATES.values()]
        if source.text in {t[2] for t in starts} and path.value in {t[0] for t in starts}:
            path.value, language, text = template_for(runner, kind)
            source.text = text
            try:
                source.language = language
            except LanguageDoesNotExist:  # its tree-sitter grammar is not installed: plain text
                source.language = None

    def set_target(self, waiting: tuple[str, str | None] | None) -> None:
        target = self.query_one("#editor-target", Static)
        if waiting is None:
            target.update("No audit waits for your tests now; a shared test goes to the next one that does.")
            return
        task, trial = waiting
        aim = f"trial {trial}" if trial else "the task analysis (solution-blind: no trial, no G)"
        target.update(Text.assemble(("aimed at: ", "bold"), cell(aim, "bold yellow"), cell(f"  task {task}", "dim"),
                                    ("  — the engine waits for your tests", "yellow")))

    def add_queued(self, target: str, path: str, requirement: str) -> None:
        self.queued.append((target, path, requirement))
        self._show_queue()

    def clear_queued(self) -> None:
        self.queued.clear()
        self._show_queue()

    def _show_queue(self) -> None:
        text = Text()
        if self.queued:
            text.append(f"shared, queued for the engine ({len(self.queued)}; ctrl+d runs them):\n", style="bold")
            for target, path, requirement in self.queued:
                text.append_text(cell(f"  {path}", "cyan"))
                text.append_text(cell(f"  → {target}: ", "dim"))
                text.append_text(untrusted(requirement))
                text.append("\n")
        self.query_one("#editor-queue", Static).update(text)

    def values(self) -> tuple[str, str, str]:
        return (self.query_one("#editor-path", Input).value.strip(),
                self.query_one("#editor-source", TextArea).text,
                self.query_one("#editor-requirement", Input).value.strip())

    def validate(self, then_share: bool = False) -> bool:
        """The checks that need no world now; then, for a Go, Rust or JS/TS file and a known
        task, its toolchain's parse in a world of that task (as the CLI's --candidate gets:
        commands/operator_input.py check_syntax), in a worker: the status line says the
        toolchain's one-line error, or the file is shared when `then_share`."""
        if not self._local_check():
            return False
        from testjack_tui.commands.operator_input import kind_of

        path, source, _ = self.values()
        kind = kind_of(path)
        if kind == "python" or self.waiting_task is None:
            if then_share:
                self.post_message(self.Share(*self.values()))
            return True
        self._latest += 1
        if (self.waiting_task.id, kind or "", path, source) in self.parsed:
            self._checked(self._latest, None, "", then_share, path, source)
            return True
        self.checks += 1
        self.set_status(f" {path} with the task's {kind} toolchain, in a world of {self.waiting_task.id}…",
                        lead="checking", lead_style="bold")
        self._toolchain_check(self._latest, self.waiting_task, kind or "", path, source, then_share)
        return True

    @work(thread=True, group="syntax", exclusive=True)
    def _toolchain_check(self, number: int, task: Any, kind: str, path: str, source: str,
                         then_share: bool) -> None:
        from testjack_tui.services.test_files import syntax_check

        found, unavailable = syntax_check([(path, task, kind, path, source)])
        if not found and not unavailable:
            self.parsed.add((task.id, kind, path, source))
        self.app.call_from_thread(self._checked, number, found, unavailable, then_share, path, source)

    def _checked(self, number: int, found: tuple[Any, str, str] | None, unavailable: str, then_share: bool,
                 path: str, source: str) -> None:
        if number != self._latest:
            return  # a later check replaced this one
        if unavailable and not then_share:  # not parsed: said so, and sharing stays the operator's call
            self.set_status(f" — its toolchain could not check it here ({unavailable}); the engine's "
                            "runs will say", lead="not checked", lead_style="bold yellow")
            return
        if found:
            _, task_id, error = found
            self.set_status(f"source: {error}, checked in task {task_id}'s world",
                            lead="not ready: ", lead_style="bold red")
            return
        if then_share:  # what was checked, not what the operator typed since
            self.post_message(self.Share(path, source, self.values()[2]))
            return
        self.set_status(" — its toolchain parses it; share it and the engine runs it on the reference and "
                        "model worlds", lead="looks runnable", lead_style="bold green")

    def _local_check(self) -> bool:
        path, source, requirement = self.values()
        problems = check_candidate(path, source, self.framework)
        if not requirement:
            problems.append("requirement: say which clause of the prompt this checks")
        status = self.query_one("#editor-status", Static)
        if problems:
            # Problems quote the path and Python's own message ("'[' was never closed").
            status.update(Text.assemble(("not ready: ", "bold red"), untrusted("; ".join(problems))))
            return False
        status.update(Text.assemble(("looks runnable", "bold green"), " — share it and the engine runs it on "
                                    "the reference and model worlds"))
        return True

    def share(self) -> None:
        self.validate(then_share=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "editor-validate":
            self.validate()
        elif event.button.id == "editor-share":
            self.share()
        elif event.button.id == "editor-finish":
            self.post_message(self.Finish())

    def set_status(self, text: str | Text, lead: str = "", lead_style: str = "") -> None:
        """`lead` in `lead_style`, then `text` (names, errors: never read as markup)."""
        self.query_one("#editor-status", Static).update(
            Text.assemble((lead, lead_style), untrusted(text)) if lead else untrusted(text))
