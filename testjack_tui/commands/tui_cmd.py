"""`testjack-tui` (no arguments), `testjack-tui tui [BENCHMARK]`, `testjack-tui open SESSION`.

Textual is imported only inside the commands, so other CLI commands start fast.
"""
from __future__ import annotations

from typing import Optional

import typer


def _run(benchmark: str | None = None, session: str | None = None, reuse_runs: str = "") -> None:
    from testjack_tui.tui import run

    code = run(benchmark=benchmark, session=session, reuse_runs=reuse_runs)
    if code:
        raise typer.Exit(code)


def _folder(benchmark: str) -> str:
    """The benchmark folder a session names (a manifest's folder), as the Benchmarks screen opens it."""
    from pathlib import Path

    path = Path(benchmark).expanduser().resolve()
    return str(path.parent if path.is_file() else path)


def register(app: typer.Typer) -> None:
    @app.callback(invoke_without_command=True)
    def _default(ctx: typer.Context) -> None:
        """With no command, open the terminal UI."""
        if ctx.invoked_subcommand is None:
            _run()

    @app.command("tui")
    def tui(benchmark: Optional[str] = typer.Argument(
            None, help="Open straight on this benchmark (a benchmark.toml or a benchmark folder)."),
            reuse_runs: Optional[str] = typer.Option(
                None, "--reuse-runs", metavar="SESSION",
                help="With BENCHMARK: the new session takes the test runs SESSION (an id or an audit --out "
                     "folder, same benchmark) already made instead of running them again (chosen on the "
                     "Settings tab; as `audit --reuse-runs`).")) -> None:
        """Open the terminal UI (optionally on a benchmark)."""
        lender = ""
        if reuse_runs:
            from testjack_tui.errors import InputError
            from testjack_tui.tui.lenders import checked_lender

            try:
                if benchmark is None:
                    raise InputError("tui", "--reuse-runs", "name the BENCHMARK whose session it reuses")
                lender = checked_lender(reuse_runs, _folder(benchmark), None)
            except InputError as error:
                typer.echo(f"error: {error}", err=True)
                raise typer.Exit(2) from None
        _run(benchmark=benchmark, reuse_runs=lender)

    @app.command("open")
    def open_session(session: str = typer.Argument(..., help="A session id (see the Benchmarks screen).")) -> None:
        """Open a session in the terminal UI: its report if finished, else resume it."""
        _run(session=session)
