"""What the Selection screen keeps for a benchmark between visits and between runs of the app:
the settings form, which tasks and trials are picked, and the last `verify` result per task.

One small JSON file per benchmark folder under the data dir. It is a convenience: a damaged or
foreign file is ignored (the screen starts from its defaults), and anything that no longer
matches the benchmark (a trial that is gone, an agent profile removed from the config, a task
whose trials changed since it was verified) is dropped rather than shown.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from testjack_tui import paths
from testjack_tui.tui.choices import SessionForm

if TYPE_CHECKING:
    from testjack_tui.services.verification import TaskVerification


@dataclass
class KeptVerification:
    """One task's verify result, with what it was run on (so a changed task is not trusted)."""

    result: TaskVerification
    trial_ids: list[str]
    at: float


@dataclass
class SelectionMemory:
    form: SessionForm = field(default_factory=SessionForm)
    tasks: list[str] | None = None  # None: never chosen, i.e. the default (everything)
    trials: list[str] | None = None
    verification: dict[str, KeptVerification] = field(default_factory=dict)


def memory_file(benchmark_path: str | Path) -> Path:
    folder = str(Path(benchmark_path).expanduser().resolve())
    digest = hashlib.sha1(folder.encode("utf-8")).hexdigest()[:16]
    return paths.data_dir() / "selection" / f"{digest}.json"


def _form_from(raw: object) -> SessionForm:
    form = SessionForm()
    if not isinstance(raw, dict):
        return form
    for f in fields(SessionForm):
        value = raw.get(f.name)
        default = getattr(form, f.name)
        if f.name == "agents":
            if isinstance(value, dict):
                form.agents = {**form.agents, **{str(k): str(v) for k, v in value.items()
                                                 if k in form.agents and isinstance(v, str)}}
        elif isinstance(value, type(default)):
            setattr(form, f.name, value)
    return form


def load(benchmark_path: str | Path) -> SelectionMemory:
    from testjack_tui.services.verification import verification_from_dict

    path = memory_file(benchmark_path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return SelectionMemory()
    if not isinstance(raw, dict) or raw.get("benchmark") != str(Path(benchmark_path).expanduser().resolve()):
        return SelectionMemory()
    memory = SelectionMemory(form=_form_from(raw.get("form")))
    for name in ("tasks", "trials"):
        value = raw.get(name)
        if isinstance(value, list):
            setattr(memory, name, [str(v) for v in value])
    for task_id, kept in (raw.get("verification") or {}).items():
        try:
            memory.verification[task_id] = KeptVerification(
                verification_from_dict(kept["result"]), [str(t) for t in kept["trial_ids"]],
                float(kept["at"]))
        except (KeyError, TypeError, ValueError):
            continue  # one damaged entry loses that task's result only
    return memory


def save(benchmark_path: str | Path, memory: SelectionMemory) -> None:
    path = memory_file(benchmark_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "benchmark": str(Path(benchmark_path).expanduser().resolve()),
        "saved_at": time.time(),
        # Not the session to reuse runs of: each audit chooses its own (an earlier one may be gone).
        "form": {name: value for name, value in asdict(memory.form).items() if name != "reuse_runs"},
        "tasks": memory.tasks,
        "trials": memory.trials,
        "verification": {task_id: {"result": kept.result.to_dict(), "trial_ids": kept.trial_ids,
                                   "at": kept.at}
                         for task_id, kept in memory.verification.items()},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def still_valid(kept: KeptVerification, trial_ids: list[str]) -> bool:
    """A result counts only for the trials it was run on: a trial added or removed since
    means the task must be verified again."""
    return sorted(kept.trial_ids) == sorted(trial_ids)


def age(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min ago"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"
