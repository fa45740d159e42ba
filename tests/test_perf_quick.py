"""The perf runner's own logic: how --quick gates, the cost model, row 6b's child. The quick run
itself is CI's perf step after the tests (`.ci/run`), not a test: it measures, and no time is
asserted here (see tests/perf/__main__.py)."""
from __future__ import annotations

import io
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT))


def test_quick_fails_a_row_only_past_its_floor_and_every_row_shows_it():
    # One quick run on this machine once measured 0.051x against 0.05x: noise, not a regression.
    from tests.perf.common import QUICK_MARGIN, apply_quick_floors, print_table, row

    rows = [row("2 replay near", "1 s", "20 s", 0.051, "<= 0.05x (>= 20x faster)", False),
            row("2 replay regressed", "1.4 s", "20 s", 0.07, "<= 0.05x (>= 20x faster)", False),
            row("5 recall near", "0.9", "0.8", 1.1, ">= 1.2", False),
            row("5 recall regressed", "0.8", "0.8", 0.9, ">= 1.2", False),
            row("6 peak RSS", "480 MB", "52 MB", 9.2, "<= 400 MB", False),
            row("10b disk", "200,000 B", "100,000 B changed", None, "<= changed + 64 KiB", False),
            row("1 world start", "1 s", "1 s", 1.0, "<= 1.3x", True)]
    apply_quick_floors(rows)
    assert QUICK_MARGIN == 1.25
    assert {r["name"]: (r["status"], r["floor"]) for r in rows} == {
        "2 replay near": ("NEAR", "<= 0.0625x"), "2 replay regressed": ("FAIL", "<= 0.0625x"),
        "5 recall near": ("NEAR", ">= 0.96x"), "5 recall regressed": ("FAIL", ">= 0.96x"),
        "6 peak RSS": ("NEAR", "<= 500 MB"), "10b disk": ("FAIL", "= target"),
        "1 world start": ("PASS", "<= 1.625x")}
    out = io.StringIO()
    print_table(rows, quick=True, out=out)
    assert out.getvalue().splitlines()[0].split() == ["name", "ours", "baseline", "ratio", "target", "floor", "status"]
    assert all(r["name"] in out.getvalue() for r in rows)


def test_a_whole_run_missing_a_measurement_fails(monkeypatch, capsys):
    # `python -m tests.perf --quick` is CI's perf step: a row that vanished from the table fails it.
    import tests.perf.__main__ as perf

    monkeypatch.setattr(perf, "MEASUREMENTS", {"3": ("loading", "loading")})
    monkeypatch.setattr(perf, "_run_one", lambda number, quick: [
        {"name": "3 load+list", "ours": "1 s", "baseline": "1 s", "ratio": 1.0, "target": "<= 3.0x",
         "status": "PASS", "gate": True, "note": ""}])
    monkeypatch.setattr(perf, "print_cost_model", lambda rows: None)
    assert perf.main(["--quick"]) == 1
    assert "1 world start (missing from the table)" in capsys.readouterr().out


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
