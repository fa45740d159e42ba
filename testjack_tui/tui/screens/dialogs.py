"""Small modal dialogs: confirm, choose from a list, edit budget limits."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, SelectionList, Static

from testjack_tui.tui.text import cell


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, detail: str = "", yes: str = "Yes", no: str = "No"):
        super().__init__()
        self.question, self.detail, self.yes, self.no = question, detail, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title")
            if self.detail:
                yield Static(self.detail, classes="dialog-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", variant="error", id="yes")
                yield Button(f"{self.no} (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class ChooseScreen(ModalScreen[list[str] | None]):
    """Tick several options (e.g. models to select trials by)."""

    BINDINGS = [
        Binding("enter", "done", "Apply", priority=True, id="choose.apply"),
        Binding("escape", "cancel", "Cancel", id="choose.cancel"),
    ]

    def __init__(self, title: str, options: list[str], selected: list[str] | None = None):
        super().__init__()
        self.title_text = title
        self.options = options
        self.selected = set(selected or [])

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            # Options are names from the benchmark (models): shown literally, never as markup.
            yield SelectionList[str](*[(cell(o), o, o in self.selected) for o in self.options], id="choices")
            yield Static("space: tick · enter: apply · esc: cancel", classes="dialog-detail")

    def action_done(self) -> None:
        self.dismiss(list(self.query_one("#choices", SelectionList).selected))

    def action_cancel(self) -> None:
        self.dismiss(None)


LIMIT_FIELDS = (("usd", "USD"), ("tokens", "tokens"), ("seconds", "wall time (s)"), ("test_runs", "test runs"))


def parse_limit(text: str, name: str) -> float | int | None:
    """'' → unlimited; a positive number otherwise. Raises ValueError with a readable message."""
    text = text.strip().replace("_", "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: '{text}' is not a number") from None
    if value <= 0:
        raise ValueError(f"{name}: must be positive (leave empty for no limit)")
    return int(value) if name in ("tokens", "test_runs") else value


Limits = dict[str, float | int | None]  # a session's budget limits by name; None: no limit


class LimitsScreen(ModalScreen[Limits | None]):
    """Edit the budget limits of a session; raising a limit resumes a paused session."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Apply", priority=True, id="limits.apply"),
        Binding("escape", "cancel", "Cancel", id="limits.cancel"),
    ]

    def __init__(self, current: Limits) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Budget limits (empty = no limit)", classes="dialog-title")
            for name, label in LIMIT_FIELDS:
                value = self.current.get(name)
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input("" if value is None else str(value), id=f"limit-{name}",
                                placeholder="no limit")
            yield Static("", id="limits-error", classes="form-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="apply")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_save()
        else:
            self.dismiss(None)

    def on_input_submitted(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        out: Limits = {}
        try:
            for name, _ in LIMIT_FIELDS:
                out[name] = parse_limit(self.query_one(f"#limit-{name}", Input).value, name)
        except ValueError as error:
            self.query_one("#limits-error", Static).update(cell(str(error)))
            return
        self.dismiss(out)

    def action_cancel(self) -> None:
        self.dismiss(None)
