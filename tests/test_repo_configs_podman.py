"""Witness runs under a real repository's own pytest configuration (issue 36: the repo's
`filterwarnings = ["error"]` turned our launcher's own warning into a dead run, and every
witness was dropped as "fails on the reference").

tests/fixtures/swebench-pyconf is one small package under five configurations seen in real
repositories: warnings as errors (Flask), `python_files`/`python_functions` that exclude
`test_*`, `addopts = -n auto -x` with pytest-xdist installed, `required_plugins` with
`--strict-markers`, and `--doctest-modules` with `testpaths`. Each is audited end to end in
operator mode with real podman: the operator's witness must pass on the reference world and fail
on the planted defect (divide(a, 0) raises ValueError only for a > 0), so the trial is refuted.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "swebench-pyconf"
VARIANTS = ("warnings", "pyfiles", "xdist", "required", "doctest")
# A module-level function and a class: both must be collected whatever python_functions and
# python_classes say.
WITNESS = '''"""divide() raises ValueError for a zero divisor whatever the dividend."""
import pytest

from calc.ops import divide


def test_negative_dividend_by_zero_raises_value_error():
    with pytest.raises(ValueError):
        divide(-1, 0)


class TestZeroDividend:
    def test_zero_by_zero_raises_value_error(self):
        with pytest.raises(ValueError):
            divide(0, 0)
'''
REQUIREMENT = "divide(a, b) must raise ValueError (not ZeroDivisionError) whenever b is zero, whatever a is"  # quotes P
# What the launcher must log (once per task) where it fits a run to the repo's configuration.
NOTES = {
    "pyfiles": ["pytest.ini: python_functions check_*: test added for candidate tests "
                "(the repo's own runs collect only check_*)",
                "pytest.ini: python_classes Check: Test added for candidate tests (the repo's own runs "
                "collect only Check)",
                "pytest.ini: python_files check_*.py: candidate files are passed by path"],
    "xdist": ["setup.cfg: addopts -n auto -x left out"],
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-pyconf-home")


@pytest.mark.podman
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_witness_runs_under_the_repos_own_pytest_configuration(variant, home, tmp_path):
    task, trial = f"acme__calc-{variant}", f"acme__calc-{variant}@model-a"
    witness = tmp_path / "zero_divisor.py"
    witness.write_text(WITNESS)
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text(f'["{witness.name}"]\nlabel = "valid"\nnote = "P: whatever a is"\n')
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "testjack_tui.cli", "audit", str(FIXTURE), "--agent", "operator",
         "--candidate", str(witness), "--candidate-path", "tests/test_tj_zero_divisor.py",
         "--requirement", REQUIREMENT, "--trial", trial, "--verdicts", str(verdicts),
         "--headless", "-v", "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, TESTJACK_HOME=str(home)), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=1200)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    summary = json.loads((out / "summary.json").read_text())
    # Refuted: the witness passed on the reference world (else it goes back to its author and
    # never counts) and failed on the planted defect.
    assert summary["tasks"][task]["trials"][trial]["state"] == "refuted", text[-4000:]
    [w] = summary["tasks"][task]["witnesses"]
    assert w["path"] == "tests/test_tj_zero_divisor.py"
    # No run on the reference or the trial lost a test (T0 on the null world runs as the harness
    # runs it, `-x` included: under xdist a test after the first failure may go unreported).
    runs = [line for line in text.splitlines() if ": tests on " in line and "/null:" not in line]
    assert runs and not [line for line in runs if "not_found" in line or "error" in line], runs
    assert "PytestAssertRewriteWarning" not in text
    # Every choice made for the repo's configuration is logged, once per task.
    for note in NOTES.get(variant, []):
        assert text.count(note) == 1, (note, text[-4000:])
    if variant not in NOTES:
        assert "test configuration:" not in text
