"""The TestJack application: a stack of screens over one optional live session.

Benchmarks → Selection → Audit → Report. The engine runs in this process, on the app's event
loop (an async worker); its events arrive through an `EventInbox` and are folded into the
Audit screen on a timer. Nothing here decides anything about trials: the screens render the
engine's events and send the operator's decisions back.
"""
from __future__ import annotations

import gc
import os
import time
import weakref
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from testjack_tui.tui import style_cache
from testjack_tui.tui.logs import log_exception, log_path, logger
from testjack_tui.tui.text import clean

if TYPE_CHECKING:
    from testjack_tui.engine.session import AuditSession

# Screens an action key may appear on; used to build the command palette from bindings.
# In tests (strict_errors) these mean a bug in our code and must fail the test; anything else
# (podman down, a bad benchmark, an endpoint error) is the user's world and becomes a notification.
PROGRAMMING_ERRORS = (AttributeError, TypeError, NameError, KeyError, IndexError, AssertionError)
ERROR_BURST = 20  # errors within ERROR_WINDOW seconds: something is looping, stop cleanly
ERROR_WINDOW = 5.0


class TestJackApp(App[int]):
    __test__ = False  # not a pytest test class despite the name
    CSS_PATH = "app.tcss"
    TITLE = "TestJack"
    SUB_TITLE = "audit the solved trials of coding benchmarks"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("question_mark", "help", "Help", show=False, id="app.help_alt"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("f12", "screenshot", "Screenshot", show=False, priority=True,
                tooltip="save an SVG of the screen (for bug reports)", id="app.screenshot"),
    ]

    def __init__(self, benchmark: str | None = None, session_id: str | None = None,
                 strict_errors: bool = False, reuse_runs: str = ""):
        super().__init__()
        style_cache.install()
        self.start_benchmark = benchmark
        self.start_session = session_id
        self.start_reuse_runs = reuse_runs  # the start benchmark's session to reuse runs of (checked by the CLI)
        # Tests set strict_errors so a bug fails the test instead of becoming a notification.
        self.strict_errors = strict_errors
        self.session: AuditSession | None = None  # the AuditSession the Audit screen is driving, if any
        self._error_times: list[float] = []
        self._frozen_screens: list[weakref.ref[Screen[Any]]] = []  # the screens up at the last settle_heap
        self._fatal_message = ""
        # No decorative animation (the tab underline alone drew ~8 extra frames per tab key,
        # competing with the next key press); TEXTUAL_ANIMATIONS=full brings it back.
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            self.animation_level = "none"

    # -- start-up ----------------------------------------------------------------------------
    def on_mount(self) -> None:
        from testjack_tui.tui.screens.benchmarks import BenchmarksScreen

        self.push_screen(BenchmarksScreen())
        self.call_after_refresh(self.settle_heap, collect=False)
        if self.start_benchmark:
            self.call_after_refresh(self.open_benchmark, self.start_benchmark)
        elif self.start_session:
            self.call_after_refresh(self.open_session, self.start_session)

    def settle_heap(self, collect: bool = True) -> None:
        """Move what lives now (modules, screens, the session's state) out of the garbage
        collector's view: a full collection walks every tracked object (~60 ms for an open
        Audit screen on a slow core) and, triggered by allocation, it landed inside key presses
        and frames. Called once a screen has painted; `collect` first frees what earlier
        screens left behind in cycles (one pause, at a screen change, not in a key press).
        A collection walks only what is not frozen: the frozen part is thawed (and walked) only
        when a screen that was up at the last freeze has left, frozen with its cycles."""
        if collect:
            if any(ref() not in self.screen_stack for ref in self._frozen_screens):
                gc.unfreeze()
            gc.collect()
        gc.freeze()
        self._frozen_screens = [weakref.ref(screen) for screen in self.screen_stack]
        # Fewer, larger young collections: a frame allocates thousands of short-lived strips and
        # segments, and with the default (700) every key press paid for 10-20 collections.
        gc.set_threshold(20_000, 20, 100)

    def open_benchmark(self, path: str) -> None:
        screen = self.screen
        if hasattr(screen, "open_path"):
            screen.open_path(path, self.start_reuse_runs)

    def open_session(self, session_id: str) -> None:
        screen = self.screen
        if hasattr(screen, "open_session"):
            screen.open_session(session_id)

    # -- notifications -----------------------------------------------------------------------
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Textual's notify, plain text by default: messages name trials, tasks, candidates and
        paths (benchmark and agent text), and markup in them would restyle or break the toast."""
        super().notify(clean(message), title=clean(title), severity=severity,
                       timeout=timeout, markup=markup)

    # -- errors ------------------------------------------------------------------------------
    def report_error(self, error: BaseException, context: str = "", title: str = "Error") -> None:
        """Log the details, show one line. Used by guarded handlers and failed workers."""
        if self.strict_errors and isinstance(error, PROGRAMMING_ERRORS):
            raise error
        message = log_exception(error, context)
        self.notify(f"{message}\ndetails: {log_path()}", title=title, severity="error", timeout=12)

    def notify_error(self, message: str, title: str = "Error") -> None:
        logger().warning("%s: %s", title, message)
        self.notify(message, title=title, severity="error", timeout=12)

    def _handle_exception(self, error: Exception) -> None:
        if self.strict_errors:
            return super()._handle_exception(error)
        summary = log_exception(error, "unhandled")
        now = time.monotonic()
        self._error_times = [t for t in self._error_times if now - t < ERROR_WINDOW] + [now]
        self._fatal_message = (f"TestJack stopped after an internal error: {summary}\n"
                               f"Details are in {log_path()}.")
        if self.session is not None:
            self._fatal_message += f"\nThe session is resumable: testjack-tui open {self.session.id}"
        self._pause_session()
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Replace the traceback Textual would print with one readable paragraph.
        if self.strict_errors:
            return super()._fatal_error()
        from rich.text import Text
        from rich.segment import Segments

        self.bell()
        text = Text(self._fatal_message or f"TestJack stopped; details in {log_path()}", style="bold red")
        self._exit_renderables.append(Segments(self.console.render(text, self.console.options)))
        self._close_messages_no_wait()

    # -- session -----------------------------------------------------------------------------
    @property
    def session_running(self) -> bool:
        screen_running = any(getattr(s, "session_running", False) for s in self.screen_stack)
        return self.session is not None and screen_running

    def _pause_session(self) -> None:
        session = self.session
        if session is None:
            return
        try:
            session.pause()
        except Exception as error:  # noqa: BLE001 - quitting anyway; keep the record
            log_exception(error, "pause on quit")

    # -- actions -----------------------------------------------------------------------------
    def action_help(self) -> None:
        from testjack_tui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """Save an SVG of the screen under the data folder (Textual's default, ~/Downloads, often
        does not exist on a server) and say where it went."""
        from testjack_tui import paths

        folder = Path(path) if path else paths.data_dir() / "screenshots"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            name = filename or time.strftime("testjack-%Y%m%d-%H%M%S.svg")
            saved = self.save_screenshot(name, str(folder))
        except OSError as error:
            self.notify_error(f"Could not save the screenshot in {folder}: {error}", "Screenshot")
            return
        self.notify(f"Saved {saved}", title="Screenshot")

    async def action_quit(self) -> None:
        if not self.session_running:
            self.exit(0)
            return
        from testjack_tui.tui.screens.dialogs import ConfirmScreen

        def decided(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._stop_then_exit(), group="quit", exit_on_error=False)

        self.push_screen(ConfirmScreen(
            "A session is running. Quit now?",
            "It is stopped and saved; resume it later from the Benchmarks screen "
            "or with `testjack-tui open <session>`.",
            yes="Quit", no="Stay"), decided)

    async def _stop_then_exit(self, timeout: float = 30.0) -> None:
        """Stop the session and let its sandbox remove its containers, then exit: leaving the
        event loop while the sandbox is still running would leave containers behind."""
        import asyncio

        session = self.session
        self.notify("Stopping the session and removing its containers…", title="Quit")
        try:
            if session is not None:
                session.stop()
        except Exception as error:  # noqa: BLE001 - quitting anyway; keep the record
            log_exception(error, "stop on quit")
        workers = [w for s in self.screen_stack if (w := getattr(s, "_worker", None)) is not None]
        deadline = time.monotonic() + timeout
        while any(not w.is_finished for w in workers) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        self.exit(0)

    # -- command palette ---------------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every key shown in the footer is also a palette entry (plus Textual's own)."""
        seen: set[str] = set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.description or not active.enabled or binding.action in seen:
                continue
            if binding.action == "command_palette":
                continue
            seen.add(binding.action)
            yield SystemCommand(binding.description, f"key: {binding.key_display or key}"
                                + (f" — {binding.tooltip}" if binding.tooltip else ""),
                                partial(self.run_action, binding.action, active.node))
        for command in super().get_system_commands(screen):
            if command.title in ("Quit", "Keys"):
                continue  # ours (with the running-session check) and our help screen
            yield command
