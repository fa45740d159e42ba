"""Which tasks and trials a session audits: the one reading of `--task` / `--trial` (the
session runs it, and `services.plan_session` runs it before a session exists, so an unknown id
is one line before anything is created)."""
from __future__ import annotations

from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Task, Trial

from .config import SessionConfig


def select_trials(cfg: SessionConfig, benchmark: Benchmark) -> list[tuple[Task, list[Trial]]]:
    """(task, its officially passing trials to audit, by id) for every selected task, by task id
    unless `--task` gave an order. `--trial` limits the corpus: tasks without a chosen trial are
    left out."""
    task_ids = list(cfg.tasks) if cfg.tasks else sorted(benchmark.tasks)
    for task_id in task_ids:
        if task_id not in benchmark.tasks:
            raise InputError(cfg.benchmark, "task", f"no task {task_id!r} in the benchmark")
    wanted = set(cfg.trials or [])
    if wanted:
        known = {t.id for t in benchmark.trials}
        missing = sorted(wanted - known)
        if missing:
            raise InputError(cfg.benchmark, "trial", f"no trial {missing[0]!r} in the benchmark")
        task_ids = [t for t in task_ids if any(tr.id in wanted for tr in benchmark.trials_of(t))]
    selected: list[tuple[Task, list[Trial]]] = []
    for task_id in task_ids:
        trials = [t for t in benchmark.passing(task_id) if not wanted or t.id in wanted]
        selected.append((benchmark.tasks[task_id], sorted(trials, key=lambda t: t.id)))
    return selected
