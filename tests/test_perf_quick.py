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
@pytest.mark.timeout(1200)  # the child's own limit is 900 s
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
    # The output ends with the cost model, priced from this run's own measurements.
    model = table[table.index("Cost model: test execution"):].splitlines()
    assert [line.split("  ")[0].strip() for line in model[3:6]] == ["100", "1,000", "10,000"], table


def test_cost_model_prices_both_modes_from_the_measured_figures():
    from tests.perf.cost_model import lines, plan

    measured = {"run_slot_s": 2.0, "world_slot_s": 4.0, "audit_tasks": 1, "audit_trials": 8,
                "audit_rounds": 2, "audit_test_runs": 30}
    small, big = plan(measured, 100), plan(measured, 1000)
    # check: 100/8 tasks x 10 worlds and T0 runs at 6 slot-s; rounds: (30 - 10) / 2 = 10 runs each
    assert round(small["lightweight"][0]) == round(12.5 * (10 * 6 + 2 * 10 * 2))
    assert round(small["per-trial"][0]) == round(12.5 * (10 * 6 + 8 * 10 * 2))
    assert big["per-trial"][0] == 10 * small["per-trial"][0]
    table = lines([{"metrics": measured}, {"metrics": {"ray_overhead_slot_s": 0.1, "ray_dispatch_s": 0.0}}])
    assert "ray 10x8" in table[1] and table[3].split()[0] == "100"
    assert "needs rows 2 and 6" in lines([{"metrics": {"run_slot_s": 2.0}}])[0]


def test_the_scale_memory_row_audits_every_generated_trial_headless(tmp_path, monkeypatch):
    # Row 6b's child, at a small size: the generated Harbor benchmark loads with every trial
    # passing, and the headless per-trial audit on the simulated sandbox covers all of them.
    from tests.perf import audit_rss

    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path / "home"))
    bench = tmp_path / "bench"
    bench.mkdir()
    assert audit_rss.generate(bench, tasks=2, per_task=6) == 12
    rss, _, summary = audit_rss._audit(bench, "per-trial")
    assert summary["state"] == "finished" and summary["totals"]["passing"] == 12
    assert summary["totals"]["unaudited"] == 0 and summary["totals"]["refuted"] + summary["totals"]["clean"] == 12
    assert 10 < rss < audit_rss.TARGET_MB
