"""The Textual application. Imported only when the TUI is opened, so CLI commands never pay
Textual's import cost: `testjack_tui.commands.tui_cmd` calls `run()` lazily."""
from __future__ import annotations


def run(benchmark: str | None = None, session: str | None = None, reuse_runs: str = "") -> int:
    """Open the TUI; optionally straight on a benchmark (Selection, with `reuse_runs` chosen in
    its settings) or a session (Audit/Report)."""
    from testjack_tui.tui.app import TestJackApp

    app = TestJackApp(benchmark=benchmark, session_id=session, reuse_runs=reuse_runs)
    app.run()
    return app.return_code or 0
