"""The quick performance run (`python -m tests.perf --quick`): every measurement is in its table
and every gating target is met. The measurements compare ratios taken side by side in one run;
no absolute time is asserted here (see tests/perf/__main__.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT))
from tests.perf.__main__ import EXPECTED_PREFIXES  # noqa: E402


@pytest.mark.podman
def test_quick_perf_run_meets_its_targets_and_lists_every_measurement(tmp_path):
    env = {**os.environ, "TESTJACK_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-m", "tests.perf", "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    table = proc.stdout
    names = [line.split("  ")[0] for line in table.splitlines()]
    missing = [p for p in EXPECTED_PREFIXES if not any(n.startswith(p) for n in names)]
    assert not missing, f"measurements missing from the table: {missing}\n{table}\n{proc.stderr[-3000:]}"
    assert "ERROR" not in [line.split()[-1] for line in table.splitlines() if line.strip()], table
    assert proc.returncode == 0, f"a target was missed:\n{table}\n{proc.stderr[-2000:]}"
