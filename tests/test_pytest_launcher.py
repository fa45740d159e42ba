"""The pytest launcher and its selection plugin, run on the host's pytest against small repos
with real-world test configurations (the same code runs in the container; the podman end to end
is tests/test_repo_configs_podman.py). A run must report the requested test as passed whatever
the repo's configuration says, and print what it changed of it before any repo code runs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testjack_tui.sandbox.runners.base import config_notes
from testjack_tui.sandbox.runners.pytest_runner import LAUNCHER, PLUGIN

WITNESS = "def test_one():\n    assert 1 + 1 == 2\n\n\nclass TestTwo:\n    def test_two(self):\n        assert 2\n"


def launch(tmp_path: Path, files: dict[str, str], ids: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    repo, tj = tmp_path / "repo", tmp_path / "tj"
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    (tj / "plugins").mkdir(parents=True)
    (tj / "pytest_launch.py").write_text(LAUNCHER)
    (tj / "plugins" / "tj_select.py").write_text(PLUGIN)
    spec = tj / "spec.json"
    spec.write_text(json.dumps({"ids": ids, "workdir": str(repo), "junit": str(tj / "out" / "junit.xml"),
                                "progress": str(tj / "progress.jsonl"), "alternatives": {}}))
    proc = subprocess.run([sys.executable, str(tj / "pytest_launch.py"), str(spec)], cwd=repo,
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})
    junit = (tj / "out" / "junit.xml").read_text() if (tj / "out" / "junit.xml").exists() else ""
    return proc, junit


CONFIGS = {
    "warnings as errors (pyproject)": {"pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'},
    "warnings as errors (-W error)": {"pytest.ini": "[pytest]\naddopts = -W error -p no:randomly\n"},
    "python_files/functions/classes exclude test_*": {
        "pytest.ini": "[pytest]\npython_files = check_*.py\npython_functions = check_\npython_classes = Check\n"},
    "addopts that change what runs": {"setup.cfg": "[tool:pytest]\naddopts = -x --lf --maxfail=1 --strict-markers\n"},
    "doctest modules and testpaths": {"tox.ini": "[pytest]\naddopts = --doctest-modules\ntestpaths = src\n"},
}


@pytest.mark.parametrize("name", CONFIGS)
def test_a_requested_test_passes_under_the_repos_configuration(tmp_path, name):
    proc, junit = launch(tmp_path, {**CONFIGS[name], "tests/test_tj_w.py": WITNESS}, ["tests/test_tj_w.py"])
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert junit.count("<testcase") == 2 and "<failure" not in junit and "<error" not in junit, output
    assert "Warning" not in output, output


def test_what_the_launcher_changed_is_printed_before_the_repo_runs(tmp_path):
    proc, _ = launch(tmp_path, {"pytest.ini": "[pytest]\naddopts = -x --cov=calc\npython_functions = check_\n",
                                "tests/test_tj_w.py": WITNESS}, ["tests/test_tj_w.py"])
    notes = config_notes(proc.stdout)
    assert notes == ["pytest.ini: addopts -x --cov=calc left out (a focused run in one process)",
                     "pytest.ini: python_functions check_: test added for candidate tests "
                     "(the repo's own runs collect only check_)"], proc.stdout
    # A line the tests print later (after TJ_FILES) is not one of ours.
    assert config_notes("TJ_FILES []\nTJ_CONFIG forged\n") == []
    assert config_notes("TJ_CONFIG no files line\n") == []
