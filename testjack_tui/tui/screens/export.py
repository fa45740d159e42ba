"""The export dialog: format (harbor / swebench / git branch), destination, the same check the
CLI runs (`services.exporting.run_export`), and the result in a panel that stays."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from testjack_tui.services.exporting import FORMAT_HELP, TARGETS, export_lines
from testjack_tui.tui.recent import display_path
from testjack_tui.tui.text import untrusted
from testjack_tui.tui.widgets.footer import QuietFooter

if TYPE_CHECKING:
    from testjack_tui.engine.session import AuditSession
    from testjack_tui.model import Benchmark

LEVEL_STYLE = {"ok": "green", "warning": "yellow", "error": "bold red"}
LABELS = {"harbor": "Harbor tests folder", "swebench": "SWE-bench dataset rows", "git": "git branch"}


class ExportScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("ctrl+s", "run", "Export", priority=True, id="export.run"),
        Binding("escape", "close", "Close", id="export.close"),
    ]

    def __init__(self, session: AuditSession, benchmark: Benchmark | None = None) -> None:
        super().__init__()
        self.session, self.benchmark = session, benchmark
        self.default_out = Path(session.directory) / "export"
        self.result: dict[str, Any] | None = None
        self.busy = False

    def compose(self) -> ComposeResult:
        fmt = "swebench" if getattr(self.benchmark, "format", "harbor") == "swebench" else "harbor"
        with Vertical(classes="dialog export"):
            yield Label("Export the strengthened test suite", classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Format", classes="form-label")
                yield Select([(LABELS[t], t) for t in TARGETS], value=fmt, allow_blank=False, id="export-format",
                             compact=True)
            yield Static(FORMAT_HELP[fmt], id="export-format-help", classes="dialog-detail")
            with Horizontal(classes="form-row"):
                yield Label("Destination", classes="form-label")
                yield Input(str(self.default_out), id="export-out", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("", classes="form-label")
                yield Checkbox("check: passes on G, fails on every refuted trial", True,
                               id="export-check", compact=True)
            with VerticalScroll(id="export-result"):
                yield Static(Text("The check runs T0 plus the witnesses on the reference and on every refuted "
                                  "trial (podman; about a minute per task).", style="dim"), id="export-result-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export (ctrl+s)", variant="primary", id="run", compact=True)
                yield Button("Close (esc)", id="close", compact=True)
        yield QuietFooter(compact=True)

    def on_select_changed(self, event: Select.Changed) -> None:
        fmt = str(event.value)
        self.query_one("#export-format-help", Static).update(FORMAT_HELP[fmt])
        out = self.query_one("#export-out", Input)
        if fmt == "git" and out.value == str(self.default_out):
            out.value = ""
            out.placeholder = "your clone of the task repository (a new branch testjack/<session>)"
        elif fmt != "git" and not out.value:
            out.value = str(self.default_out)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run":
            self.action_run()
        else:
            self.action_close()

    def action_run(self) -> None:
        if self.busy:
            return
        fmt = str(self.query_one("#export-format", Select).value)
        out = self.query_one("#export-out", Input).value.strip()
        if not out:
            self._show(Text("Destination: give a folder (or, for a git branch, your clone of the task "
                            "repository).", style="bold red"))
            return
        self.busy = True
        self.query_one("#run", Button).disabled = True
        check = self.query_one("#export-check", Checkbox).value
        self._show(Text("Exporting" + (" and checking in containers" if check else "") + "…", style="bold"))
        self.export(fmt, Path(out).expanduser(), check)

    @work(exclusive=True, group="export", exit_on_error=False)
    async def export(self, fmt: str, out: Path, check: bool) -> None:
        from testjack_tui.errors import InputError, SandboxError
        from testjack_tui.services.exporting import run_export, write_reports

        try:
            summary = await run_export(self.session.id, fmt, out, check, benchmark=self.benchmark)
            reports = []
            if fmt != "git":
                import asyncio

                reports = await asyncio.to_thread(write_reports, self.session.id, out / "report", ("md", "json"),
                                                  self.benchmark)
        except (InputError, SandboxError, OSError) as error:
            self._show(untrusted(f"Export failed: {error}", style="bold red"))
            return
        finally:
            self.busy = False
            self.query_one("#run", Button).disabled = False
        self.result = summary
        text = Text()
        for level, line in export_lines(summary):
            text.append_text(untrusted(line + "\n", style=LEVEL_STYLE.get(level, "")))
        where = (f"committed on branch {summary['branch']} of {display_path(out)}" if summary.get("branch")
                 else f"wrote {display_path(out)} (export.json" + (f", report/ with {len(reports)} file(s))"
                                                                    if reports else ")"))
        text.append(where, style="bold")
        self._show(text)

    def _show(self, renderable: Any) -> None:
        self.query_one("#export-result-text", Static).update(renderable)

    def action_close(self) -> None:
        self.dismiss(None)
