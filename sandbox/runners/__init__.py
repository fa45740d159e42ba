"""Test runners by framework name (the names tasks use, and their aliases)."""
from __future__ import annotations

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


def placement_hint(language: str, framework: str | None) -> str:
    """For the agents: the language, the runner, where witness files go, how ids look."""
    name = runner_name(framework)
    if name is None:
        return (f"language {language}; no test runner for {framework!r} here, so candidate tests "
                "cannot be run or validated")
    return f"language {language}, runner {name}: {RUNNERS[name].witness_hint}"


__all__ = ["Runner", "PytestRunner", "GoTestRunner", "CargoTestRunner", "DjangoRunner", "get_runner", "runner_name", "placement_hint", "grader_ids", "aggregate",
           "RUNNERS"]
