"""`testjack-tui list BENCHMARK`: the tasks and trials a benchmark holds, as a table or JSON."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Annotated, NotRequired, TypedDict

import typer

from testjack_tui.safe_text import echo

from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Task


class TaskRow(TypedDict):
    id: str
    language: str
    framework: str
    runner: str | None
    trials: int
    passing: int
    models: list[str]
    # task.toml / config.json named another tool than the one test.sh runs (test.sh decides)
    declared: NotRequired[str]


class Totals(TypedDict):
    tasks: int
    trials: int
    passing: int
    models: list[str]


class SkippedRow(TypedDict):
    path: str
    field: str | None
    reason: str


class Summary(TypedDict):
    name: str
    format: str
    root: str
    tasks: list[TaskRow]
    totals: Totals
    skipped: list[SkippedRow]


def summarize(bench: Benchmark) -> Summary:
    """Per task: language, #trials, #officially passing, models; plus totals and what was skipped."""
    # One pass over the trials: Benchmark.trials_of() per task would be quadratic on big benchmarks.
    trials: dict[str, int] = defaultdict(int)
    passing: dict[str, int] = defaultdict(int)
    models: dict[str, set[str]] = defaultdict(set)
    for trial in bench.trials:
        trials[trial.task_id] += 1
        passing[trial.task_id] += trial.official_pass
        models[trial.task_id].add(trial.model)
    tasks = [_task_row(task, trials[task.id], passing[task.id], models[task.id]) for task in bench.tasks.values()]
    return {
        "name": bench.name,
        "format": bench.format,
        "root": str(bench.root),
        "tasks": tasks,
        "totals": {
            "tasks": len(tasks),
            "trials": len(bench.trials),
            "passing": sum(passing.values()),
            "models": sorted({t.model for t in bench.trials}),
        },
        "skipped": [{"path": s.path, "field": s.field, "reason": s.reason} for s in bench.skipped],
    }


def _task_row(task: Task, trials: int, passing: int, models: set[str]) -> TaskRow:
    from testjack_tui.services.test_files import runner_name  # the runner registry, not the container code

    row = TaskRow(id=task.id, language=task.language, framework=task.tests.framework,
                  runner=runner_name(task.tests.framework), trials=trials, passing=passing,
                  models=sorted(models))
    if declared := (task.metadata or {}).get("declared_framework"):
        row["declared"] = declared
    return row


def _runner_cell(task: TaskRow) -> str:
    runner = task["runner"] or "none"
    declared = task.get("declared")
    return f"{runner} (test.sh; declared {declared})" if declared else runner


def render_table(summary: Summary) -> str:
    headers = ("TASK", "LANGUAGE", "RUNNER", "TRIALS", "PASSING", "MODELS")
    rows = [(t["id"], t["language"], _runner_cell(t), str(t["trials"]), str(t["passing"]),
             ", ".join(t["models"]) or "-") for t in summary["tasks"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    right = {3, 4}  # numbers align right

    def line(cells: tuple[str, ...]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(out).rstrip()

    totals = summary["totals"]
    lines = [f"{summary['name']} ({summary['format']}) {summary['root']}", line(headers)]
    lines += [line(r) for r in rows]
    lines += [f"no runner: {t['id']} ({t['language']}, framework {t['framework']!r}): witnesses "
              "cannot run there; verify still runs the task's own tests"
              for t in summary["tasks"] if not t["runner"]]
    lines.append(f"total: {totals['tasks']} tasks, {totals['trials']} trials, "
                 f"{totals['passing']} officially passing, {len(totals['models'])} models")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_command(
        benchmark: Annotated[Path, typer.Argument(
            help="A benchmark manifest (benchmark.toml), a folder holding one, or a Harbor tasks folder.",
            show_default=False)],
        as_json: Annotated[bool, typer.Option("--json", help="Print the listing as JSON.")] = False,
    ) -> None:
        """List a benchmark's tasks with language, test runner, #trials, #officially passing and models.

        Tasks or trials the loader could not read are printed as warnings on stderr.
        """
        from . import load_with_warnings

        try:
            bench = load_with_warnings(benchmark)
        except (InputError, OSError) as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        summary = summarize(bench)
        echo(json.dumps(summary, indent=2) if as_json else render_table(summary))
