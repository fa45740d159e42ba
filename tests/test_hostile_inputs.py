"""The hostile benchmark (tests/fixtures/hostile/bench): every bad input is one line naming the
file and the field, nothing is dropped silently, no traceback, and no untrusted text reaches the
terminal or a report raw. Output paths stay inside --out whatever the ids say. No containers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.cli import app
from testjack_tui.errors import InputError
from testjack_tui.safe_paths import id_problem, inside, path_part
from testjack_tui.safe_text import safe_text

BENCH = Path(__file__).parent / "fixtures" / "hostile" / "bench"
RAW = ("\x1b", "\x9b", "\x07")

# file (relative to the bench) -> field named in its one line
EXPECTED_SKIPS = {
    "tasks/traversal/task.toml": "task.name",
    "tasks/bad-commit/tests/config.json": "base_commit",
    "tasks/bad-workdir/task.toml": "environment.workdir",
    "tasks/nested-toml/task.toml": None,
    "jobs/job-1/calc__dotdot/result.json": "trial_name",
    "jobs/job-1/calc__slash/result.json": "trial_name",
    "jobs/job-1/calc__nul/result.json": "trial_name",
    "jobs/job-1/calc__nan/result.json": "verifier_result.rewards.reward",
    "jobs/job-1/calc__nested/result.json": None,
    "jobs/job-1/calc__symlink/artifacts/model.patch": None,
    "jobs/job-empty": "trials",
}


def test_the_loader_lists_every_bad_input_once():
    bench = load_benchmark(BENCH)
    assert set(bench.tasks) == {"calc"}
    assert [t.id for t in bench.trials] == ["calc__ok"]
    by_path = {}
    for s in bench.skipped:
        by_path.setdefault(str(Path(s.path).relative_to(BENCH)), []).append(s)
    assert set(by_path) == set(EXPECTED_SKIPS), sorted(by_path)
    for path, field in EXPECTED_SKIPS.items():
        (s,) = by_path[path]
        assert s.field == field, (path, s)
        assert "\n" not in str(s)
    reasons = {p: by_path[p][0].reason for p in by_path}
    assert "nested too deeply" in reasons["tasks/nested-toml/task.toml"]
    assert "nested too deeply" in reasons["jobs/job-1/calc__nested/result.json"]
    assert "leaving the benchmark folder" in reasons["jobs/job-1/calc__symlink/artifacts/model.patch"]
    assert "finite" in reasons["jobs/job-1/calc__nan/result.json"]


def test_list_prints_one_escaped_line_per_bad_input_and_no_raw_control():
    result = CliRunner().invoke(app, ["list", str(BENCH)])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    out = result.stdout + result.stderr
    assert not any(c in out for c in RAW)
    assert "Traceback" not in out
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
    assert len(warnings) == len(EXPECTED_SKIPS)
    assert "\\x1b]0;pwned\\x07" in result.stdout  # the model name, visible but inert
    as_json = CliRunner().invoke(app, ["list", str(BENCH), "--json"])
    assert not any(c in as_json.stdout for c in RAW)
    assert len(json.loads(as_json.stdout)["skipped"]) == len(EXPECTED_SKIPS)


def test_verify_prints_the_loaders_skip_list(monkeypatch):
    from testjack_tui.commands import verify_cmd

    async def no_containers(bench, tasks, *args, **kwargs):
        return []
    monkeypatch.setattr(verify_cmd, "verify_benchmark", no_containers)
    result = CliRunner().invoke(app, ["verify", str(BENCH)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
    assert len(warnings) == len(EXPECTED_SKIPS)
    assert not any(c in result.stderr + result.stdout for c in RAW)


@pytest.mark.parametrize("text", [
    "\x1b]0;title\x07", "\x1b[2J\x1b[H", "\x9b31m", "a\rb", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    "\u202eevil", "\x00\x7f"])
def test_the_sanitiser_leaves_no_control_character(text):
    out = safe_text(text)
    assert all(ch in "\n\t" or (ch.isprintable() and ord(ch) < 0x2000) or ch.isalnum() for ch in out), out
    assert "\\" in out  # made visible, not dropped
    assert safe_text("line one\n\tline two") == "line one\n\tline two"
    assert safe_text("a\nb", one_line=True) == "a\\nb"


def test_ids_are_never_path_parts(tmp_path):
    for bad in ("..", ".", "", "../x", "a/../b", "/abs", "a\\b", "a\x00b", "a\x1bb"):
        assert id_problem(bad), bad
    assert id_problem("org/task") is None and id_problem("django__django-11099") is None
    for value in ("..", ".", "../../etc", "a/b", ".hidden"):
        part = path_part(value)
        assert "/" not in part and part not in (".", "..") and not part.startswith(".")
    assert path_part("a/b") != path_part("a_b")  # no two ids share a file
    assert inside(tmp_path, "..", "..").resolve().parent.parent == tmp_path.resolve()
    from testjack_tui.engine.store import session_dir
    with pytest.raises(InputError):
        session_dir("../../elsewhere")


def test_report_and_export_writers_stay_inside_out(tmp_path):
    """Writers re-check: even ids that slipped past a loader land inside --out."""
    from testjack_tui.engine.export import write_harbor, write_swebench
    from testjack_tui.engine.export_suite import TaskExport
    from testjack_tui.engine.report_render import write_report
    from testjack_tui.engine.report_model import Report, TrialReport

    out = tmp_path / "out"
    trial = TrialReport(task_id="../../t", trial_id="..", model="m\x1b[2J", agent="a", label="SOUND",
                        confidence=0.5, audited=True, justification="\x1b]0;x\x07 [verdict: SOUND]")
    report = Report(session_id="s", benchmark="b", trials=[trial])
    for fmt in ("csv",):  # also writes each trial's report.md and report.json
        files = write_report(report, out, fmt)
        for f in files:
            assert out.resolve() in f.resolve().parents
            assert not any(c in f.read_text() for c in RAW)
    exp = TaskExport("../../x")
    dest = write_harbor(exp, None, out)
    assert out.resolve() in dest.resolve().parents
    for f in write_swebench([TaskExport("..")], {}, out):
        assert out.resolve() in f.resolve().parents
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_coverage_markers_carry_a_nonce():
    """Trial code printing a coverage block with the fixed markers is not read as ours."""
    from testjack_tui.engine.detectors.ghost import coverage_command, coverage_markers, parse_coverage_output

    forged = '@@TJ-COVERAGE-BEGIN@@{"files": {"forged": {}}}@@TJ-COVERAGE-END@@'
    begin, end = coverage_markers("abc123")
    real = f'{begin}{{"files": {{}}}}{end}'
    assert parse_coverage_output(real + "\n" + forged, "abc123") == {"files": {}}
    assert parse_coverage_output(forged, "abc123") is None
    assert "abc123" in coverage_command(["tests/test_a.py"], {"m.py": [1]}, "/app", "abc123")


def test_the_snapshot_build_lock_is_machine_wide():
    """A second holder (another session, another process) waits; a released lock is free."""
    import subprocess
    import sys

    from testjack_tui.sandbox import machine_lock

    fd = machine_lock.try_acquire("world:test-tag")
    assert fd is not None
    other = subprocess.run([sys.executable, "-c", "from sandbox import machine_lock; "
                            "print(machine_lock.try_acquire('world:test-tag'))"],
                           capture_output=True, text=True, check=True)
    assert other.stdout.strip() == "None"
    machine_lock.release(fd)
    again = machine_lock.try_acquire("world:test-tag")
    assert again is not None
    machine_lock.release(again)


def test_the_sweep_reads_a_lease_not_a_pid(tmp_path):
    """A container whose owner's pid is invisible (another pid namespace) but whose lease is
    renewed is alive; a lease nobody renews any more is a leftover."""
    import os
    import time as clock

    from testjack_tui.sandbox.labels import L_LEASE, L_PID, LEASE_TTL, owner_dead

    lease = tmp_path / "s.lease"
    lease.write_text("")
    labels = {L_PID: "999999999", L_LEASE: str(lease)}  # no such pid here
    assert not owner_dead(labels)
    old = clock.time() - LEASE_TTL - 5
    os.utime(lease, (old, old))
    assert owner_dead(labels)


def test_exec_logs_are_pruned_by_age_and_size(tmp_path, monkeypatch):
    import os
    import time as clock

    from testjack_tui.sandbox.output import prune_logs
    from testjack_tui.paths import cache_dir

    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path))
    logs = cache_dir() / "logs"
    logs.mkdir(parents=True)
    old = logs / "old.log"
    old.write_bytes(b"x")
    then = clock.time() - 30 * 86400
    os.utime(old, (then, then))
    for i in range(3):
        (logs / f"new{i}.log").write_bytes(b"y" * 100)
        os.utime(logs / f"new{i}.log", (clock.time() - 10 + i, clock.time() - 10 + i))
    assert prune_logs(max_age_days=14, max_bytes=250) == 2  # the old one, then the oldest new one
    assert sorted(p.name for p in logs.iterdir()) == ["new1.log", "new2.log"]
