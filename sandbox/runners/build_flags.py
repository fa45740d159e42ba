"""The build options T0's own command gives the runner, which every witness run must get too:
a package whose tests carry `//go:build integration` builds only under `go test -tags
integration`, and code behind a cargo feature only under `cargo test --features X`. Read from
the task's verifier script (Harbor `tests/test.sh`) or the harness's test command (SWE-bench)."""
from __future__ import annotations

import re
import shlex

from typing import Any

_GO = re.compile(r"\bgo\s+(?:test|vet|build)\b")
_CARGO = re.compile(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest|build)\b")


def t0_build_flags(task: Any) -> tuple[str, ...]:
    """The build options of T0's go test / cargo test command lines, in our runner's form:
    `-tags=a,b` for go test; `--features=a,b`, `--all-features`, `--no-default-features` for
    cargo. () when T0's command sets none (or is no go/cargo command)."""
    tests = getattr(task, "tests", None)
    evaluator = getattr(tests, "evaluator", None)
    script = "\n".join(s for s in (getattr(tests, "run_script", None) or "",
                                   getattr(evaluator, "test_command", "") or "") if s)
    return go_flags(script) + cargo_flags(script)


def _commands(script: str, command: re.Pattern[str]) -> list[list[str]]:
    """The words of each `command` in the script, from the command's name on (comments out)."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("#"):
            continue
        for part in re.split(r"&&|\|\||[;|]", line.split(" #", 1)[0]):
            m = command.search(part)
            if m:
                try:
                    out.append(shlex.split(part[m.start():]))
                except ValueError:
                    out.append(part[m.start():].split())
    return out


def _values(words: list[str], names: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in names:
            value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            found += [v for v in re.split(r"[,\s]+", value.strip("'\"")) if v and not v.startswith(("$", "-"))]
    return found


def go_flags(script: str) -> tuple[str, ...]:
    tags: list[str] = []
    for words in _commands(script, _GO):
        tags += _values(words, ("-tags", "--tags"))
    return (f"-tags={','.join(dict.fromkeys(tags))}",) if tags else ()


def cargo_flags(script: str) -> tuple[str, ...]:
    features: list[str] = []
    flags: list[str] = []
    for words in _commands(script, _CARGO):
        features += _values(words, ("--features", "-F"))
        flags += [w for w in words if w in ("--all-features", "--no-default-features")]
    return ((f"--features={','.join(dict.fromkeys(features))}",) if features else ()) + tuple(dict.fromkeys(flags))
