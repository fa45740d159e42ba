"""Exit codes mean something (issue 36.3): `verify` is non-zero when a task is not well-formed or
nothing loads, `audit` when a task's audit could not run, `export` when there is nothing to
export (tests/test_export.py). And what `verify` prints: the T0 command and parser per task,
`unknown` for a trial with no recorded verdict (issue 36.7)."""
from __future__ import annotations

import dataclasses
import io

from typer.testing import CliRunner

from engine_fakes import FakeSandbox
from test_engine_loop import T, build
from testjack_tui.benchmarks import load_benchmark
from testjack_tui.cli import app
from testjack_tui.commands.audit_cmd import EXIT_AUDIT_FAILED, run_session
from testjack_tui.engine.audit_failures import audit_failures
from testjack_tui.sandbox.t0 import t0_plan
from testjack_tui.sandbox.verify import TaskVerification, TrialVerification, report_lines

from conftest import ROOT

SWEBENCH = ROOT / "tests" / "fixtures" / "swebench"
DEEPSWE = ROOT / "tests" / "fixtures" / "deepswe"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile" / "bench"


def _results(well_formed: bool) -> list[TaskVerification]:
    trials = [TrialVerification("t-known", "m", recorded_pass=True, reproduced_pass=True, reproducible=True,
                                recorded="pass"),
              TrialVerification("t-unknown", "m", recorded_pass=False, reproduced_pass=True, reproducible=True,
                                recorded="unknown")]
    return [TaskVerification("calc", well_formed=well_formed, problems=[] if well_formed else ["G does not pass T0"],
                             flow="direct", t0_command="our pytest runner on T0's ids",
                             t0_parser="our pytest runner's report", trials=trials)]


def _verify_with(monkeypatch, results):
    from testjack_tui.commands import verify_cmd

    async def fixed(bench, tasks, *args, **kwargs):
        return results
    monkeypatch.setattr(verify_cmd, "verify_benchmark", fixed)
    return CliRunner().invoke(app, ["verify", str(HOSTILE)])


def test_verify_exits_1_when_a_task_is_not_well_formed(monkeypatch):
    ok = _verify_with(monkeypatch, _results(True))
    assert ok.exit_code == 0, ok.output
    bad = _verify_with(monkeypatch, _results(False))
    assert bad.exit_code == 1, bad.output
    assert "calc: NOT well-formed" in bad.stdout and "problem: G does not pass T0" in bad.stdout


def test_verify_exits_1_when_nothing_loads(tmp_path):
    (tmp_path / "tasks" / "empty").mkdir(parents=True)
    result = CliRunner().invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == f"error: {tmp_path}: no task loaded: nothing to verify"
    assert "Traceback" not in result.output


def test_verify_prints_t0_command_and_parser_and_unknown_verdicts(monkeypatch):
    result = _verify_with(monkeypatch, _results(True))
    out = result.stdout
    assert "calc: well-formed; 0 vacuous T0 test(s); 1/1 recorded verdicts reproduce" in out
    assert "  T0 command: our pytest runner on T0's ids" in out
    assert "  T0 results read by: our pytest runner's report" in out
    assert "  unknown: t-unknown (m) has no recorded verdict; T0 passes here" in out
    assert "recorded fail" not in out
    assert out.splitlines()[-1] == ("total: 1 task(s), 0 not well-formed; 1/1 recorded verdicts reproduce; "
                                    "1 trial(s) with no recorded verdict (unknown)")


def test_t0_plan_names_the_benchmarks_own_command_and_parser():
    swe = load_benchmark(SWEBENCH)
    command, parser = t0_plan(swe.tasks["acme__calc-101"])
    assert command.startswith("pytest") and "tests/test_ops.py" in command
    assert parser.startswith("the harness's pytest") and parser.endswith("log parser")
    deep = load_benchmark(DEEPSWE)
    task = next(iter(deep.tasks.values()))
    command, parser = t0_plan(task)
    assert command.startswith("bash /tests/test.sh") and "timeout" in command
    assert "report(s)" in parser and "ids:" in parser


def test_a_trial_with_no_verdict_source_is_unknown_everywhere(tmp_path):
    import shutil

    copy = tmp_path / "swe"
    shutil.copytree(SWEBENCH, copy)
    text = (copy / "benchmark.toml").read_text()
    (copy / "benchmark.toml").write_text("\n".join(line for line in text.splitlines()
                                                   if not line.startswith("reports")))
    swe = load_benchmark(copy)
    unknown = [t for t in swe.trials if t.reward is None]
    assert unknown, "model-a's predictions have no verdict source without its reports"
    assert all(t.recorded == "unknown" and not t.official_pass for t in unknown)
    assert {t.recorded for t in swe.trials if t.official_pass} == {"pass"}
    assert {t.recorded for t in swe.trials if t.reward == 0.0} <= {"fail"}
    tv = TrialVerification(unknown[0].id, "m", False, False, True, recorded="unknown")
    lines = report_lines(TaskVerification("x", True, trials=[tv]))
    assert lines[0].endswith("0/0 recorded verdicts reproduce")
    assert any(line.startswith(f"  unknown: {unknown[0].id}") and "T0 fails here" in line for line in lines)


class DeadRunner(FakeSandbox):
    """Every candidate run ends without the runner reporting the test (as when the repository's
    config turns our launcher's warning into an error): not_found, on every world."""

    @staticmethod
    def _candidate_status(world, trial, source: str) -> str:
        return "not_found"


def test_audit_exits_non_zero_when_no_candidate_could_run(tmp_path):
    session, sandbox, _ = build({"seed": 1})
    session.deps = dataclasses.replace(session.deps, sandbox_factory=DeadRunner(sandbox.tasks, sandbox.trials))
    stream = io.StringIO()
    code = run_session(session, tmp_path / "out", verbose=False, ask_operator=False, stream=stream)
    assert code == EXIT_AUDIT_FAILED, stream.getvalue()[-2000:]
    failures = audit_failures(session.store)
    # the engine's own verdict (failure_kinds.void_audit) names the runner as the cause
    assert list(failures) == [T] and "the runner did not report the test" in failures[T]
    assert f"audit failed: {T}: no candidate could run on the reference world" in stream.getvalue()


def test_audit_exits_0_when_candidates_ran(tmp_path):
    session, _, _ = build({"seed": 1})
    code = run_session(session, tmp_path / "out", verbose=False, ask_operator=False, stream=io.StringIO())
    assert code == 0 and audit_failures(session.store) == {}
