"""The command a person types to re-run one witness in a world, in the task's runner's own terms.

Reports print it beside every refutation ("run in this trial's model world with the witness file
written to <path>"): the repository's own tool, the witness's file and, where the tool can name
one test, its tests; never our launcher (it needs a spec file and a plugin a person does not have).
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from . import runner_name

# A JS tool from the repository's own install (the tool the task's test.sh runs, not npx's guess).
_BIN = "./node_modules/.bin/"


def _names(path: str, test_ids: Sequence[str]) -> list[str]:
    """The test names the ids give inside `path` (`path::name`), in order; [] for the whole file."""
    out = []
    for test_id in test_ids:
        head, sep, name = test_id.partition("::")
        if head != path or not sep:
            return []  # an id naming the whole file (or another scheme): run the file
        out.append(name)
    return out


def _pytest(path: str, test_ids: Sequence[str]) -> str:
    # python3: images built from a plain Debian base have no `python` (seen in the relay run).
    return "python3 -m pytest -q -p no:cacheprovider " + " ".join(shlex.quote(i) for i in (test_ids or [path]))


def _django(path: str, test_ids: Sequence[str]) -> str:
    from .django_runner import RUNTESTS, label_of

    labels = [label for label, _, _ in map(label_of, test_ids or [path]) if label]
    return f"python3 {RUNTESTS} --verbosity 2 --parallel 1 " + " ".join(shlex.quote(x) for x in labels)


def _go(path: str, test_ids: Sequence[str]) -> str:
    package = "./" + str(PurePosixPath(path).parent)
    tops = list(dict.fromkeys(n.split("/", 1)[0] for n in _names(path, test_ids)))
    run = f" -run {shlex.quote('^(' + '|'.join(map(re.escape, tops)) + ')$')}" if tops else ""
    return f"go test -count=1 -v{run} {package if package != './.' else '.'}"


def _cargo(path: str, test_ids: Sequence[str]) -> str:
    p = PurePosixPath(path)
    member = p.parent.parent  # <member>/tests/<target>.rs (the root package: tests/<target>.rs)
    manifest = "" if str(member) == "." else f" --manifest-path {shlex.quote(str(member / 'Cargo.toml'))}"
    names = _names(path, test_ids)
    exact = (" -- --exact " + " ".join(shlex.quote(n) for n in names)) if names else ""
    return f"cargo test{manifest} --test {shlex.quote(p.stem)}{exact}"


def _js(tool: str) -> Callable[[str, Sequence[str]], str]:
    def command(path: str, test_ids: Sequence[str]) -> str:
        return tool + " " + shlex.quote(path)
    return command


COMMANDS: dict[str, Callable[[str, Sequence[str]], str]] = {
    "pytest": _pytest, "django": _django, "go test": _go, "cargo test": _cargo,
    "vitest": _js(_BIN + "vitest run"), "jest": _js(_BIN + "jest --runTestsByPath"),
    "mocha": _js(_BIN + "mocha"), "node --test": _js("node --test"),
}


def rerun_command(framework: str | None, path: str, test_ids: Sequence[str], workdir: str) -> str:
    """`cd <workdir> && <the runner's own command for this witness>`."""
    build = COMMANDS.get(runner_name(framework) or "pytest", _pytest)
    return f"cd {shlex.quote(workdir)} && {build(path, list(test_ids))}"
