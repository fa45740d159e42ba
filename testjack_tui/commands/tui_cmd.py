"""`testjack-tui` (no arguments), `testjack-tui tui [BENCHMARK]`, `testjack-tui open SESSION`.

Textual is imported only inside the commands, so other CLI commands start fast.
"""
from __future__ import annotations

from typing import Optional

import typer


def _run(benchmark: str | None = None, session: str | None = None) -> None:
    from testjack_tui.tui import run

    code = run(benchmark=benchmark, session=session)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    @app.callback(invoke_without_command=True)
    def _default(ctx: typer.Context) -> None:
        """With no command, open the terminal UI."""
        if ctx.invoked_subcommand is None:
            _run()

    @app.command("tui")
    def tui(benchmark: Optional[str] = typer.Argument(
            None, help="Open straight on this benchmark (a benchmark.toml or a benchmark folder).")) -> None:
        """Open the terminal UI (optionally on a benchmark)."""
        _run(benchmark=benchmark)

    @app.command("open")
    def open_session(session: str = typer.Argument(..., help="A session id (see the Benchmarks screen).")) -> None:
        """Open a session in the terminal UI: its report if finished, else resume it."""
        _run(session=session)
