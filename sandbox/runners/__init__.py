"""Test runners by framework name (the names tasks use, and their aliases)."""
from __future__ import annotations

import re
from collections.abc import Iterable

from .base import Runner, aggregate
from .cargo_runner import CargoTestRunner
from .django_runner import DjangoRunner
from .go_runner import GoTestRunner
from .node_runner import JestRunner, MochaRunner, NodeBuiltinRunner, NodeTestRunner
from .pytest_runner import PytestRunner

RUNNERS: dict[str, type[Runner]] = {"pytest": PytestRunner, "go test": GoTestRunner,
                                    "vitest": NodeTestRunner, "jest": JestRunner, "mocha": MochaRunner,
                                    "node --test": NodeBuiltinRunner,
                                    "cargo test": CargoTestRunner, "django": DjangoRunner}
ALIASES = {"py.test": "pytest", "go": "go test", "gotest": "go test", "go-test": "go test",
           "go_test": "go test", "testing": "go test", "vitest-junit-to-ctrf": "vitest",
           "jest-ctrf-json-reporter": "jest", "ts-jest": "jest", "cargo": "cargo test",
           "cargo-test": "cargo test", "cargo nextest": "cargo test", "cargo-nextest": "cargo test",
           "nextest": "cargo test", "node": "node --test", "node:test": "node --test",
           "node-test": "node --test", "node test": "node --test", "node_test": "node --test",
           "nodetest": "node --test", "mocha-junit-reporter": "mocha",
           "runtests.py": "django", "tests/runtests.py": "django", "django-runtests": "django",
           "django test": "django"}


def runner_name(framework: str | None) -> str | None:
    """The runner a framework name means, or None when there is none for it."""
    name = (framework or "pytest").strip().lower()
    name = ALIASES.get(name, name)
    return name if name in RUNNERS else None


def get_runner(framework: str = "pytest") -> Runner:
    name = runner_name(framework)
    if name is None:
        from ..errors import SandboxError
        raise SandboxError(f"no test runner for framework {framework!r} "
                           f"(known: {', '.join(sorted(RUNNERS))})")
    return RUNNERS[name]()


def grader_ids(framework: str | None, path: str, outcomes: Iterable[str]) -> list[str]:
    """The ids the benchmark's own grader uses for the tests of one witness file, read from a
    run's outcome keys (see each runner's `grader_ids`)."""
    name = runner_name(framework) or "pytest"
    return RUNNERS[name].grader_ids(path, outcomes)


def moved_grader_ids(framework: str | None, old: str, new: str, outcomes: Iterable[str]) -> dict[str, str]:
    """The ids the grader gives the tests of the file `old` in a run's outcome keys (`grader_ids`),
    each as it reads for the same file run as `new` in the same folder, its tests keeping their
    names: a run copied to a candidate that put the same test under another name
    (engine/oracle.taken_run) must answer in the grader's scheme too, where the export reads it
    (cargo's target is the file's stem, JS's and Django's ids name the file, Go's only the package)."""
    from ..test_ids import module_of

    keys = list(outcomes)
    name = runner_name(framework) or "pytest"
    style = RUNNERS[name]().names
    own = [k[len(old) + 2:] for k in keys if k.startswith(old + "::")]
    tests = {re.split(style.id_parts, rest)[0]: re.split(style.id_parts, rest)[0] for rest in own} if style else {}
    moved: dict[str, str] = {}
    for test_id in RUNNERS[name].grader_ids(old, keys):
        if test_id == old or test_id.startswith((old + "::", old + ": ")):
            moved[test_id] = new + test_id[len(old):]
        elif style is not None and (scheme := style.scheme_id(test_id, old, new, tests)) is not None:
            moved[test_id] = scheme
        elif old.endswith(".py") and module_of(old) in test_id:  # Django's `test_m (app.test_x.Class)`
            moved[test_id] = test_id.replace(module_of(old), module_of(new))
        else:
            moved[test_id] = test_id
    return moved


def placement_hint(language: str, framework: str | None) -> str:
    """For the agents: the language, the runner, where witness files go, how ids look."""
    name = runner_name(framework)
    if name is None:
        return (f"language {language}; no test runner for {framework!r} here, so candidate tests "
                "cannot be run or validated")
    return f"language {language}, runner {name}: {RUNNERS[name].witness_hint}"


__all__ = ["Runner", "PytestRunner", "GoTestRunner", "CargoTestRunner", "DjangoRunner", "get_runner", "runner_name", "placement_hint", "grader_ids", "moved_grader_ids", "aggregate",
           "RUNNERS"]
