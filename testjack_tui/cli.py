"""The `testjack-tui` command line (typer).

With no command it opens the TUI. Each command lives in its own module under
`testjack_tui/commands/` with a `register(app)` function, so features land independently.
"""
from __future__ import annotations

import importlib
import sys

import typer

app = typer.Typer(
    name="testjack-tui",
    help="Audit the 'solved' trials of coding-agent benchmarks with witness tests.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = ("tui_cmd", "list_cmd", "doctor_cmd", "verify_cmd", "audit_cmd", "report_cmd")

for _name in COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"testjack_tui.commands.{_name}")
    except ModuleNotFoundError as exc:  # a command module not written yet
        if exc.name != f"testjack_tui.commands.{_name}":
            raise
        continue
    _module.register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
