"""Differential probes against a task's reference program (an executable oracle).

Pure: the loader reads `[reference_program]`, a probe becomes a pytest file whose cases are the
oracle's answers, and a probe that cannot run becomes a failing test carrying the reason. With
podman: a scripted audit of the demo's oracle task refutes a defective trial through a probe whose
expected values came from the Perl legacy reader.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.engine.budgeted import BudgetedBackend
from testjack_tui.engine.probes import Probe, ProbeError, materialize_probe, parse_probe, probe_test_source
from testjack_tui.engine.roles import Candidate
from testjack_tui.errors import InputError

from conftest import DEMO

TASK = "parse-duration-compound"
TRIAL = f"{TASK}__kestrel__1"  # accepts commas and "and" between components (labels.json)
ADAPTER = "def adapt(text):\n    return str(len(text)) if text.isalpha() else 'error'\n"


def probe(**change) -> str:
    data = {"inputs": ["abc", "a1"], "adapter": ADAPTER, "test_path": "tests/test_tj_probe_len.py", **change}
    return json.dumps(data)


def candidate(source: str) -> Candidate:
    return Candidate(id="c1", path="tests/test_tj_probe_len.probe.json", source=source,
                     requirement="lengths", author="audit", origin="candidates/len_v1.probe.json")


class FakeSandbox:
    """Answers the oracle exec with fixed stdout; records what it was asked to run."""

    def __init__(self, stdout: str, exit_code: int = 0):
        self.stdout, self.exit_code, self.calls = stdout, exit_code, []

    async def prepare(self, task, kind, trial=None):  # SandboxBackend.prepare
        return f"{task.id}/{kind}"

    async def exec(self, world, argv, **kwargs):
        self.calls.append((world, argv, kwargs))
        return SimpleNamespace(exit_code=self.exit_code, timed_out=False, stdout_head=self.stdout,
                               stdout_tail="", stderr_head="boom" if self.exit_code else "")


def run_materialize(tmp_path, source: str, stdout: str, exit_code: int = 0, program: bool = True):
    (tmp_path / "oracle").mkdir(exist_ok=True)
    (tmp_path / "oracle" / "len.sh").write_text("#!/bin/sh\n")
    from testjack_tui.model import ReferenceProgram

    task = SimpleNamespace(id="t", reference_program=ReferenceProgram(("sh", "len.sh"), tmp_path / "oracle")
                           if program else None)
    sandbox = FakeSandbox(stdout, exit_code)
    # The session's one sandbox; the task's reference program is no trial code it counts.
    out = asyncio.run(materialize_probe(SimpleNamespace(sandbox=BudgetedBackend(sandbox)), task, candidate(source)))
    return out, sandbox


def test_probe_becomes_a_pytest_file_with_the_oracles_answers(tmp_path):
    out, sandbox = run_materialize(tmp_path, probe(), "3\n2\n")
    assert out.path == "tests/test_tj_probe_len.py" and out.origin == "candidates/len_v1.probe.json"
    (world, argv, kwargs), = sandbox.calls
    assert world == "t/null" and argv[-2:] == ["sh", "len.sh"] and kwargs["stdin"] == "abc\na1\n"
    assert "('abc', '3')" in out.source and "('a1', '2')" in out.source
    assert "`sh len.sh`" in out.source  # the oracle is named where the expected values are
    # The file is an ordinary pytest module: the adapter decides each case against the oracle.
    test_file = tmp_path / "test_probe_len.py"
    test_file.write_text(out.source)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert "1 failed, 1 passed" in run.stdout, run.stdout  # adapt("a1") is 'error', the oracle says '2'


def test_probe_that_cannot_run_fails_with_the_reason(tmp_path):
    out, _ = run_materialize(tmp_path, probe(), "3\n")
    assert "printed 1 lines for 2 inputs" in out.source and "pytest.fail(" in out.source
    out, _ = run_materialize(tmp_path, probe(), "", exit_code=2)
    assert "`sh len.sh` exited with 2: boom" in out.source
    out, sandbox = run_materialize(tmp_path, probe(), "3\n2\n", program=False)
    assert "names no reference program" in out.source and not sandbox.calls
    out, _ = run_materialize(tmp_path, "{not json", "")
    assert out.path == "tests/test_tj_probe_len.py" and "not valid JSON" in out.source


@pytest.mark.parametrize("change, field", [
    ({"inputs": []}, "inputs"), ({"inputs": ["two\nlines"]}, "inputs[0]"),
    ({"adapter": "x = 1"}, "adapter"), ({"test_path": "/etc/test_x.py"}, "test_path"),
    ({"test_path": "tests/probe.py"}, "test_path"),
])
def test_probe_fields_are_checked(change, field):
    with pytest.raises(ProbeError, match=rf"^{field.replace('[', '.').replace(']', '.')}"):
        parse_probe(probe(**change))


def test_probe_source_is_stable_and_escapes_inputs():
    text = probe_test_source(Probe(["it's \"x\""], ADAPTER, "tests/test_x.py"), ["error"], "perl x.pl")
    compile(text, "probe", "exec")
    assert text == probe_test_source(Probe(["it's \"x\""], ADAPTER, "tests/test_x.py"), ["error"], "perl x.pl")


def test_loader_reads_the_demo_reference_program():
    task = load_benchmark(DEMO).tasks[TASK]
    program = task.reference_program
    assert program.command == ("perl", "legacy_duration.pl") and program.image is None
    assert (program.files / "legacy_duration.pl").is_file()


@pytest.mark.parametrize("table, field", [
    ('command = "perl x.pl"\nfiles = "oracle"', "reference_program.command"),
    ('command = ["perl", "x.pl"]\nfiles = "../elsewhere"', "reference_program.files"),
    ('command = ["perl", "x.pl"]\nfiles = "missing"', "reference_program.files"),
    ('command = ["perl", "x.pl"]\nfiles = "oracle"\nimage = 3', "reference_program.image"),
])
def test_bad_reference_program_is_one_line_naming_the_field(tmp_path, table, field):
    from testjack_tui.benchmarks.harbor import _read_task

    folder = tmp_path / TASK
    shutil.copytree(DEMO / "tasks" / TASK, folder)
    toml = folder / "task.toml"
    text = toml.read_text()
    toml.write_text(text[: text.index("[reference_program]")] + "[reference_program]\n" + table + "\n")
    with pytest.raises(InputError) as err:
        _read_task(folder, {}, tmp_path)  # the benchmark root: files must stay inside it
    assert err.value.field == field and "\n" not in str(err.value)


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may be the first reader of the shared demo audits (their setup)
def test_scripted_audit_refutes_through_a_probe_answered_by_the_perl_oracle(demo_per_trial_audit):
    # The shared per-trial demo audit (conftest): TRIAL is audited on its own there, by its
    # recorded audit script, exactly as `audit --task TASK --trial TRIAL --mode per-trial` would.
    task = demo_per_trial_audit["summary"]["tasks"][TASK]
    assert task["trials"][TRIAL]["state"] == "refuted"
    probe_witness, = [w for w in task["witnesses"] if w["path"] == "tests/test_tj_legacy_reader.py"]
    # The expected values are the Perl reader's answers: 'error' for the separators the trial
    # accepts, sums in its three-decimal format for the issue's own examples.
    for case in ("('1h, 30m', 'error')", "('1h and 30m', 'error')", "('1h30m15s', '5415.000')",
                 "('250ms', '0.250')"):
        assert case in probe_witness["source"]
    assert "reference program `perl legacy_duration.pl`" in probe_witness["source"]
    assert TRIAL in probe_witness["refutes"]
