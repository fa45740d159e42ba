"""What the operator judges: the task prompt P and a trial's diff s.

The diff view highlights each file's code, groups the files by kind (source, tests, harness,
config, build, CI, start-up hooks: the kinds the scope detector uses) and marks ghost lines —
added lines T0 never executes, from the ghost-branch evidence stored for the trial — because
that is where an audit should look. Both are modal screens reachable from the trials table,
the candidates table and the approval dialog.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from testjack_tui.engine.detectors import FileDiff, categorize, parse_diff
from testjack_tui.engine.records_runs import StoredRun
from testjack_tui.repo_files import source_language
from testjack_tui.tui.text import cell, clean, untrusted
from testjack_tui.tui.widgets.footer import QuietFooter

if TYPE_CHECKING:
    from testjack_tui.model import Task, Trial

MAX_DIFF_LINES = 4000  # diff lines drawn; a longer diff is cut (and says so)
KIND_ORDER = ("source", "tests", "harness", "startup", "config", "build", "ci")
KIND_STYLE = {"source": "bold", "tests": "bold cyan", "harness": "bold red", "startup": "bold red",
              "config": "bold yellow", "build": "bold yellow", "ci": "bold yellow"}
def file_kind(path: str) -> str:
    return categorize(path) or "source"


def ghost_lines(evidence: dict[str, Any] | None) -> dict[str, set[int]]:
    """file -> added line numbers T0 never executes (from stored ghost-branch evidence)."""
    out: dict[str, set[int]] = {}
    ghost = (evidence or {}).get("ghost") or {}
    for g in ghost.get("ghost_lines") or []:
        out.setdefault(str(g.get("file", "")), set()).add(int(g.get("line", 0)))
    return out


def _ghosts_for(path: str, ghosts: dict[str, set[int]]) -> set[int]:
    # Coverage names files relative to the workdir; the diff relative to the repo: match by suffix.
    for name, lines in ghosts.items():
        if name == path or name.endswith("/" + path) or path.endswith("/" + name):
            return lines
    return set()


def surviving_mutants(evidence: dict[str, Any] | None) -> dict[str, dict[int, list[str]]]:
    """file -> line -> mutated versions of that line T0 still passes (stored mutation evidence)."""
    out: dict[str, dict[int, list[str]]] = {}
    for s in ((evidence or {}).get("mutation") or {}).get("survivors") or []:
        out.setdefault(s.get("file", ""), {}).setdefault(int(s.get("line") or 0), []).append(
            str(s.get("mutated", "")).strip())
    return out


def diff_view(patch: str, evidence: dict[str, Any] | None = None) -> tuple[Group, dict[str, Any]]:
    """The diff as renderables, and facts for tests: {"files": {path: kind}, "ghost": {path: [lines]}}."""
    files = parse_diff(patch or "")
    ghosts = ghost_lines(evidence)
    mutants = surviving_mutants(evidence)
    facts: dict[str, Any] = {"files": {}, "ghost": {}, "mutants": {}}
    if not files:
        return Group(Text("This trial's patch is empty or not a unified diff.", style="dim")), facts
    by_kind: dict[str, list[FileDiff]] = {}
    for f in files:
        by_kind.setdefault(file_kind(f.path), []).append(f)
        facts["files"][f.path] = file_kind(f.path)
    parts: list[RenderableType] = []
    summary = Text()
    summary.append(f"{len(files)} file(s): ", style="bold")
    summary.append(" · ".join(f"{k} {len(by_kind[k])}" for k in KIND_ORDER if k in by_kind))
    total_ghost = sum(len(v) for v in ghosts.values())
    ghost_state = (evidence or {}).get("ghost") or {}
    if ghost_state.get("error"):
        summary.append(f"\nghost lines unavailable: {clean(ghost_state['error'])[:160]}", style="dim")
    elif ghost_state:
        summary.append(f"\n{total_ghost} ghost line(s): added lines T0 never runs, marked ◌", style="italic magenta")
    else:
        summary.append("\nno coverage evidence for this trial yet (ghost lines appear once it is audited)",
                       style="dim")
    mutation = (evidence or {}).get("mutation")
    if mutation and mutation.get("error"):
        summary.append(f"\nmutation evidence unavailable: {clean(mutation['error'])[:160]}", style="dim")
    elif mutation:
        count = sum(len(v) for lines in mutants.values() for v in lines.values())
        summary.append(f"\n{count} surviving mutant(s) of {mutation.get('generated', 0)} "
                       f"({mutation.get('run', 0)} run under T0): lines T0 does not pin down, marked ⚑",
                       style="italic yellow")
    parts.append(summary)
    drawn = 0
    for kind in KIND_ORDER:
        for f in by_kind.get(kind, []):
            head = Text()
            head.append(f"\n{kind.upper():8}", style=KIND_STYLE.get(kind, "bold"))
            head.append_text(cell(f" {f.path}", style="bold underline"))
            head.append(f"  {f.status}  +{len(f.added)} −{len(f.removed)}", style="dim")
            parts.append(head)
            lexer = source_language(f.path)
            highlighter = Syntax("", lexer, theme="ansi_dark")
            file_ghosts = _ghosts_for(f.path, ghosts)
            if file_ghosts:
                facts["ghost"][f.path] = sorted(file_ghosts)
            file_mutants = mutants.get(f.path, {})
            if file_mutants:
                facts["mutants"][f.path] = sorted(file_mutants)
            for tag, number, code_text in f.rows:
                drawn += 1
                if drawn > MAX_DIFF_LINES:
                    break
                if tag == "@":
                    parts.append(Text(clean(code_text), style="cyan dim"))
                    continue
                ghost = tag == "+" and number in file_ghosts
                gutter, style, background = {
                    "+": ("+", "green", "on #17301c"), "-": ("-", "red", "on #3a1e1e"),
                    " ": (" ", "dim", "")}[tag]
                if ghost:
                    gutter, style, background = "◌", "bold magenta", "on #2e2440"
                row = Text(f"{gutter} {number:>5} ", style=style)
                code = highlighter.highlight(clean(code_text)).copy()
                code.rstrip()
                row.append_text(code)
                if ghost:
                    row.append("   ← T0 never runs this", style="italic magenta")
                if tag == "+" and number in file_mutants:
                    row.append(f"   ⚑ T0 still passes with: {clean(file_mutants[number][0])[:80]}",
                               style="italic yellow")
                if background:
                    row.stylize(background)
                parts.append(row)
    if drawn > MAX_DIFF_LINES:
        parts.append(Text(f"… diff cut after {MAX_DIFF_LINES} lines", style="dim"))
    return Group(*parts), facts


class _ViewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss_view", "Close", id="view.close")]

    def __init__(self, title: str, body: RenderableType, subtitle: str = "") -> None:
        super().__init__()
        self.title_text, self.body, self.subtitle = title, body, subtitle

    def compose(self) -> ComposeResult:
        with Vertical(classes="view"):
            # Titles name tasks, trials and witnesses: literal text, never markup.
            yield Label(cell(self.title_text), classes="dialog-title")
            if self.subtitle:
                yield Static(cell(self.subtitle), classes="dialog-detail")
            with VerticalScroll(classes="view-body"):
                yield Static(self.body, classes="view-text")
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one(".view-body").focus()

    def action_dismiss_view(self) -> None:
        self.dismiss(None)


class ReportTextScreen(_ViewScreen):
    """A plain-text report (the same lines the CLI prints), scrollable."""

    def __init__(self, title: str, text: str, subtitle: str = ""):
        super().__init__(title, untrusted(text), subtitle)
        self.text = text


class HighlightedMarkdown:
    """P rendered as markdown at the width it is shown in, the reviewer's quote marked in place.

    The quote is words of P (`quote_in_prompt` ignores markdown markers and spacing), so it is
    found in the rendered lines word by word, across line breaks and dropped markers."""

    STYLE = "bold reverse yellow"

    def __init__(self, text: str, quote: str = ""):
        self.text = text
        words = re.findall(r"\w+", quote or "")
        self.pattern = r"\W+".join(re.escape(w) for w in words) if words else ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        markdown = Markdown(self.text)
        if not self.pattern:
            yield markdown
            return
        lines = console.render_lines(markdown, options, pad=False)
        shown = Text("\n").join(Text.assemble(*((seg.text, seg.style or "") for seg in line if not seg.control))
                                for line in lines)
        shown.no_wrap = True
        shown.highlight_regex(re.compile(self.pattern, re.IGNORECASE), self.STYLE)
        yield shown


class PromptScreen(_ViewScreen):
    """The task prompt P: the only authority the reviewer and the operator judge against."""

    def __init__(self, task: Task | None, highlight: str = "") -> None:
        text = clean(getattr(task, "instruction", "") or "")
        # Every task's P as markdown, with or without a quote to mark (issue 31: one task showed
        # raw markdown because only a highlighted prompt was drawn as plain text).
        body: RenderableType = HighlightedMarkdown(text, clean(highlight)) if text else \
            Text("This task has no prompt.", style="dim")
        super().__init__(f"Prompt (P) of {getattr(task, 'id', '?')}", body,
                         "The task as the agent saw it. Requirements are judged against these words only.")
        self.prompt_text = text


class DiffScreen(_ViewScreen):
    """A trial's diff s, highlighted, its files by kind, ghost lines marked."""

    def __init__(self, trial: Trial | None, evidence: dict[str, Any] | None = None) -> None:
        body, facts = diff_view(getattr(trial, "patch", "") or "", evidence)
        model = getattr(trial, "model", "") or "?"
        super().__init__(f"Diff (s) of {getattr(trial, 'id', '?')}", body,
                         f"model {model} · the patch the benchmark counted as solved")
        self.facts = facts


def missing(what: str) -> Text:
    return untrusted(f"{what} is not available: the benchmark could not be loaded.", style="yellow")


def run_view(run: StoredRun | None, witness_id: str, trial_id: str, status: str, path: str = "") -> Group:
    """A stored test run: status per test (with messages), exit code, and the output's head and tail."""
    parts: list[RenderableType] = []
    head = Text()
    head.append_text(cell(f"{witness_id} on {trial_id}: ", style="bold"))
    head.append(status or "not run yet", style="bold red" if status and status != "passed" else "green")
    parts.append(head)
    if run is None:
        parts.append(Text("No stored run for this cell yet: it fills in when the witness is replayed "
                          "on this trial.", style="dim"))
        return Group(*parts)
    parts.append(cell(f"world {run.world} · exit {run.exit_code} · "
                      f"{run.duration:.1f} s" + (" · timed out" if run.timed_out else ""),
                      style="dim"))
    for node, outcome in sorted(run.outcomes.items()):
        if path and not (node == path or node.startswith(path + "::")):
            continue
        line = Text(f"  {outcome.get('status', '?'):9} ", style="red" if outcome.get("status") != "passed" else "green")
        line.append_text(untrusted(node))
        parts.append(line)
        if outcome.get("message"):
            parts.append(untrusted("      " + str(outcome["message"]).strip().replace("\n", "\n      "), style="dim"))
    for title, text in (("output (head)", run.head), ("output (tail)", run.tail)):
        if text.strip():
            parts.append(Text(f"\n{title}", style="bold"))
            parts.append(untrusted(text.rstrip()))
    return Group(*parts)


class RunScreen(_ViewScreen):
    """One cell of the replay matrix: the witness's run on one trial."""

    def __init__(self, run: StoredRun | None, witness_id: str, trial_id: str, status: str, path: str = ""):
        super().__init__(f"Run of {witness_id} on {trial_id}", run_view(run, witness_id, trial_id, status, path))
