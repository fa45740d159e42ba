"""Screen 1: pick a benchmark (bundled, recent, or a path) or reopen a session."""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Label, LoadingIndicator, Static
from textual.worker import Worker, WorkerState

from testjack_tui.tui.guard import guarded, reporter
from testjack_tui.tui.logs import log_exception
from testjack_tui.tui.text import cell
from testjack_tui.tui.widgets.footer import QuietFooter

if TYPE_CHECKING:
    from testjack_tui.model import Benchmark


def benchmark_counts(bench: Benchmark) -> tuple[int, int, int]:
    trials = list(bench.trials)
    return len(bench.tasks), len(trials), sum(1 for t in trials if t.official_pass)


def session_row(info: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """One line of the sessions table from whatever `AuditSession.list()` reports."""
    from testjack_tui.engine.session import state_text  # the session's module loads with the first list

    sid = str(info.get("id") or info.get("session_id") or "?")
    bench = str(info.get("benchmark_name") or info.get("benchmark") or "")
    bench = Path(bench).name if "/" in bench else bench
    state = state_text(info) if info.get("state") else ""
    mode = str(info.get("mode") or (info.get("config") or {}).get("mode", "") if isinstance(info.get("config"), dict) else info.get("mode") or "")
    when = info.get("updated") or info.get("created") or info.get("updated_at") or info.get("created_at")
    if isinstance(when, (int, float)):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
    return sid, bench, state, mode, str(when or "")


READING_BENCHMARKS = "Reading the bundled and recent benchmarks…"
READING_SESSIONS = "Reading the stored sessions…"
NO_BENCHMARKS = "No benchmarks yet: open a path below (o)."
NO_SESSIONS = "No sessions yet."

# name, format, tasks, trials, passing ("-" when it did not load), where from, folder
BenchmarkRow = tuple[str, str, int | str, int | str, int | str, str, str]


class BenchmarksScreen(Screen[None]):
    HELP_TITLE = "Benchmarks"
    HELP = ("Pick the benchmark to audit: the bundled demo, one you opened before, or a path "
            "(a benchmark.toml manifest, a Harbor tasks folder, or a folder with a manifest for a "
            "SWE-bench dataset and predictions). Sessions lists earlier audits: a finished one "
            "opens its report, an interrupted one resumes.")
    BINDINGS = [
        Binding("f1", "app.help", "Help", id="benchmarks.help"),
        Binding("enter", "open_selected", "Open", priority=True, id="benchmarks.open"),
        Binding("o", "focus_path", "Path", tooltip="type a path to open", id="benchmarks.path"),
        Binding("b", "focus_benchmarks", "Benchmarks", show=False, id="benchmarks.list"),
        Binding("s", "focus_sessions", "Sessions", show=False, id="benchmarks.sessions"),
        Binding("r", "refresh", "Refresh", id="benchmarks.refresh"),
        Binding("delete", "forget", "Forget", tooltip="remove from the recent list", id="benchmarks.forget"),
        Binding("escape", "leave_input", "Back to lists", show=False, id="benchmarks.leave"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._paths: list[str] = []  # row index → benchmark path
        self._sessions: list[dict[str, Any]] = []
        self._resumes = 0
        self._loading = False
        self._reuse_runs = ""  # for the Selection screen of the benchmark being opened (open_path)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="benchmarks-body"):
            yield Label("Benchmarks — bundled and recently opened", classes="section-title")
            yield DataTable(id="benchmark-table", cursor_type="row", zebra_stripes=True)
            # Until the first listing is in: `open <session>` shows this screen for seconds on a
            # busy machine, and "No sessions yet" there read as the session being lost.
            yield Static(READING_BENCHMARKS, id="benchmark-empty", classes="empty")
            yield Label("Open a path", classes="section-title")
            yield Input(placeholder="benchmark.toml, a Harbor tasks folder, or a benchmark folder",
                        id="path-input")
            yield Label("Sessions — enter opens the report (finished) or resumes", classes="section-title")
            yield DataTable(id="session-table", cursor_type="row", zebra_stripes=True)
            yield Static(READING_SESSIONS, id="session-empty", classes="empty")
            yield LoadingIndicator(id="benchmarks-loading")
        yield QuietFooter(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Benchmarks"
        table = self.query_one("#benchmark-table", DataTable)
        table.add_columns("Benchmark", "Format", "Tasks", "Trials", "Passing", "From", "Path")
        sessions = self.query_one("#session-table", DataTable)
        sessions.add_columns("Session", "Benchmark", "State", "Mode", "Updated")
        self.query_one("#benchmarks-loading").display = False
        table.focus()
        self.action_refresh()

    def on_screen_resume(self) -> None:
        # Back from a session (audited, stopped, finished in this same process): the list is
        # read from the store again, not kept from when this screen was first shown (on_mount
        # lists it the first time).
        self._resumes += 1
        if self._resumes > 1:
            self.list_sessions()

    # -- listing -----------------------------------------------------------------------------
    def action_refresh(self) -> None:
        self.list_benchmarks()
        self.list_sessions()

    @work(thread=True, exclusive=True, group="list-benchmarks", exit_on_error=False)
    def list_benchmarks(self) -> list[BenchmarkRow]:
        from testjack_tui.tui.recent import load_recent

        rows: list[BenchmarkRow] = []
        seen: set[str] = set()
        try:
            from testjack_tui.benchmarks import bundled_benchmarks, load_benchmark
            bundled = bundled_benchmarks()
        except Exception as error:  # noqa: BLE001 - the loader is optional at this point
            log_exception(error, "bundled benchmarks")
            bundled = []  # nothing bundled to load
        for manifest in bundled:
            path = str(Path(manifest).resolve())
            folder = str(Path(path).parent) if path.endswith(".toml") else path
            try:
                bench = load_benchmark(manifest)
                tasks, trials, passing = benchmark_counts(bench)
                rows.append((bench.name, bench.format, tasks, trials, passing, "bundled", folder))
            except Exception as error:  # noqa: BLE001 - listed as broken, not hidden
                message = log_exception(error, f"load {manifest}")
                rows.append((Path(folder).name, "?", "-", "-", "-", "bundled (error)", folder))
                self.app.call_from_thread(reporter(self).notify_error, message, "Bundled benchmark")
            seen.add(folder)
        for r in load_recent():
            if r.path in seen:
                continue
            seen.add(r.path)
            rows.append((r.name or Path(r.path).name, r.format, r.tasks, r.trials, r.passing, "recent", r.path))
        self.app.call_from_thread(self._show_benchmarks, rows)
        return rows

    def _show_benchmarks(self, rows: list[BenchmarkRow]) -> None:
        table = self.query_one("#benchmark-table", DataTable)
        table.clear()
        self._paths = []
        from testjack_tui.tui.recent import display_path

        for row in rows:
            table.add_row(*[cell(c) for c in row[:-1]], cell(display_path(row[-1])))
            self._paths.append(row[-1])
        table.display = bool(rows)
        empty = self.query_one("#benchmark-empty", Static)
        empty.update(NO_BENCHMARKS)
        empty.display = not rows
        if not rows and (self.focused is None or self.focused is table):
            self.query_one("#path-input", Input).focus()

    @work(thread=True, exclusive=True, group="list-sessions", exit_on_error=False)
    def list_sessions(self) -> None:
        try:
            from testjack_tui.engine.session import AuditSession
            sessions = list(AuditSession.list())
        except ModuleNotFoundError as error:
            log_exception(error, "session list")
            sessions = []
        self.app.call_from_thread(self._show_sessions, sessions)

    def _show_sessions(self, sessions: list[dict[str, Any]]) -> None:
        table = self.query_one("#session-table", DataTable)
        row = table.cursor_row
        was = self._sessions[row] if 0 <= row < len(self._sessions) else None
        table.clear()
        self._sessions = sessions
        for info in sessions:
            table.add_row(*[cell(c) for c in session_row(info)])
        if was is not None:  # the cursor stays on the session it was on
            ids = [s.get("id") or s.get("session_id") for s in sessions]
            key = was.get("id") or was.get("session_id")
            if key in ids:
                table.move_cursor(row=ids.index(key), animate=False)
        table.display = bool(sessions)
        empty = self.query_one("#session-empty", Static)
        empty.update(NO_SESSIONS)
        empty.display = not sessions

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            reporter(self).report_error(event.worker.error, context=f"worker {event.worker.name}")
        if event.worker.group == "open-benchmark" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._set_loading(False)

    # -- opening -----------------------------------------------------------------------------
    def action_open_selected(self) -> None:
        focused = self.focused
        if isinstance(focused, Input):
            self.open_path(focused.value)
        elif focused is not None and focused.id == "session-table":
            row = self.query_one("#session-table", DataTable).cursor_row
            if 0 <= row < len(self._sessions):
                info = self._sessions[row]
                self.open_session(str(info.get("id") or info.get("session_id")), info)
        else:
            row = self.query_one("#benchmark-table", DataTable).cursor_row
            if 0 <= row < len(self._paths):
                self.open_path(self._paths[row])

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        # Mouse double-click / enter when the table has focus.
        self.action_open_selected()

    def open_path(self, path: str, reuse_runs: str = "") -> None:
        """Open the benchmark at `path` on the Selection screen; `reuse_runs`: the session whose
        runs its settings take (`testjack-tui tui BENCH --reuse-runs SESSION`)."""
        self._reuse_runs = reuse_runs
        path = path.strip()
        if not path:
            self.app.notify("Type a path first (a benchmark.toml or a benchmark folder).",
                            severity="warning")
            return
        if self._loading:
            self.app.notify("Still loading the previous benchmark…", severity="warning")
            return
        self._set_loading(True)
        self.load_benchmark(path)

    def _set_loading(self, loading: bool) -> None:
        self._loading = loading
        self.query_one("#benchmarks-loading").display = loading

    @work(thread=True, exclusive=True, group="open-benchmark", exit_on_error=False)
    def load_benchmark(self, path: str) -> None:
        from testjack_tui.errors import InputError

        try:
            from testjack_tui.benchmarks import load_benchmark
            bench = load_benchmark(path)
        except InputError as error:
            log_exception(error, f"load {path}")
            self.app.call_from_thread(reporter(self).notify_error, str(error), "Cannot open benchmark")
            return
        except Exception as error:  # noqa: BLE001 - a loader bug still must not crash the UI
            message = log_exception(error, f"load {path}")
            self.app.call_from_thread(reporter(self).notify_error, message, "Cannot open benchmark")
            return
        self.app.call_from_thread(self._opened, path, bench)

    @guarded
    def _opened(self, path: str, bench: Benchmark) -> None:
        from testjack_tui.tui.recent import RecentBenchmark, remember
        from testjack_tui.tui.screens.selection import SelectionScreen

        tasks, trials, passing = benchmark_counts(bench)
        if bench.skipped:
            first = bench.skipped[0]
            more = f" (+{len(bench.skipped) - 1} more)" if len(bench.skipped) > 1 else ""
            self.app.notify(f"{len(bench.skipped)} item(s) not loaded: {first}{more}",
                            title="Loaded with problems", severity="warning", timeout=10)
        if not bench.tasks:
            reporter(self).notify_error(f"{path}: no tasks found", "Cannot open benchmark")
            return
        folder = Path(path).expanduser().resolve()
        folder = folder.parent if folder.is_file() else folder
        try:
            remember(RecentBenchmark(str(folder), bench.name, bench.format, tasks, trials, passing))
        except OSError as error:
            log_exception(error, "remember recent")
        self.query_one("#path-input", Input).value = ""
        self.app.push_screen(SelectionScreen(bench, str(folder), reuse_runs=self._reuse_runs))
        self._reuse_runs = ""
        self.list_benchmarks()

    @guarded
    def open_session(self, session_id: str, info: dict[str, Any] | None = None) -> None:
        if not session_id or session_id == "None":
            return
        from testjack_tui.tui.screens.audit_start import open_existing_session

        open_existing_session(self.app, session_id, info)

    # -- small actions -----------------------------------------------------------------------
    def action_focus_path(self) -> None:
        self.query_one("#path-input", Input).focus()

    def action_focus_benchmarks(self) -> None:
        self.query_one("#benchmark-table", DataTable).focus()

    def action_focus_sessions(self) -> None:
        self.query_one("#session-table", DataTable).focus()

    def action_leave_input(self) -> None:
        self.action_focus_benchmarks()

    @guarded
    def action_forget(self) -> None:
        from testjack_tui.tui.recent import forget

        table = self.query_one("#benchmark-table", DataTable)
        row = table.cursor_row
        if self.focused is table and 0 <= row < len(self._paths):
            forget(self._paths[row])
            self.list_benchmarks()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Letter keys must reach the path input while typing.
        if action in ("focus_path", "focus_benchmarks", "focus_sessions", "refresh", "forget") \
                and isinstance(self.focused, Input):
            return None
        return True
