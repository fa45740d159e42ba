"""`testjack-tui report SESSION` and `testjack-tui export SESSION`.

report: per-trial report.json + report.md and the session's tables (md | json | csv).
export: the confirmed, non-ambiguous witnesses as a strengthened test suite per task (harbor |
swebench), checked in real containers unless --no-check.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from testjack_tui.safe_text import echo

from testjack_tui.errors import InputError, SandboxError
from testjack_tui.safe_paths import output_folder


def _default_out(session_id: str, what: str) -> Path:
    from testjack_tui.engine.store import session_dir

    return session_dir(session_id) / what


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        session: Annotated[str, typer.Argument(help="Session id (see `testjack-tui sessions`), or the folder "
                                                    "`audit --out` wrote.", show_default=False)],
        fmt: Annotated[str, typer.Option("--format", help="Session report format: md, json or csv.")] = "md",
        out: Annotated[Path | None, typer.Option("--out", help="Folder to write into (default: the session's folder/report).")] = None,
        compare: Annotated[str | None, typer.Option(
            "--compare", help="A session of the other mode (lightweight / per-trial) on the same benchmark; "
                              "default: the newest finished one, if any.")] = None,
        force: Annotated[bool, typer.Option(
            "--force", help="Compare with a session that used other trials, agents, candidates, "
                            "requirements or budget (the differences are printed above the numbers).")] = False,
    ) -> None:
        """Write per-trial verdicts and the session's tables (resolution before -> after).

        Per trial: report.json + report.md. Per session: passing -> refuted and the resolution
        rate per benchmark, task and model; underspecified prompts; detectors; cost; when the
        benchmark ships labels, recall and precision against them; and, when a session of the other
        mode exists, the lightweight loop's recall and cost against per-trial audit.
        """
        from testjack_tui.engine.compare import refusal_line
        from testjack_tui.engine.report import build_report
        from testjack_tui.engine.report_render import FORMATS, write_report
        from testjack_tui.engine.store import session_ref

        session = session_ref(session)
        compare = session_ref(compare) if compare is not None else None
        try:
            if fmt not in FORMATS:
                raise InputError("report", "--format", f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})")
            if compare is not None and not _default_out(compare, "session.db").exists():
                raise InputError("report", "--compare", f"no session {compare!r} (see `testjack-tui sessions`)")
            if out is not None:
                output_folder(out)
            report = build_report(session, compare_with=compare, force_compare=force)
            if compare is not None and report.comparison is not None and report.comparison.refused:
                raise InputError("report", "--compare", refusal_line(report.comparison))
            target = out or _default_out(session, "report")
            files = write_report(report, target, fmt)
        except InputError as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except OSError as exc:
            echo(f"error: {exc.filename or out}: --out: cannot write: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
        row = report.tables.benchmark[0]
        rates = (f"resolution {row.rate_before}% -> {row.rate_after}%" if row.rate_before is not None
                 else "no trials, no resolution rate")
        echo(f"{row.name}: {row.passing} passing, {row.refuted} refuted; {rates}; "
             f"{len(report.underspecified_prompts)} underspecified prompt finding(s)")
        contradicted = sum(len(t.reference_contradicts) for t in report.tasks.values())
        if contradicted:
            echo(f"{contradicted} point(s) where the reference contradicts P (the task is not well-formed there)")
        if report.scoring is not None:
            echo(f"against labels: recall {report.scoring.recall}, precision {report.scoring.precision}")
        c = report.comparison
        if c is not None and c.refused:
            echo(refusal_line(c))
        elif c is not None:
            if c.differences:
                echo("compared although the sessions differ: " + "; ".join(c.differences))
            cost = c.cost_usd if c.cost_usd is not None else c.cost_test_runs
            echo(f"lightweight vs per-trial: recall {c.recall} at {cost} of the cost "
                 f"(test runs {c.cost_test_runs}, wall time {c.cost_seconds})")
        echo(f"wrote {files[-1]} and {len(files) - 1} per-trial files under {Path(target) / 'trials'}")

    @app.command("export")
    def export_command(
        session: Annotated[str, typer.Argument(help="Session id (see `testjack-tui sessions`), or the folder "
                                                    "`audit --out` wrote.", show_default=False)],
        fmt: Annotated[str, typer.Option("--format", help="harbor or swebench.")] = "harbor",
        out: Annotated[Path | None, typer.Option("--out", help="Folder to write into (default: the session's folder/export).")] = None,
        git_repo: Annotated[Path | None, typer.Option("--git", help="Commit the witness files on a new branch "
                                                      "testjack/SESSION of this clone of the task repository.")] = None,
        check: Annotated[bool, typer.Option("--check/--no-check",
                                            help="Run the strengthened suite in containers: passes on G, fails on every refuted trial.")] = True,
    ) -> None:
        """Export confirmed, non-ambiguous witnesses as a strengthened test suite per task."""
        from testjack_tui.engine.export import EXPORT_FORMATS
        from testjack_tui.services.exporting import export_lines, run_export
        from testjack_tui.engine.store import session_ref

        session = session_ref(session)
        try:
            if fmt not in EXPORT_FORMATS:
                raise InputError("export", "--format", f"unknown format {fmt!r} (use one of {', '.join(EXPORT_FORMATS)})")
            if git_repo is not None:
                fmt = "git"
            target = git_repo or out or _default_out(session, "export")
            summary = asyncio.run(run_export(session, fmt, Path(target), check))
        except (InputError, SandboxError) as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except OSError as exc:
            echo(f"error: {exc.filename or out}: --out: cannot write: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
        for level, line in export_lines(summary):
            echo(line, err=level == "error" and line.startswith("  problem"))
        echo(f"committed on branch {summary['branch']} of {target}" if summary.get("branch")
             else f"wrote {target}")
        if not summary["tasks"] or any(info.get("ok") is False for info in summary["tasks"].values()):
            raise typer.Exit(1)  # nothing to export, or the strengthened suite failed its check
