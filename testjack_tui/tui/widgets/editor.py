"""Operator mode: write a candidate test, check it, and share it with the engine."""
from __future__ import annotations

import ast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from rich.text import Text
from textual.widgets import Button, Input, Label, Static, TextArea

from testjack_tui.tui.text import cell, untrusted

TEMPLATE = '''"""A witness candidate: checks one requirement of the task prompt."""


def test_requirement():
    # Arrange the input the prompt talks about, call the code, assert what the prompt asks.
    assert True
'''


def check_candidate(path: str, source: str) -> list[str]:
    """Problems a candidate has before it is worth running (empty list: looks runnable)."""
    problems = []
    if not path.strip():
        problems.append("path: give the file's path in the repo, e.g. tests/test_tj_x.py")
    elif not path.strip().endswith(".py") or "/test" not in "/" + path.strip():
        problems.append("path: a pytest file named test_*.py")
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        problems.append(f"source: line {error.lineno}: {error.msg}")
        return problems
    tests = [n for n in ast.walk(tree)
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]
    if not tests:
        problems.append("source: no test function (def test_...)")
    return problems


class WitnessSource(TextArea):
    """The candidate's source. ctrl+a selects all, as in most editors: TextArea binds it to
    the line start (home does that too) and its own select-all key, F7, is the Log tab here."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", show=False)]


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

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.queued: list[tuple[str, str, str]] = []  # (target, path, requirement) shared, not yet run

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
        yield Static("Tab indents · ctrl+a selects all · ctrl+o leaves the source (to Requirement) · F2–F9 tabs", id="editor-keys",
                     classes="dialog-detail")

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

    def validate(self) -> bool:
        path, source, requirement = self.values()
        problems = check_candidate(path, source)
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
        if self.validate():
            self.post_message(self.Share(*self.values()))

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
