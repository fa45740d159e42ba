"""The `testjack-tui` command line (typer).

With no command it opens the TUI. Each command group lives in its own module under
`testjack_tui/commands/` with a `register(app)` function.
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
    # Help texts name config sections like `[sandbox]`: printed as written, never as markup.
    rich_markup_mode=None,
)

COMMAND_MODULES = ("tui_cmd", "list_cmd", "doctor_cmd", "verify_cmd", "audit_cmd", "report_cmd")

for _name in COMMAND_MODULES:
    importlib.import_module(f"testjack_tui.commands.{_name}").register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
