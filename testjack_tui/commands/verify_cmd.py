"""`testjack-tui verify BENCHMARK`: build the worlds, run T0 on null, reference and every trial.

Reports per task whether it is well-formed (G passes T0; fail-to-pass tests fail on null),
which T0 tests pass vacuously on null, and per trial whether the recorded verdict reproduces.
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, Optional

import typer

from testjack_tui.safe_text import echo

from testjack_tui.errors import InputError, SandboxError
# the module's name: tests put a verify without containers in its place
from testjack_tui.services.verification import backend_names, verify_benchmark

if TYPE_CHECKING:
    from testjack_tui.model import Benchmark, Task
    from testjack_tui.services.verification import TaskVerification


def _load(benchmark: Path, task_ids: list[str] | None) -> tuple[Benchmark, list[Task]]:
    from . import load_with_warnings

    bench = load_with_warnings(benchmark)
    tasks = list(bench.tasks.values())
    if task_ids:
        # A task is named by its id or by its folder (DeepSWE ids carry an "org/" prefix).
        by_name = {**{t.source.name: t.id for t in tasks if t.source is not None},
                   **{t: t for t in bench.tasks}}
        unknown = [t for t in task_ids if t not in by_name]
        if unknown:
            raise InputError(benchmark, "--task", f"no such task: {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(bench.tasks)) or 'none'})")
        tasks = [bench.tasks[by_name[t]] for t in task_ids]
    return bench, tasks


def render(results: list[TaskVerification]) -> str:
    from testjack_tui.services.verification import report_lines

    lines = [line for res in results for line in report_lines(res)]
    total = sum(r.recorded for r in results)
    same = sum(r.reproduced for r in results)
    bad = sum(1 for r in results if not r.well_formed)
    unknown = sum(1 for r in results for t in r.trials if t.recorded == "unknown")
    lines.append(f"total: {len(results)} task(s), {bad} not well-formed; "
                 f"{same}/{total} recorded verdicts reproduce"
                 + (f"; {unknown} trial(s) with no recorded verdict (unknown)" if unknown else ""))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify(
        benchmark: Annotated[Path, typer.Argument(help="benchmark folder or manifest (benchmark.toml)")],
        task: Annotated[Optional[list[str]], typer.Option("--task", "-t", help="only this task (repeatable)")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print the results as JSON")] = False,
        jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="containers at once (default: cores)")] = None,
        backend: Annotated[Optional[str], typer.Option(
            help="local podman or a ray cluster (default: the config file's [sandbox] backend)")] = None,
        ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="the Ray cluster for --backend ray")] = None,
    ) -> None:
        """Build the worlds and check each task and each recorded verdict by running T0."""
        try:
            from testjack_tui.config import load_config

            config = load_config()
            backend = backend or config.backend
            ray_address = ray_address or config.ray_address
            if backend not in backend_names():
                raise InputError("verify", "--backend", f"must be one of {', '.join(backend_names())}, got {backend!r}")
            bench, tasks = _load(benchmark, task)
        except InputError as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2)
        if not tasks:
            echo(f"error: {benchmark}: no task loaded: nothing to verify", err=True)
            raise typer.Exit(1)
        total = sum(2 + len(bench.trials_of(t.id)) for t in tasks)
        show_bar = sys.stderr.isatty() and not as_json
        with typer.progressbar(length=total, label="verifying", file=sys.stderr,
                               show_pos=True) if show_bar else _NoBar() as bar:
            def on_progress(what: str, done: int, of: int) -> None:
                bar.update(1)
                if not show_bar and not as_json:
                    echo(f"  done: {what}", err=True)
            try:
                results = asyncio.run(verify_benchmark(bench, tasks, on_progress, jobs, backend, ray_address,
                                                     log=lambda msg: echo(f"image: {msg}", err=True)))
            except SandboxError as exc:
                echo(f"error: {exc}", err=True)
                raise typer.Exit(1)
        if as_json:
            echo(json.dumps({"benchmark": bench.name, "tasks": [r.to_dict() for r in results]},
                                  indent=2))
        else:
            echo(render(results))
        if any(not r.well_formed for r in results):
            raise typer.Exit(1)  # a task that is not well-formed cannot be audited


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def update(self, n: int) -> None:
        pass
