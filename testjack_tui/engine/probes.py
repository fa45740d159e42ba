"""Differential probes: witness candidates whose expected values come from an executable oracle.

A task may name a reference program (`Task.reference_program`, e.g. the old system the task
ports). An audit agent then proposes a probe instead of a test file: a candidate whose path
ends in `.probe.json`, holding inputs, an adapter (repo-language source defining
`adapt(text) -> str`, the trial's code seen through the oracle's text protocol) and the path
of the test to write. Before validation the engine runs the reference program on the inputs
(a fresh container, no trial code) and turns the probe into an ordinary pytest file whose
cases are the inputs with the oracle's answers. From there it is a candidate like any other:
it must pass on the reference world, fail on the trial, and the reviewer judges whether the
oracle's answers are what P requires. The answers stay visible in the file's source.
"""
from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass
import io
import json
import tarfile
from pathlib import Path

from testjack_tui.model import Task

from .roles import Candidate

from .env import EngineEnv

PROBE_SUFFIX = ".probe.json"
ORACLE_DIR = "/tmp/oracle"  # under /tmp: world containers have a read-only root
MAX_INPUTS = 200
MAX_ORACLE_TAR = 96 * 1024  # travels base64-encoded in one argv string (Linux caps it at 128 KiB)
ORACLE_TIMEOUT = 60


class ProbeError(ValueError):
    """A probe that cannot be turned into a test; the message says which field and why."""


def is_probe(candidate: Candidate) -> bool:
    return candidate.path.endswith(PROBE_SUFFIX)


@dataclass(frozen=True)
class Probe:
    """A differential probe as its author wrote it (JSON), checked."""

    inputs: list[str]  # one-line strings, each fed to the reference program and to adapt()
    adapter: str  # source defining adapt(text) -> str
    test_path: str  # the repo-relative pytest file it becomes


def parse_probe(source: str) -> Probe:
    """The probe's fields, checked: inputs (one-line strings), adapter, test_path."""
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise ProbeError(f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProbeError("must be a JSON object with inputs, adapter and test_path")
    inputs = data.get("inputs")
    if not isinstance(inputs, list) or not inputs or len(inputs) > MAX_INPUTS:
        raise ProbeError(f"inputs: must be a list of 1 to {MAX_INPUTS} strings")
    for i, text in enumerate(inputs):
        if not isinstance(text, str) or "\n" in text or "\r" in text:
            raise ProbeError(f"inputs[{i}]: must be a one-line string (the oracle reads one input per line)")
    adapter = data.get("adapter")
    if not isinstance(adapter, str) or "def adapt" not in adapter:
        raise ProbeError("adapter: must be source code defining adapt(text) -> str")
    test_path = data.get("test_path")
    name = Path(str(test_path)).name
    if (not isinstance(test_path, str) or test_path.startswith("/") or ".." in Path(test_path).parts
            or not (name.startswith("test_") and name.endswith(".py"))):
        raise ProbeError(f"test_path: must be a repo-relative pytest file (tests/test_*.py), got {test_path!r}")
    return Probe(inputs, adapter, test_path)


def probe_test_source(probe: Probe, outputs: list[str], oracle: str, origin: str = "") -> str:
    """The pytest file a probe becomes: its adapter, and one case per input with the oracle's answer."""
    cases = "".join(f"    ({text!r}, {answer!r}),\n" for text, answer in zip(probe.inputs, outputs))
    where = f" from {origin}" if origin else ""
    return (f'"""Differential probe{where}: the trial\'s answers, through adapt(), against the\n'
            f'reference program `{oracle}` (expected values are its outputs, one per input)."""\n'
            "import pytest\n\n"
            f"{probe.adapter.rstrip()}\n\n\n"
            f"# Outputs of the reference program `{oracle}` on each input.\n"
            f"CASES = [\n{cases}]\n\n\n"
            '@pytest.mark.parametrize("text, expected", CASES)\n'
            "def test_matches_reference_program(text, expected):\n"
            "    assert adapt(text) == expected\n")


def _failing_test(probe_path: str, reason: str) -> str:
    """Stands in for a probe that could not be materialized: it fails on every world, so the
    author gets the reason back as repair feedback and the chain is dropped with it."""
    return ('"""A differential probe that could not be run against the reference program."""\n'
            "import pytest\n\n\n"
            "def test_probe_could_not_run():\n"
            f"    pytest.fail({f'{probe_path}: {reason}'!r})\n")


def _oracle_tar(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                info = tar.gettarinfo(str(path), arcname=path.relative_to(folder).as_posix())
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                with path.open("rb") as fh:
                    tar.addfile(info, fh)
    return buf.getvalue()


async def run_reference_program(env: EngineEnv, task: Task, inputs: list[str]) -> list[str]:
    """The reference program's output lines for `inputs`, run in a fresh container (the task's
    null world unless the program names its own image). Raises ProbeError with the reason."""
    program = task.reference_program
    if program is None:
        raise ProbeError(f"task {task.id} names no reference program ([reference_program] in task.toml)")
    tar = _oracle_tar(program.files)
    if len(tar) > MAX_ORACLE_TAR:
        raise ProbeError(f"the reference program's files ({program.files}) exceed {MAX_ORACLE_TAR // 1024} KiB")
    if program.image:
        from testjack_tui.sandbox.api import WorldRef  # the engine names worlds; the sandbox runs them

        world = WorldRef(task_id=task.id, kind="null", trial_id=None, image=program.image, workdir=ORACLE_DIR)
    else:
        world = await env.sandbox.prepare(task, "null")
    script = (f'mkdir -p {ORACLE_DIR} && printf %s "$1" | base64 -d | tar -x -C {ORACLE_DIR} '
              f'&& cd {ORACLE_DIR} && shift && exec "$@"')
    argv = ["sh", "-c", script, "sh", base64.b64encode(tar).decode(), *program.command]
    result = await env.sandbox.unmetered.exec(world, argv, timeout=ORACLE_TIMEOUT, cwd="/",
                                              stdin="".join(text + "\n" for text in inputs))
    shown = " ".join(program.command)
    if result.timed_out or result.exit_code != 0:
        why = "timed out" if result.timed_out else f"exited with {result.exit_code}"
        tail = " ".join((result.stderr_head or result.stdout_head).split())[-300:]
        raise ProbeError(f"the reference program `{shown}` {why}" + (f": {tail}" if tail else ""))
    if result.stdout_tail:
        raise ProbeError(f"the reference program `{shown}` printed more output than can be kept")
    lines = result.stdout_head.splitlines()
    if len(lines) != len(inputs):
        raise ProbeError(f"the reference program `{shown}` printed {len(lines)} lines for "
                         f"{len(inputs)} inputs (it must print one line per input)")
    return lines


async def materialize_probe(env: EngineEnv, task: Task, candidate: Candidate) -> Candidate:
    """A probe candidate turned into its pytest file (other candidates come back unchanged).

    A probe that cannot run (bad fields, no reference program, the program failing) becomes a
    test that fails with the reason, so it goes back to its author like any failing candidate.
    """
    if not is_probe(candidate):
        return candidate
    try:
        probe = parse_probe(candidate.source)
    except ProbeError as exc:
        fallback = candidate.path[: -len(PROBE_SUFFIX)].rstrip("/") or "tests/test_tj_probe"
        test_path = fallback if fallback.endswith(".py") else fallback + ".py"
        return dataclasses.replace(candidate, path=test_path, test_ids=(),
                                   source=_failing_test(candidate.path, str(exc)))
    try:
        if task.reference_program is None:
            raise ProbeError(f"task {task.id} names no reference program ([reference_program] in task.toml)")
        outputs = await run_reference_program(env, task, probe.inputs)
        source = probe_test_source(probe, outputs, " ".join(task.reference_program.command),
                                   candidate.origin or candidate.path)
    except ProbeError as exc:
        source = _failing_test(candidate.path, str(exc))
    return dataclasses.replace(candidate, path=probe.test_path, test_ids=(), source=source)
