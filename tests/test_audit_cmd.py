"""The headless commands' own logic: argument errors, progress lines, stdin approvals, sessions."""
from __future__ import annotations

import io
import json

from typer.testing import CliRunner

from test_engine_loop import T, build, states
from testjack_tui.cli import app
from testjack_tui.commands.audit_cmd import run_session, summary_table
from testjack_tui.engine.summary import SessionSummary

runner = CliRunner()


def test_audit_names_a_missing_benchmark_in_one_line(tmp_path):
    result = runner.invoke(app, ["audit", str(tmp_path / "nope"), "--headless", "--auto-approve",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "nope" in result.output and "no such file" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_audit_without_a_terminal_needs_auto_approve(tmp_path):
    result = runner.invoke(app, ["audit", str(tmp_path), "--headless", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--auto-approve" in result.output


def test_unknown_sampler_and_mode_are_one_line_errors(tmp_path):
    result = runner.invoke(app, ["audit", str(tmp_path), "--headless", "--auto-approve", "--sampler", "zzz"])
    assert result.exit_code == 2 and "sampler" in result.output and "uniform" in result.output
    result = runner.invoke(app, ["audit", str(tmp_path), "--headless", "--auto-approve", "--mode", "fast"])
    assert result.exit_code == 2 and "mode" in result.output


def test_run_session_prints_progress_and_writes_summary(tmp_path):
    session, _, _ = build({"seed": 1})
    stream = io.StringIO()
    code = run_session(session, tmp_path / "out", verbose=False, ask_operator=False, stream=stream)
    assert code == 0
    text = stream.getvalue()
    assert "round 1: auditing" in text and "REFUTED by" in text and "session finished" in text
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["tasks"][T]["trials"]["a1"]["state"] == "refuted"
    # summary.json holds the whole typed summary: read back, it is the session's own.
    assert SessionSummary.from_json(summary) == session.summary()
    assert "total" in summary_table(session.summary())


def test_operator_answers_on_stdin_approve_or_overrule(tmp_path):
    session, _, reviewer_roles = build({"auto_approve": False, "mode": "per-trial"})
    # Per-trial order is by trial id: a1 (alias v2), a2 (alias), a4 (quote; the invalid one is
    # asked too). Overrule the first verdict, approve the rest.
    stdin = io.StringIO("n\n" + "y\n" * 20)
    stream = io.StringIO()
    assert run_session(session, None, False, ask_operator=True, stream=stream, stdin=stdin) == 0
    text = stream.getvalue()
    assert "approve the reviewer's verdict?" in text and "operator:" in text
    approvals = session.store.approvals()
    assert all(a.by == "operator" for a in approvals)
    assert approvals[0].counts is False and approvals[0].note
    st = states(session.summary())
    assert st["a4"] == "refuted" and st["a3"] == "clean"


def test_sessions_command_lists_states(tmp_path):
    import asyncio

    session, _, _ = build()
    asyncio.run(session.run())
    result = runner.invoke(app, ["sessions", "--json"])
    assert result.exit_code == 0
    items = json.loads(result.output)
    assert items[0]["id"] == session.id and items[0]["state"] == "finished" and items[0]["refuted"] == 3
    table = runner.invoke(app, ["sessions"])
    assert session.id in table.output and "finished" in table.output


def test_resume_unknown_session_is_a_one_line_error():
    result = runner.invoke(app, ["resume", "no-such-session", "--auto-approve"])
    assert result.exit_code == 2 and "no-such-session" in result.output


def test_help_names_config_sections_as_written():
    # `[sandbox]` and `[profiles.default]` are config sections, not markup to swallow.
    result = runner.invoke(app, ["audit", "--help"], terminal_width=200)
    text = " ".join(result.output.split())
    assert "[sandbox] ray_address" in text and "[profiles.default]" in text


def test_report_of_a_session_without_trials_says_so_in_words(tmp_path):
    session, _, _ = build()  # created, not run: nothing judged yet
    result = runner.invoke(app, ["report", session.id, "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "0 passing, 0 refuted; no trials, no resolution rate" in result.output
    assert "None" not in result.output
