"""services.plan_session: one check of the options, one selection of trials, for the CLI and the
TUI alike, before any session exists."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from testjack_tui import paths
from testjack_tui.benchmarks import load_benchmark
from testjack_tui.cli import app
from testjack_tui.engine.config import SessionConfig
from testjack_tui.errors import InputError
from testjack_tui.services.sessions import SessionOptions, plan_session

DEMO = Path(__file__).resolve().parent.parent / "benchmarks" / "demo"
TASK = "parse-duration-compound"


@pytest.fixture(scope="module")
def demo():
    return load_benchmark(DEMO)


def options(demo, interactive=False, headless=True, **cfg) -> SessionOptions:
    config = SessionConfig(benchmark=str(DEMO), agents={"audit": "scripted", "task_analysis": "scripted",
                                                       "reviewer": "scripted"}, **cfg)
    return SessionOptions(config, interactive=interactive, headless=headless, benchmark=demo)


def test_trials_are_selected_once(demo):
    chosen = sorted(t.id for t in demo.passing(TASK))[:2]
    plan = plan_session(options(demo, tasks=[TASK], trials=chosen, auto_approve=True))
    assert [(task.id, [t.id for t in trials]) for task, trials in plan.selected] == [(TASK, chosen)]
    assert plan.trial_ids() == set(chosen)
    assert plan.roles is not None  # the CLI's roles: built, recordings checked
    whole = plan_session(options(demo, auto_approve=True))
    assert [task.id for task, _ in whole.selected] == sorted(demo.tasks)
    assert whole.trial_ids() == {t.id for t in demo.trials if t.official_pass}


def test_the_tui_builds_roles_only_for_the_operator(demo):
    plan = plan_session(SessionOptions(options(demo).config, interactive=True, headless=False,
                                       all_roles=False, benchmark=demo))
    assert plan.roles is None  # the session builds them (composition root)


@pytest.mark.parametrize("cfg, front, option", [
    ({"auto_approve": True, "sampler": "zzz"}, {}, "--sampler"),
    ({"auto_approve": False}, {}, "--auto-approve"),  # nobody to ask
    ({"auto_approve": True, "step": True}, {}, "--step"),  # headless
    ({"auto_approve": True, "step": True}, {"interactive": True, "headless": True}, "--step"),
    ({"auto_approve": True, "tasks": ["no-such-task"]}, {}, "task"),
    ({"auto_approve": True, "trials": ["no-such-trial"]}, {}, "trial"),
])
def test_bad_combinations_are_one_line_naming_the_option(demo, cfg, front, option):
    with pytest.raises(InputError) as error:
        plan_session(options(demo, **front, **cfg))
    assert error.value.field == option


def test_an_operator_reviewer_needs_a_terminal_or_a_verdicts_file(demo):
    opts = options(demo, auto_approve=True)
    opts.config.agents["reviewer"] = "operator"
    with pytest.raises(InputError) as error:
        plan_session(opts)
    assert error.value.field == "--reviewer"
    opts.verdicts_file = True
    opts.all_roles = False
    assert plan_session(opts).roles is not None  # the operator takes a role: the front end holds it


def test_the_cli_creates_no_session_for_an_unknown_trial(tmp_path):
    result = CliRunner().invoke(app, ["audit", str(DEMO), "--headless", "--auto-approve", "--agent", "scripted",
                                      "--trial", "no-such-trial", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no-such-trial" in result.output
    assert len(result.output.strip().splitlines()) == 1
    created = list(paths.sessions_dir().glob("*")) if paths.sessions_dir().exists() else []
    assert created == []  # before plan_session, `audit` created the session, then failed
