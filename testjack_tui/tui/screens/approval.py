"""The approval dialog: everything the operator judges a reviewer's verdict on, in one place.

The candidate test and the requirement it checks, the reviewer's label, reason and quote of the
prompt, the candidate's run on the reference (it must pass) and on the trial (its failing
assertion); the prompt and the trial's diff one key away. The operator may also give the
requirement and the words of P it rests on (`p` picks a sentence of P), as a verdicts file does.
The answer goes back as ("approve" | "overrule" | "questionable", note, the operator's fields); the screen that
opened it turns it into a decision through `services.approvals.operator_decision`, as the CLI does.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static

from testjack_tui.repo_files import source_language
from testjack_tui.services.approvals import ApprovalContext
from testjack_tui.tui.text import cell, clean, untrusted
from testjack_tui.tui.widgets.footer import QuietFooter

if TYPE_CHECKING:
    from testjack_tui.model import Task, Trial

LABEL_STYLE = {"valid": "bold green", "questionable": "bold yellow", "invalid": "bold magenta"}
STATUS_STYLE = {"passed": "green", "failed": "bold red", "error": "red", "timed_out": "red",
                "not_found": "yellow"}
MESSAGE_LINES = 12


def _message(text: str) -> Text:
    lines = clean(text).strip().splitlines()
    shown = lines[-MESSAGE_LINES:]
    out = Text("\n".join(("    " + line) for line in shown), style="dim")
    if len(lines) > MESSAGE_LINES:
        out = Text(f"    … {len(lines) - MESSAGE_LINES} earlier line(s)\n", style="dim") + out
    return out


def approval_body(ctx: ApprovalContext, operator_judges: bool) -> Group:
    head = Text()
    head.append("trial ", style="bold")
    head.append_text(cell(ctx.trial_id or "task analysis (solution-blind; replayed on every trial)"))
    head.append_text(cell(f"   task {ctx.task_id}", style="dim"))
    head.append("\ncandidate ", style="bold")
    head.append_text(cell(f"{ctx.candidate_id}  {ctx.path}"))
    head.append_text(cell(f"  by {ctx.author or '?'}", style="dim"))
    head.append("\n")
    head.append("requirement ", style="bold")
    head.append_text(untrusted(ctx.requirement or "—"))
    head.append("\n")
    if not operator_judges:
        head.append("reviewer ", style="bold")
        head.append_text(cell(ctx.label or "…", style=LABEL_STYLE.get(ctx.label, "")))
        if ctx.explicit is not None:
            head.append(" (explicit in the prompt)" if ctx.explicit else " (implicit requirement)", style="dim")
        if ctx.reason:
            head.append(" — ")
            head.append_text(untrusted(ctx.reason))
        head.append("\n")
    head.append("the prompt says ", style="bold")
    if ctx.quote:
        head.append_text(untrusted(f"“{ctx.quote}”", style="italic"))
    else:
        head.append("(no quote: the requirement is not stated in the prompt word for word)", style="dim")
    head.append("\n\n")
    runs = Text()
    pairs = [(ctx.reference, "must pass")]
    if ctx.trial_id:
        pairs.append((ctx.model, "must fail"))
    else:
        runs.append("on the trials  ", style="bold")
        runs.append("replayed on every trial once it counts (the replay matrix, F8)\n", style="dim")
    for facts, want in pairs:
        runs.append(f"on the {facts.world:9} ", style="bold")
        runs.append_text(cell(facts.status or "not run yet", style=STATUS_STYLE.get(facts.status, "dim")))
        runs.append(f"  ({want})\n", style="dim")
        if facts.message and facts.status != "passed":
            runs.append_text(_message(facts.message))
            runs.append("\n")
    source = Syntax(clean(ctx.source) or "# (no source)", source_language(ctx.path or "", "python"), line_numbers=True, theme="ansi_dark",
                    word_wrap=False)
    return Group(head, runs, Text("the candidate test", style="bold"), source)


def operator_fields(ctx: ApprovalContext, requirement: str, quote: str) -> dict[str, Any]:
    """The operator's own judgement of the requirement, from the dialog's fields: only what they
    changed from the reviewer's (an emptied quote says implicit; a quote says explicit)."""
    out: dict[str, Any] = {}
    if requirement.strip() and requirement.strip() != (ctx.requirement or "").strip():
        out["requirement"] = requirement.strip()
    if quote.strip() != (ctx.quote or "").strip():
        out["explicit"] = bool(quote.strip())
        out["quote"] = quote.strip()
    return out


def prompt_sentences(prompt: str) -> list[str]:
    """P cut into sentences (list markers and headings' hashes off): what a quote is picked from."""
    out = []
    for piece in re.split(r"(?<=[.!?:])\s+|\n+", prompt):
        piece = re.sub(r"^\s*(?:[-*+]|\d+[.)]|#+)\s+", "", piece).strip()
        if len(piece) >= 12:
            out.append(piece)
    return out


class QuotePickScreen(ModalScreen[str | None]):
    """Pick the sentence of P a requirement rests on (enter), or leave (escape)."""

    BINDINGS = [Binding("escape", "cancel", "Back", id="quote.cancel")]

    def __init__(self, prompt: str):
        super().__init__()
        self.sentences = prompt_sentences(prompt)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog approval"):
            yield Label("The words of P this requirement rests on (enter picks)", classes="dialog-title")
            yield OptionList(*[clean(s) for s in self.sentences], id="quote-options")
        yield QuietFooter(compact=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sentences[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class ApprovalScreen(ModalScreen[tuple[str, str, dict[str, Any]] | None]):
    """Approve or overrule one reviewer verdict (with the operator as reviewer: valid / invalid)."""

    BINDINGS = [
        Binding("a", "decide('approve')", "Approve", id="approval.approve"),
        Binding("o", "decide('overrule')", "Overrule", id="approval.overrule"),
        # With the operator as reviewer the same keys judge the candidate (the footer says so).
        Binding("a", "judge('approve')", "Valid", id="approval.valid"),
        Binding("o", "judge('overrule')", "Invalid", id="approval.invalid"),
        Binding("i", "prompt", "Prompt", id="approval.prompt"),
        Binding("p", "pick_quote", "Quote P", id="approval.quote"),
        Binding("q", "questionable", "Questionable", id="approval.questionable"),
        Binding("d", "diff", "Diff", id="approval.diff"),
        Binding("n", "note", "Note", tooltip="write a note to keep with the decision (enter comes back; "
                "tab goes on to the requirement and the quote)", id="approval.note"),
        Binding("escape", "cancel", "Later", id="approval.cancel"),
    ]

    def __init__(self, ctx: ApprovalContext, operator_judges: bool = False, task: Task | None = None,
                 trial: Trial | None = None, evidence: dict[str, Any] | None = None, waiting: int = 1):
        super().__init__()
        self.ctx, self.operator_judges = ctx, operator_judges
        self.the_task, self.the_trial, self.evidence = task, trial, evidence
        self.waiting = waiting

    def compose(self) -> ComposeResult:
        approve, overrule = (("Valid (a)", "Invalid (o)") if self.operator_judges
                             else ("Approve (a)", "Overrule (o)"))
        title = ("Judge this candidate" if self.operator_judges else "Approve or overrule the reviewer")
        if self.waiting > 1:
            title += f"  ·  {self.waiting} decisions waiting"
        with Vertical(classes="dialog approval"):
            yield Label(title, classes="dialog-title")
            with VerticalScroll(id="approval-body"):
                yield Static(approval_body(self.ctx, self.operator_judges), id="approval-text")
            with Horizontal(classes="form-row"):
                yield Label("note", classes="note-label wide")
                yield Input(placeholder="why (kept with the decision; optional)", id="approval-note",
                            compact=True)
            # The whole judgement, as a verdicts file gives it: the requirement, and the words
            # of P it rests on (explicit) or none (implicit); prefilled with the reviewer's.
            with Horizontal(classes="form-row"):
                yield Label("requirement", classes="note-label wide")
                yield Input(self.ctx.requirement or "", id="approval-requirement", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("quote of P", classes="note-label wide")
                yield Input(self.ctx.quote or "", placeholder="empty: implicit (P does not state it)",
                            id="approval-quote", compact=True)
            # Compact: at 24 rows the body (the runs and the test) keeps the room.
            with Horizontal(classes="dialog-buttons"):
                yield Button("Prompt (i)", id="prompt", compact=True)
                yield Button("Diff (d)", id="diff", disabled=self.the_trial is None, compact=True)
                yield Button(approve, variant="success", id="approve", compact=True)
                yield Button(overrule, variant="error", id="overrule", compact=True)
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#approval-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if isinstance(self.focused, Input) and action in ("decide", "judge", "prompt", "diff", "pick_quote",
                                                           "questionable", "note"):
            return False  # letters belong to the note
        if action in ("decide", "judge"):
            return (action == "judge") == self.operator_judges
        if action == "diff" and self.the_trial is None:
            return False
        return True

    def on_input_submitted(self) -> None:
        self.query_one("#approval-body").focus()  # enter leaves the note; a / o decide

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("approve", "overrule"):
            self.action_decide(event.button.id)
        elif event.button.id == "prompt":
            self.action_prompt()
        elif event.button.id == "diff":
            self.action_diff()

    def action_note(self) -> None:
        self.query_one("#approval-note", Input).focus()

    def action_judge(self, choice: str) -> None:
        self.action_decide(choice)

    def action_decide(self, choice: str) -> None:
        fields = operator_fields(self.ctx, self.query_one("#approval-requirement", Input).value,
                                 self.query_one("#approval-quote", Input).value)
        if fields.get("quote") and self.the_task is not None:
            from testjack_tui.engine.ambiguity import quote_in_prompt

            if not quote_in_prompt(fields["quote"], getattr(self.the_task, "instruction", "") or ""):
                self.app.notify("That quote is not P's words: copy it from the prompt (i), or empty it "
                                "for an implicit requirement.", severity="warning")
                return
        self.dismiss((choice, self.query_one("#approval-note", Input).value.strip(), fields))

    def action_prompt(self) -> None:
        from testjack_tui.tui.screens.inspect import PromptScreen

        if self.the_task is not None:
            self.app.push_screen(PromptScreen(self.the_task, highlight=self.ctx.quote))
        else:
            self.app.notify("The prompt is not available: the benchmark is not loaded.", severity="warning")

    def action_questionable(self) -> None:
        """Neither valid nor invalid: P may not settle it (an open question, never dropped)."""
        self.action_decide("questionable")

    def action_pick_quote(self) -> None:
        if self.the_task is None:
            self.app.notify("The prompt is not available: the benchmark is not loaded.", severity="warning")
            return

        def picked(quote: str | None) -> None:
            if quote:
                self.query_one("#approval-quote", Input).value = quote

        self.app.push_screen(QuotePickScreen(getattr(self.the_task, "instruction", "") or ""), picked)

    def action_diff(self) -> None:
        from testjack_tui.tui.screens.inspect import DiffScreen

        if self.the_trial is not None:
            self.app.push_screen(DiffScreen(self.the_trial, self.evidence))

    def action_cancel(self) -> None:
        self.dismiss(None)
