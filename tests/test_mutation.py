"""Mutation evidence: the mutator (pure) and a real audit that reports surviving mutants."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from testjack_tui.engine.detectors.mutation import MutationReport, Survivor, _kills, mutants_of, pick

SOURCE = '''"""Module docstring stays."""
LIMIT = 10


def clamp(value, low=0):
    """Docstring stays too."""
    if value < low:
        return low
    if value > LIMIT and value != 99:
        return LIMIT
    return value + 1


def label(ok):
    name = "é-ok" if ok else "bad"
    return f"{name}!"
'''


def _by_line(mutants):
    out = {}
    for m in mutants:
        out.setdefault(m.line, []).append((m.operator, m.mutated.strip()))
    return out


def test_mutants_only_on_the_given_lines_and_never_in_docstrings():
    lines = set(range(1, 18))
    found = _by_line(mutants_of("pkg/mod.py", SOURCE, lines))
    assert 1 not in found and 6 not in found  # docstrings
    assert ("comparison", "if value <= low:") in found[7]
    assert ("branch", "if False:") in found[7]
    assert ("return", "return None") in found[8]
    assert ("comparison", "if value > LIMIT and value == 99:") in found[9]
    assert ("boolean", "if value > LIMIT or value != 99:") in found[9]
    assert ("arithmetic", "return value - 1") in found[11]
    assert ("constant", "return value + 2") in found[11]
    assert ("constant", 'name = \'\' if ok else "bad"') in found[15]  # non-ASCII columns handled
    assert ("constant", 'name = "é-ok" if ok else \'\'') in found[15]
    assert all(op != "constant" for op, _ in found.get(16, []))  # f-string pieces are left alone

    only = mutants_of("pkg/mod.py", SOURCE, {11})
    assert {m.line for m in only} == {11}
    for m in only:  # each mutant is the whole file with exactly one line changed, and parses
        changed = [(a, b) for a, b in zip(SOURCE.splitlines(), m.source.splitlines()) if a != b]
        assert changed == [(m.original, m.mutated)]
        compile(m.source, "mod.py", "exec")


def test_unparsable_file_gives_no_mutants():
    assert mutants_of("x.py", "def broken(:\n", {1}) == []


def test_pick_spreads_a_small_budget_over_lines():
    mutants = mutants_of("pkg/mod.py", SOURCE, set(range(1, 18)))
    chosen = pick(mutants, 4)
    assert len(chosen) == 4
    assert len({m.line for m in chosen}) == 4
    assert pick(mutants, 0) == []
    assert sorted(pick(mutants, 1000), key=mutants.index) == mutants  # a big budget takes all


def test_a_mutant_is_killed_only_when_a_passing_t0_test_stops_passing():
    base = {"t::a": {"status": "passed"}, "t::b": {"status": "failed"}}
    assert not _kills(base, {"t::a": {"status": "passed"}, "t::b": {"status": "failed"}})
    assert _kills(base, {"t::a": {"status": "failed"}, "t::b": {"status": "failed"}})
    assert _kills(base, {"t::b": {"status": "passed"}})  # a's result went missing: not passing
    assert not _kills(base, {"t::a": {"status": "passed"}, "t::b": {"status": "passed"}})


def test_report_text_and_signals_name_line_and_mutant():
    report = MutationReport(generated=5, run=2, killed=1, survivors=[
        Survivor("pkg/mod.py", 9, "comparison", "if a > 1:", "if a >= 1:", executed=True),
        Survivor("pkg/mod.py", 12, "return", "return x", "return None", executed=False)])
    text = report.to_text()
    assert "2 surviving mutants of 5" in text
    assert "pkg/mod.py:9 [comparison, executed by T0] if a > 1:  ->  if a >= 1:" in text
    assert "never executed by T0" in text
    signals = report.to_signals()
    assert [(s.detector, s.line) for s in signals] == [("mutation", 9), ("mutation", 12)]
    assert MutationReport.from_dict(report.to_dict()) == report
    assert MutationReport.from_dict(None) is None


ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "benchmarks" / "demo"


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audits; slow under load
def test_audit_with_mutants_reports_survivors_in_the_report(demo_per_trial_audit, tmp_path, monkeypatch):
    """A real headless audit of a demo trial with --mutants: its mutants run as budgeted test runs,
    mutants of lines T0 never runs (ghost lines) survive without a run, and the report lists the
    survivors with their line and mutant. The trial's other runs (T0, its candidates) are taken
    from the session's shared per-trial demo audit (`--reuse-runs`, tests/conftest.py): its
    mutants are the runs of its own."""
    import os

    out = tmp_path / "out"
    env = dict(os.environ, TESTJACK_HOME=str(demo_per_trial_audit["home"]))
    trial = "merge-list-strategies__kestrel__3"  # its fallback branch is never run by T0
    cmd = [sys.executable, "-m", "testjack_tui.cli", "audit", str(DEMO), "--headless", "--auto-approve",
           "--agent", "scripted", "--seed", "0", "--task", "merge-list-strategies", "--trial", trial,
           "--mode", "per-trial", "--mutants", "3", "--reuse-runs", demo_per_trial_audit["session_id"],
           "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    rep = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "testjack_tui.cli", "report", summary["session_id"],
                           "--format", "json", "--out", str(rep)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    t = next(t for t in json.loads((rep / "report.json").read_text())["trials"] if t["trial_id"] == trial)
    m = t["mutation"]
    assert m["error"] == "" and m["run"] == 3 and m["generated"] > m["run"]
    assert m["killed"] + sum(1 for s in m["survivors"] if s["executed"]) == m["run"]
    ghost_lines = {(g["file"], g["line"]) for g in t["ghost"]["ghost_lines"]}
    on_ghost = [s for s in m["survivors"] if not s["executed"]]
    assert on_ghost and all((s["file"], s["line"]) in ghost_lines for s in on_ghost)
    from testjack_tui.engine.store import SessionStore, db_path

    monkeypatch.setenv("TESTJACK_HOME", env["TESTJACK_HOME"])
    keys = {}
    for sid in (summary["session_id"], demo_per_trial_audit["session_id"]):
        store = SessionStore(db_path(sid))
        keys[sid] = {r.key: r for r in store.runs()}
        store.close()
    mine, lent = keys[summary["session_id"]], keys[demo_per_trial_audit["session_id"]]
    # Taken: the task's T0 runs and the trial's candidates. Run here: the mutants under T0 on the
    # trial's world (and at most one other run there that the lender had not made); elsewhere
    # only its witness's replay for rho, one run on each other trial of the task (the whole audit
    # ran that explicit witness there batched with the others that waited for that trial:
    # engine/loop_witnesses.replay_now; a batch is a run of its own key).
    new = [r for k, r in mine.items() if k not in lent]
    here = [r for r in new if r.world == f"merge-list-strategies/model/{trial}"]
    assert mine.keys() & lent.keys() and m["run"] <= len(here) <= m["run"] + 1, len(here)
    elsewhere = Counter(r.world for r in new if r.world != f"merge-list-strategies/model/{trial}")
    assert all(w.startswith("merge-list-strategies/model/") and n == 1 for w, n in elsewhere.items()), elsewhere
    md = (rep / "trials" / t["task_id"] / trial / "report.md").read_text()
    assert "## Mutation evidence" in md
    assert f"{on_ghost[0]['file']}:{on_ghost[0]['line']} [{on_ghost[0]['operator']}, never executed by T0]" in md


def test_diff_view_marks_lines_with_surviving_mutants():
    """The TUI's diff view (trials table → d) flags the lines T0 does not pin down."""
    from rich.console import Console

    from testjack_tui.tui.screens.inspect import diff_view

    patch = ("diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,3 @@\n"
             " A = 1\n-B = 2\n+B = 3\n+LIMIT = 10\n")
    evidence = {"mutation": MutationReport(generated=4, run=2, killed=1, survivors=[
        {"file": "pkg/mod.py", "line": 3, "operator": "constant", "original": "LIMIT = 10",
         "mutated": "LIMIT = 11", "executed": True}]).to_dict()}
    body, facts = diff_view(patch, evidence)
    assert facts["mutants"] == {"pkg/mod.py": [3]}
    console = Console(width=160, color_system=None, record=True)
    console.print(body)
    text = console.export_text()
    assert "1 surviving mutant(s) of 4 (2 run under T0)" in text
    row = next(line for line in text.splitlines() if "LIMIT = 10" in line)
    assert "⚑ T0 still passes with: LIMIT = 11" in row
    assert "⚑" not in next(line for line in text.splitlines() if "B = 3" in line)
