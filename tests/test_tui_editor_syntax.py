"""The TUI's operator editor parses a candidate with the task's own toolchain before it is
shared (issue 29.1), as the CLI's `--candidate` is (tests/test_lang_operator.py): a syntax error
is the toolchain's one line on the status line and nothing reaches the engine; the same file
fixed is shared. Every language: Python by its parser in-process, Go, TypeScript (vitest),
JavaScript (jest) and Rust in a null world of their fixture's task, real podman (the fixtures'
images are the ones tests/test_lang_*.py build)."""
from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, Input, Static, TextArea

from conftest import ROOT
from test_lang_operator import BROKEN, CASES
from tui_wait import wait_for

from testjack_tui.tui.widgets.editor import OperatorEditor

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1200)]

FIXTURES = ROOT / "tests" / "fixtures"
# The fix of each broken candidate: the line the toolchain named, made right.
FIXED = {"go": ('if Slugify("a" {', 'if Slugify("a") != "a" {'), "typescript": ("= ;", "= 1;"),
         "jest": ("toBe(1;", "toBe(1);"), "rust": ("= ;", "= 1;")}


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.shared: list[OperatorEditor.Share] = []

    def compose(self) -> ComposeResult:
        yield OperatorEditor(id="editor")

    def on_operator_editor_share(self, message: OperatorEditor.Share) -> None:
        self.shared.append(message)


def _status(editor: OperatorEditor) -> str:
    return str(editor.query_one("#editor-status", Static).render())


async def _settle(pilot, editor: OperatorEditor) -> None:
    """Until the toolchain's check is over (its worker group empty); a hang guard bounds it."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _fill(editor: OperatorEditor, path: str, source: str) -> None:
    editor.query_one("#editor-path", Input).value = path
    editor.query_one("#editor-source", TextArea).text = source
    editor.query_one("#editor-requirement", Input).value = "the clause it checks"


@pytest.mark.parametrize("language", list(BROKEN))
async def test_the_editor_refuses_a_candidate_its_toolchain_cannot_parse(language):
    from testjack_tui.benchmarks import load_benchmark

    fixture, task_id, *_, path = CASES[language]
    _, source, line, tool = BROKEN[language]
    task = load_benchmark(FIXTURES / fixture).tasks[task_id]
    async with Host().run_test() as pilot:
        editor = pilot.app.query_one(OperatorEditor)
        editor.set_framework(task.tests.framework, task=task)
        _fill(editor, path, source)
        await pilot.click("#editor-share")
        await _settle(pilot, editor)
        status = _status(editor)
        assert status.startswith(f"not ready: source: line {line}: ") and f"({tool})" in status, status
        assert status.endswith(f"checked in task {task_id}'s world") and "\n" not in status, status
        assert pilot.app.shared == []
        before, after = FIXED[language]
        _fill(editor, path, source.replace(before, after))
        await pilot.click("#editor-validate")  # the check alone: says so, shares nothing
        await _settle(pilot, editor)
        assert _status(editor).startswith("looks runnable — its toolchain parses it"), _status(editor)
        assert pilot.app.shared == []
        await pilot.click("#editor-share")
        await _settle(pilot, editor)
        await wait_for(pilot, lambda: bool(pilot.app.shared), what="the test shared")
        [shared] = pilot.app.shared
        assert (shared.path, shared.source) == (path, source.replace(before, after))
        # One toolchain run per file: the share, the check of the fixed file; sharing the file
        # just checked runs no world again.
        assert editor.checks == 2


async def test_the_editor_refuses_python_it_cannot_parse_without_a_world():
    async with Host().run_test() as pilot:
        editor = pilot.app.query_one(OperatorEditor)
        editor.set_framework("pytest", task=None)
        _fill(editor, "tests/test_tj_x.py", "def test_x():\n    assert f(1 == 1\n")
        await pilot.click("#editor-share")
        await wait_for(pilot, lambda: _status(editor).startswith("not ready"), what="the editor's refusal")
        status = _status(editor)
        assert status.startswith("not ready: source: line 2: ") and "never closed" in status, status
        assert pilot.app.shared == [] and editor.checks == 0
        _fill(editor, "tests/test_tj_x.py", "def test_x():\n    assert 1 == 1\n")
        # Pressed, not clicked: a second click at once on the same spot is read as a double click.
        editor.query_one("#editor-share", Button).press()
        await wait_for(pilot, lambda: bool(pilot.app.shared), what="the test shared")
        assert [m.path for m in pilot.app.shared] == ["tests/test_tj_x.py"], _status(editor)
