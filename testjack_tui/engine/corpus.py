"""The session's corpus as its meta records it when the session starts: every trial of each
selected task (passing or not), and the population the ambiguity rule counts. `session.py`
writes it (`corpus_meta`); `read_corpus` is the one reader (summary, standing, report).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from testjack_tui.errors import InputError
from testjack_tui.model import Trial

from .records import FlatRecord, JsonObject

CORPUS, POPULATION = "corpus", "population"  # the meta keys


@dataclass(frozen=True)
class CorpusTrial(FlatRecord):
    """One trial of the corpus, as the benchmark recorded it."""

    id: str
    model: str | None
    agent: str | None
    official_pass: bool
    reward: float | None = None

    @classmethod
    def of(cls, trial: Trial) -> CorpusTrial:
        return cls(trial.id, trial.model, trial.agent, trial.official_pass, trial.reward)


@dataclass(frozen=True)
class SessionCorpus:
    """task id -> its trials (the tables' denominators), and task id -> passing trial -> model
    (rho's population; sessions stored before it was recorded fall back on the corpus)."""

    tasks: dict[str, list[CorpusTrial]]
    population: dict[str, dict[str, str]]

    def passing_models(self, task_id: str) -> dict[str, str]:
        """rho's denominator: every passing trial of the task (the session's population) -> its model."""
        return self.population.get(task_id) or \
            {t.id: t.model or "?" for t in self.tasks.get(task_id, []) if t.official_pass}


def corpus_meta(tasks: dict[str, list[Trial]]) -> JsonObject:
    """The corpus as the session's meta stores it."""
    return {task_id: [CorpusTrial.of(t).to_json() for t in trials] for task_id, trials in tasks.items()}


def read_corpus(meta: JsonObject, path: PurePath | str) -> SessionCorpus:
    """The corpus of a session's meta (`path`: its database, named on a bad entry). A session
    that has not recorded one yet has an empty corpus."""
    raw, population = meta.get(CORPUS) or {}, meta.get(POPULATION) or {}
    if not isinstance(raw, dict):
        raise InputError(path, CORPUS, f"must be an object of task id -> trials, got {type(raw).__name__}")
    if not isinstance(population, dict):
        raise InputError(path, POPULATION, f"must be an object of task id -> trials, got {type(population).__name__}")
    tasks = {str(task_id): [_trial(t, path, f"{CORPUS}.{task_id}[{i}]") for i, t in enumerate(_list(trials, path, task_id))]
             for task_id, trials in raw.items()}
    models: dict[str, dict[str, str]] = {}
    for task_id, trials in population.items():
        if not isinstance(trials, dict) or not all(isinstance(m, str) for m in trials.values()):
            raise InputError(path, f"{POPULATION}.{task_id}", "must be an object of trial id -> model")
        models[str(task_id)] = {str(tid): m for tid, m in trials.items()}
    return SessionCorpus(tasks, models)


def _list(trials: object, path: PurePath | str, task_id: str) -> list[object]:
    if not isinstance(trials, list):
        raise InputError(path, f"{CORPUS}.{task_id}", f"must be a list of trials, got {type(trials).__name__}")
    return trials


def _trial(data: object, path: PurePath | str, where: str) -> CorpusTrial:
    if not isinstance(data, dict):
        raise InputError(path, where, f"must be an object, got {type(data).__name__}")
    if not isinstance(data.get("id"), str) or not data["id"]:
        raise InputError(path, f"{where}.id", "must be a trial id")
    for name in ("model", "agent"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise InputError(path, f"{where}.{name}", f"must be text, got {data[name]!r}")
    reward = data.get("reward")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
        raise InputError(path, f"{where}.reward", f"must be a number, got {reward!r}")
    return CorpusTrial(data["id"], data.get("model"), data.get("agent"), bool(data.get("official_pass")), reward)
