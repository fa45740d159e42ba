"""Names from the benchmark and the trials are shown literally: a model called `[bold]evil`, a
trial id with brackets or a `[/]` that Rich would reject as a closing tag with nothing to close
must appear on screen as written, in every table, title, dialog and notification, and must not
crash the app (a plain str in a DataTable cell, a Label or a Rich table is read as markup)."""
from __future__ import annotations

from engine_fakes import (FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, cand,
                          make_benchmark, make_task, make_trial, tools_factory)
from textual.widgets import DataTable
from tui_wait import wait_for, wait_text

from testjack_tui.engine.hooks import default_classifier
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import trial_views
from testjack_tui.tui.screens.dialogs import ChooseScreen
from testjack_tui.tui.screens.report import ReportScreen
from testjack_tui.tui.screens.selection import SelectionScreen
from testjack_tui.compose import app_hooks, session_deps

T = "t1"
STYLED = "[bold]evil[/bold]"  # would turn bold and lose its tags
UNCLOSED = "gpt[/]x"  # Rich: "closing tag '[/]' has nothing to close" (MarkupError)
TRIAL = "a1[red]"  # trial ids with a tag in them
TRIAL2 = "a2[/i]"


def hostile_scenario():
    task = make_task(T)
    trials = [make_trial(T, TRIAL, STYLED, ["alias"]), make_trial(T, TRIAL2, UNCLOSED, ["alias"]),
              make_trial(T, "a3", UNCLOSED)]
    chains = {TRIAL: [[cand(T, TRIAL, 1, "alias")]], TRIAL2: [[cand(T, TRIAL2, 1, "alias")]],
              "a3": [[cand(T, "a3", 1, "quote")]]}
    return task, trials, chains


def hostile_session():
    task, trials, chains = hostile_scenario()
    benchmark = make_benchmark([task], trials)
    benchmark.name = "[blink]bench[/]"
    roles = FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst(chains))
    session = AuditSession.create(SessionConfig(benchmark="fake", rounds=10, step=False, auto_approve=True),
                                  session_deps(benchmark=benchmark, roles=roles,
                                               sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                               tools_factory=tools_factory,
                                               hooks=app_hooks(classifier=default_classifier)))
    return session, benchmark


async def test_selection_shows_hostile_model_trial_and_benchmark_names_literally():
    _, bench = hostile_session()
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        app.push_screen(SelectionScreen(bench, "/tmp/[b]where"))
        await wait_text(app, pilot, STYLED, UNCLOSED, TRIAL, "[blink]bench[/]", "/tmp/[b]where")
        # Models in the task row, and the by-model dialog lists them as written.
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseScreen), what="the by-model dialog")
        await wait_text(app, pilot, STYLED, UNCLOSED)
        await pilot.press("escape")
        # Notifications are plain text too.
        app.notify(f"about {STYLED} and {UNCLOSED}", title="[i]t[/]")
        await wait_text(app, pilot, f"about {STYLED} and {UNCLOSED}", "[i]t[/]")


async def test_a_whole_session_and_its_report_show_hostile_names_literally():
    session, bench = hostile_session()
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished", what="the session's end")
        await wait_text(app, pilot, STYLED, UNCLOSED, TRIAL)  # the trials table
        candidates = screen.query_one("#candidate-table", DataTable)
        assert any(TRIAL2 in str(candidates.get_cell(key, "trial")) for key in candidates.rows)
        await wait_text(app, pilot, TRIAL2)
        await pilot.press("f8")  # the replay matrix: witnesses (named after trials) × trials
        await wait_text(app, pilot, TRIAL, f"{TRIAL2}:1.v1")
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen) and bool(app.screen.report),
                       what="the report")
        await wait_text(app, pilot, STYLED, UNCLOSED)  # the resolution-rate chart and the model table
        await pilot.press("f3")
        await wait_text(app, pilot, TRIAL, STYLED)


async def test_the_approval_dialog_shows_a_hostile_candidate_literally_and_its_keys_match_its_buttons():
    """The dialog quotes the candidate's requirement, path and reason as written; with the
    operator as reviewer its footer says Valid / Invalid like its buttons, and `a` decides."""
    from testjack_tui.services.approvals import ApprovalContext, RunFacts
    from testjack_tui.tui.screens.approval import ApprovalScreen
    from testjack_tui.tui.widgets.footer import QuietFooter

    ctx = ApprovalContext(candidate_id=f"t1:{TRIAL}:1.v1", task_id=T, trial_id=TRIAL, path="tests/test_[x].py",
                          source="def test_x():\n    assert '[/]'\n", requirement=f"rejects {STYLED}",
                          author="audit", label="questionable", reason="see [link=http://x]here[/link]",
                          model=RunFacts("trial", "failed", "AssertionError: [red]boom[/red]"),
                          reference=RunFacts("reference", "passed"))
    answers: list = []
    for judges, keys, buttons in ((True, ["Valid", "Invalid"], "Valid (a)"),
                                  (False, ["Approve", "Overrule"], "Approve (a)")):
        app = TestJackApp(strict_errors=True)
        async with app.run_test(size=(80, 24)) as pilot:
            app.push_screen(ApprovalScreen(ctx, operator_judges=judges), answers.append)
            # The reviewer's reason too (with the operator as reviewer there is none).
            reason = () if judges else ("[link=http://x]here[/link]",)
            await wait_text(app, pilot, TRIAL, "tests/test_[x].py", f"rejects {STYLED}", buttons, *reason)
            footer = app.screen.query_one(QuietFooter)
            await wait_for(pilot, lambda: footer.descriptions[:2] == keys, what=f"the footer's keys {keys}")
            before = len(answers)
            await pilot.press("a")
            await wait_for(pilot, lambda: len(answers) > before, what="the dialog's answer")
    assert answers == [("approve", "", {}), ("approve", "", {})]
