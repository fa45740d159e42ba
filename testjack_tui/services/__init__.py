"""The application layer: what the CLI and the TUI both do, written once.

Each front end renders and asks; the decisions live here (or in the engine): how an operator's
"approve" / "overrule" becomes an approval decision and what the operator is shown before
taking it (`approvals`), and report files and the strengthened-suite export with its check
(`exporting`). Nothing here imports Textual or typer.
"""
