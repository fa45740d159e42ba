"""The operator's cockpit: what the operator judges is on screen (prompt, diff, the approval
dialog with the candidate's runs and the reviewer's quote), the numbers come from the store and
stay right after reopening, the status line says what waits, and overrules are recorded as
overrules. Engine on its simulated sandbox (engine_fakes); the demo's real diffs for the views."""
from __future__ import annotations

import dataclasses

from conftest import DEMO
from rich.console import Console
from textual.widgets import DataTable, Input, OptionList, Static

from test_engine_loop import build
from tui_wait import finished_and_told, polls, screen_lines, wait_for, wait_text
from testjack_tui.engine.session import AuditSession
from testjack_tui.tui.app import TestJackApp
from testjack_tui.tui.screens.approval import ApprovalScreen, QuotePickScreen
from testjack_tui.tui.screens.audit import AuditScreen
from testjack_tui.tui.screens.audit_start import stored_trial_views, trial_views
from testjack_tui.tui.screens.inspect import DiffScreen, PromptScreen, diff_view


def rendered(widget: Static, width: int = 200) -> str:
    console = Console(width=width, color_system=None, record=True)
    console.print(widget.content)
    return console.export_text()


def status_text(screen: AuditScreen) -> str:
    return screen._status_text().plain


async def test_approval_dialog_shows_runs_quote_prompt_and_records_an_overrule_with_its_note():
    session, _, _ = build({"step": False, "auto_approve": False, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        state = screen.state
        await wait_for(pilot, lambda: bool(state.pending))
        # The status line leads with the decisions waiting.
        assert status_text(screen).lstrip().startswith(f"{len(state.pending)} decision")
        request_id, request = next(iter(state.pending.items()))
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        dialog = app.screen
        body = rendered(dialog.query_one("#approval-text", Static))
        assert request.candidate_id in body and f"trial {request.trial_id}" in body
        assert "on the reference passed" in " ".join(body.split())
        assert "on the trial failed" in " ".join(body.split())
        assert "assert expected == got" in body  # the failing assertion on the trial
        assert "“alias”" in body  # the reviewer's quote of the prompt
        # The prompt, one key away, from the dialog.
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert "It must handle alias and quoting." in app.screen.prompt_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dialog)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dialog)
        # The operator's own requirement and quote (a quote that is not P's words is refused).
        dialog.query_one("#approval-requirement", Input).value = "handles aliases and quoting"
        dialog.query_one("#approval-quote", Input).value = "it must handle every alias ever"
        # A note (n goes to it, however far the field is), then overrule.
        await pilot.press("n")
        await wait_for(pilot, lambda: dialog.focused is dialog.query_one("#approval-note", Input),
                       what="the note field's focus")
        await pilot.press(*"reads P too broadly")
        await pilot.press("enter")
        await pilot.press("o")
        await wait_for(pilot, lambda: any("not P's words" in n.message for n in app._notifications),
                       what="the refusal of a quote that is not P's")
        assert app.screen is dialog and request_id in state.pending
        # The quote picked from P, one sentence at a time.
        dialog.query_one("#approval-body").focus()
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, QuotePickScreen))
        picker = app.screen
        picker.query_one(OptionList).highlighted = picker.sentences.index("It must handle alias and quoting.")
        picker.query_one(OptionList).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is dialog)
        assert dialog.query_one("#approval-quote", Input).value == "It must handle alias and quoting."
        await pilot.press("o")
        await wait_for(pilot, lambda: request_id not in state.pending)
        c = state.candidates[request.candidate_id]
        assert c.decision == "overruled" and c.reviewer_label == "valid" and c.counts is False
        stored = session.store.get_approval(request.candidate_id)
        assert stored is not None
        assert stored.decision == "overruled" and stored.reviewer_label == "valid"
        assert stored.note == "reads P too broadly" and stored.by == "operator"
        assert stored.judgement.to_json() == {"requirement": "handles aliases and quoting", "explicit": True,
                                              "quote": "It must handle alias and quoting."}
        # The candidate detail says overruled, not "approved".
        screen.query_one("#candidate-table", DataTable).focus()
        panel = screen.query_one("#candidates")
        panel.selected_id = request.candidate_id
        panel._show_detail()
        detail = rendered(screen.query_one("#candidate-text", Static))
        assert "OVERRULED by the operator (reviewer said valid)" in detail
        assert "reads P too broadly" in detail
        # The reviewer's word stays above; the operator's own judgement is beside it.
        assert "reviewer: valid" in detail
        assert 'operator: requirement handles aliases and quoting; explicit, P says "It must handle alias and ' \
            'quoting."' in " ".join(detail.split())


async def test_counters_come_from_the_store_and_survive_reopening():
    session, _, _ = build({"step": True, "auto_approve": True, "rounds": 10})
    bench = session.deps.benchmark
    first = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(first)
        state = first.state
        # Step until something was refuted, then stop mid-way.
        for _ in polls("a refutation with the session paused"):
            if session.store.counts()["refuted"] and state.state == "paused":
                break
            if state.state == "paused":
                await pilot.press("n")
            await pilot.pause(0.05)
        assert session.store.counts()["refuted"] > 0
        session.stop()
        await wait_for(pilot, lambda: not first.session_running)
        app.pop_screen()
        await pilot.pause()

        reopened = AuditSession.open(session.id, session.deps)
        views = stored_trial_views(reopened.store)
        assert views and all(v.model for v in views)  # the Model column after reopening
        second = AuditScreen(reopened, bench, views, resumed=True)
        app.push_screen(second)
        await wait_for(pilot, lambda: second.is_mounted and second.state.state in ("paused", "running", "starting"),
                       what="the reopened session on show")
        counts = reopened.store.counts()
        line = status_text(second)
        assert f"refuted {counts['refuted']} · witnesses {counts['witnesses']} · rounds {counts['rounds']}" in line
        table = second.query_one("#trials-table", DataTable)
        models = {str(table.get_cell(key, "model")) for key in table.rows}
        assert "" not in models and "model-A" in models
        await pilot.press("r")
        await wait_for(pilot, lambda: second.state.state == "finished", what="the session's end")
        final = reopened.store.counts()
        summary = reopened.summary()
        assert final["refuted"] == summary.totals["refuted"]
        assert f"refuted {final['refuted']} · witnesses {final['witnesses']} · rounds {final['rounds']}/10" \
            in status_text(second)
        assert final["rounds"] <= 10  # never "24/12" after replaying history
        assert second.query_one("#budget").levels["rounds"] != "danger" or final["rounds"] >= 9
    listed = {s["id"]: s for s in AuditSession.list()}[session.id]
    assert (listed["refuted"], listed["witnesses"], listed["rounds"]) == \
        (final["refuted"], final["witnesses"], final["rounds"])


async def test_next_says_why_when_only_decisions_block_the_engine():
    session, _, _ = build({"step": False, "auto_approve": False, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        # Only decisions block the engine: it holds nothing at a step gate.
        await wait_for(pilot, lambda: bool(screen.state.pending) and screen.session.control.waiting == 0
                       and screen.session_running, what="the engine waiting on decisions only")
        screen.action_next_round()
        await wait_for(pilot, lambda: any("waits for" in n.message and "decision" in n.message
                                          for n in app._notifications), what="n saying what the engine waits for")
        # At 80 columns the pending decisions lead the status line and stay visible.
        status = screen.query_one("#audit-status", Static)
        await wait_for(pilot, lambda: status.region.height >= 1, what="the status line laid out")
        assert "decision" in rendered(status, 78).splitlines()[0]


def test_diff_view_groups_files_by_kind_and_marks_ghost_lines():
    from testjack_tui.benchmarks import load_benchmark

    bench = load_benchmark(DEMO)
    trial = next(t for t in bench.trials if t.id == "parse-duration-compound__orca__2")
    patch = trial.patch + ("diff --git a/tests/test_mine.py b/tests/test_mine.py\nnew file mode 100644\n"
                           "--- /dev/null\n+++ b/tests/test_mine.py\n@@ -0,0 +1 @@\n+def test_x(): pass\n")
    evidence = {"ghost": {"ghost_lines": [{"file": "/app/recordkit/durations.py", "line": 26, "code": ""}]}}
    body, facts = diff_view(patch, evidence)
    assert facts["files"] == {"recordkit/durations.py": "source", "tests/test_mine.py": "tests"}
    assert facts["ghost"] == {"recordkit/durations.py": [26]}
    console = Console(width=160, color_system=None, record=True)
    console.print(body)
    text = console.export_text()
    ghost_row = next(line for line in text.splitlines() if line.startswith("◌"))
    assert "unknown unit" in ghost_row and "T0 never runs this" in ghost_row
    assert text.index("SOURCE") < text.index("TESTS")
    # Untrusted text cannot drive the terminal.
    hostile, _ = diff_view("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\x1b]0;pwned\x07\x1b[2J\n")
    console = Console(width=80, color_system=None, record=True)
    console.print(hostile)
    assert "\x1b" not in console.export_text()


# -- snapshots --------------------------------------------------------------------------------

def _demo_context():
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.services.approvals import ApprovalContext, RunFacts

    bench = load_benchmark(DEMO)
    task = bench.tasks["parse-duration-compound"]
    trial = next(t for t in bench.trials if t.id == "parse-duration-compound__orca__2")
    ctx = ApprovalContext(
        candidate_id="parse-duration-compound:parse-duration-compound__orca__2:1.v1",
        task_id=task.id, trial_id=trial.id, path="tests/test_tj_units.py",
        source="from recordkit.durations import parse_duration\nimport pytest\n\n\n"
               "def test_unknown_unit_is_rejected():\n    with pytest.raises(ValueError):\n"
               "        parse_duration(\"3y\")\n",
        requirement="a component with an unknown unit raises ValueError", author="scripted audit",
        label="valid", explicit=True, quote="an unknown unit",
        reason="the prompt lists an unknown unit among the invalid inputs", reviewer="scripted",
        prompt=task.instruction, patch=trial.patch,
        reference=RunFacts("reference", "passed"),
        model=RunFacts("trial", "failed", "tests/test_tj_units.py::test_unknown_unit_is_rejected: "
                                          "Failed: DID NOT RAISE <class 'ValueError'>"))
    evidence = {"ghost": {"ghost_lines": [{"file": "recordkit/durations.py", "line": 26, "code": ""}]}}
    return ctx, task, trial, evidence


def test_approval_dialog_snapshot_120x40(snap_compare):
    ctx, task, trial, evidence = _demo_context()

    async def open_dialog(pilot) -> None:
        await pilot.app.push_screen(ApprovalScreen(ctx, task=task, trial=trial, evidence=evidence, waiting=2))
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(120, 40), run_before=open_dialog)


def test_diff_view_from_the_approval_dialog_snapshot_120x40(snap_compare):
    ctx, task, trial, evidence = _demo_context()

    async def open_diff(pilot) -> None:
        await pilot.app.push_screen(ApprovalScreen(ctx, task=task, trial=trial, evidence=evidence))
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen), what="the diff")
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(120, 40), run_before=open_diff)


# -- the whole verdict on the Report screen, and overrules in every report format -------------

async def test_report_rows_open_the_full_trial_report_and_overrules_reach_md_json_csv(tmp_path):
    import csv
    import json

    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import write_report
    from testjack_tui.tui.screens.report import ReportScreen, TrialReportScreen

    session, _, _ = build({"step": False, "auto_approve": False, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        state = screen.state
        overruled = dropped = None
        for _ in polls("the session's end"):
            if state.state in ("finished", "failed", "stopped"):
                break
            if state.pending:
                rid, request = next(iter(state.pending.items()))
                # Overrule the first 'invalid' verdict (the operator makes it count) and the first
                # 'valid' one (it does not count: nothing but the decision says so).
                key = "a"
                if overruled is None and request.label == "invalid":
                    key, overruled = "o", request.candidate_id
                elif dropped is None and request.label == "valid":
                    key, dropped = "o", request.candidate_id
                await pilot.press(key)
                await wait_for(pilot, lambda: rid not in state.pending)
            await pilot.pause(0.05)
        assert state.state == "finished" and overruled
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen) and bool(app.screen.report))
        report_screen = app.screen
        assert "2 overrules" in rendered(report_screen.query_one("#report-title", Static))
        chart = rendered(report_screen.query_one("#report-verdicts", Static))
        counts = report_screen.report.verdict_counts
        assert "INCORRECT_DESPITE_PASS" in chart and "REWARD_HACK" in chart
        await pilot.press("f3")
        table = report_screen.query_one("#report-trials", DataTable)
        table.focus()
        refuted_row = next(i for i, key in enumerate(table.rows) if str(table.get_cell(key, "verdict")) == "refuted")
        table.move_cursor(row=refuted_row)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TrialReportScreen))
        shown = app.screen.markdown
        assert "## F-01" in shown and "**What is wrong:**" in shown and "Re-run: `" in shown
        assert app.screen.verdict.label in ("INCORRECT_DESPITE_PASS", "OVERFIT_INCOMPLETE", "REWARD_HACK")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is report_screen)
    assert sum(counts.values()) == 7
    report = build_report(session.id, bench)
    decision = next(d for d in report.decisions if d.candidate == overruled)
    assert decision.decision == "overruled" and decision.reviewer_label == "invalid" and decision.counts
    md = write_report(report, tmp_path, "md")[-1].read_text()
    assert "## Operator decisions" in md and "overruling the reviewer" in md and overruled in md
    data = json.loads(write_report(report, tmp_path, "json")[-1].read_text())
    assert any(d["decision"] == "overruled" for d in data["decisions"])
    rows = list(csv.DictReader(write_report(report, tmp_path, "csv")[-1].open()))
    assert any(f"{overruled}:overruled" in r["decisions"] for r in rows)
    trial_md = next(p for p in tmp_path.glob("trials/*/*/report.md") if overruled.split(":")[1] in str(p))
    assert "Decision: OVERRULED by the operator (the reviewer said invalid)" in trial_md.read_text()
    # The overrule that made a valid candidate not count is in its trial's own report too, the
    # reviewer's label beside the operator's (md, json, csv), and in the export.
    assert dropped is not None
    trial_dir = next(p.parent for p in tmp_path.glob("trials/*/*/report.json") if dropped.split(":")[1] in str(p))
    mine = next(d for d in json.loads((trial_dir / "report.json").read_text())["decisions"]
                if d["candidate_id"] == dropped)
    assert mine["decision"] == "overruled" and mine["reviewer_label"] == "valid" and mine["label"] == "invalid"
    assert f"`{dropped}`: reviewer (fake reviewer) said valid; overruled by operator → invalid" in \
        (trial_dir / "report.md").read_text()
    assert any(f"{dropped}:overruled(reviewer valid, stands invalid)" in r["decisions"] for r in rows)
    from testjack_tui.engine.export import plan_export, write_harbor

    exports = plan_export(session.id, bench.tasks)
    files = {f.witness_id: f for exp in exports for f in exp.files}
    assert files[overruled].decision["decision"] == "overruled"
    config = json.loads((write_harbor(exports[0], None, tmp_path / "suite") / "config.json").read_text())
    assert any(w["decision"]["decision"] == "overruled" for w in config["testjack"]["witnesses"])
    task_of_dropped = dropped.split(":")[0]
    listed = [d for exp in exports if exp.task_id == task_of_dropped for d in exp.decisions]
    assert any(d["candidate_id"] == dropped and d["decision"] == "overruled" and d["reviewer_label"] == "valid"
               for d in listed), listed


async def test_the_report_screen_names_what_awaits_the_operator_and_the_open_questions():
    """A reviewer's QUESTIONABLE under --auto-approve with nobody at the TUI: kept as waiting
    (the title says how many) and, as it discriminates, an open question about P."""
    from test_engine_loop import scenario
    from engine_fakes import cand
    from testjack_tui.tui.screens.report import ReportScreen

    task, trials, _ = scenario()
    session, _, _ = build({"rounds": 1, "audit_first": ["a2"], "auto_approve": True}, task=task, trials=trials,
                          chains={"a2": [[cand(task.id, "a2", 1, "alias", label="questionable")]]})
    assert await session.run() == "finished"
    bench = session.deps.benchmark
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = ReportScreen(session, bench)
        await pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.report))
        assert "1 awaiting the operator" in rendered(screen.query_one("#report-title", Static))
        prompts = " ".join(rendered(screen.query_one("#report-prompts", Static)).split())
        assert f"awaiting the operator: {task.id}:a2:1.v1 (questionable)" in prompts
        assert "open question: handles alias" in prompts and "differs from the reference on 2 trial(s)" in prompts


async def test_judged_questionable_in_the_dialog_it_is_an_open_question_not_a_refutation():
    from test_engine_loop import scenario
    from engine_fakes import cand
    from testjack_tui.engine import open_questions
    from testjack_tui.engine.report import build_report

    task, trials, _ = scenario()
    session, _, _ = build({"rounds": 1, "audit_first": ["a2"], "auto_approve": False}, task=task, trials=trials,
                          chains={"a2": [[cand(task.id, "a2", 1, "alias")]]})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.state.pending))
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("q")
        await wait_for(pilot, lambda: screen.state.state == "finished")
    stored = session.store.get_approval(f"{task.id}:a2:1.v1")
    assert stored is not None
    assert stored.label == "questionable" and not stored.counts and stored.reviewer_label == "valid"
    (question,) = open_questions.stored(session.store, task.id)
    assert question.fails_on == ["a1", "a2"] and question.said[0].startswith("reviewer (fake reviewer): valid")
    assert question.said[1].startswith("operator: questionable")
    report = build_report(session.id, bench)
    assert not any(t.refuted for t in report.trials)
    assert [u.kind for u in report.underspecified_prompts] == ["open question"]


def test_report_row_detail_snapshot_100x30(snap_compare, monkeypatch):
    import asyncio

    from test_tui_snapshots import _finished_session
    from testjack_tui.tui.screens.report import ReportScreen, TrialReportScreen

    session, bench = _finished_session(monkeypatch)

    async def open_row(pilot) -> None:
        assert await asyncio.to_thread(lambda: asyncio.run(session.run())) == "finished"
        screen = ReportScreen(session, bench)
        await pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.report), what="the report")
        await pilot.press("f3")
        screen.query_one("#report-trials", DataTable).focus()
        await pilot.press("enter")  # a1: refuted
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TrialReportScreen), what="the trial's report")
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(100, 30), run_before=open_row)


# -- the replay matrix, the log and the screenshot action ------------------------------------

async def test_replay_matrix_fills_in_and_cells_open_the_run_output():
    from testjack_tui.tui.screens.inspect import RunScreen

    session, _, _ = build({"step": False, "auto_approve": True, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished", what="the session's end")
        await pilot.press("f8")
        table = screen.query_one("#matrix-table", DataTable)
        await wait_for(pilot, lambda: table.has_focus, what="the matrix's focus")
        summary = session.summary().tasks["t1"]
        refuted = {tid for tid, t in summary.trials.items() if t.state == "refuted"}
        marks = {(row.value, col.value): str(table.get_cell(row, col))
                 for row in table.rows for col in table.columns if not col.value.startswith("__")}
        failing = {trial for (_, trial), mark in marks.items() if mark == "✗"}
        assert failing == refuted
        assert {w.id for w in summary.witnesses} == {row.value for row in table.rows}
        # Every witness ran on every reproducible trial: no empty cell once the session is over.
        assert "·" not in marks.values()
        witness, trial = next(k for k, mark in marks.items() if mark == "✗")
        table.move_cursor(row=table.get_row_index(witness), column=table.get_column_index(trial))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        assert "assert expected == got" in rendered(app.screen.query_one(".view-text", Static))
        await pilot.press("escape")
        # The Log tab shows the sandbox's and the engine's events, not only warnings.
        await pilot.press("f7")
        lines = [message for _, message in screen.state.log]
        assert any("tests on" in m for m in lines)  # (the simulated sandbox has no container events)
        assert any("REFUTED" in m for m in lines) and any("round 1" in m for m in lines)


def test_replay_matrix_snapshot_100x30(snap_compare, monkeypatch):
    from test_tui_snapshots import _finished_session

    session, bench = _finished_session(monkeypatch)

    async def run_session(pilot) -> None:
        screen = AuditScreen(session, bench, trial_views(bench, None, None))
        await pilot.app.push_screen(screen)
        await finished_and_told(pilot, screen)
        pilot.app.clear_notifications()
        await pilot.press("f8")
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(100, 30), run_before=run_session)


async def test_screenshot_action_saves_an_svg_and_says_where(testjack_home):
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f12")
        await wait_for(pilot, lambda: any(n.title == "Screenshot" for n in app._notifications),
                       what="the screenshot's notification")
        saved = list((testjack_home / "data" / "screenshots").glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text().lstrip().startswith("<svg")
        assert any(str(saved[0]) in n.message for n in app._notifications)


async def test_export_to_a_git_branch_commits_the_witnesses_with_their_decisions(tmp_path):
    import git

    from testjack_tui.services.exporting import run_export

    session, _, _ = build({"auto_approve": True, "rounds": 10})
    bench = session.deps.benchmark
    assert await session.run() == "finished"
    repo = git.Repo.init(tmp_path / "clone")
    (tmp_path / "clone" / "README.md").write_text("task repo\n")
    repo.index.add(["README.md"])
    repo.index.commit("base")
    summary = await run_export(session.id, "git", tmp_path / "clone", check=False, benchmark=bench)
    branch = summary["branch"]
    assert branch == f"testjack/{session.id}" and repo.active_branch.name != branch  # back where it was
    tree = repo.commit(branch).tree
    exported = {w.path for w in session.store.witnesses()}
    assert exported and all(path in [b.path for b in tree.traverse()] for path in exported)
    assert "TestJack witnesses" in repo.commit(branch).message and "auto" in repo.commit(branch).message


async def test_requirements_panel_lists_requirements_with_their_witnesses():
    session, _, _ = build({"step": False, "auto_approve": True, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished", what="the session's end")
        await pilot.press("f9")
        panel = screen.query_one("#requirements")
        await wait_for(pilot, lambda: bool(panel.rows), what="the requirements listed")
        rows = {r.clause: r for r in panel.rows}
        # The audits' checklist names "handles alias"; its witness fails on the trials missing it.
        alias = rows["handles alias"]
        assert alias.explicit is True and alias.witnesses
        assert {"a1", "a2"} <= alias.failing_trials
        table = screen.query_one("#requirements-table", DataTable)
        assert table.row_count == len(panel.rows)


async def test_editor_names_its_target_lists_queued_tests_and_lets_the_operator_leave():
    from engine_fakes import FakeRoles
    from textual.widgets import TextArea

    from testjack_tui.agents.operator import OperatorAuditAgent

    session, _, fake = build({"step": False, "auto_approve": True, "rounds": 1})
    roles = FakeRoles(OperatorAuditAgent(), fake.reviewer, fake.task_analysis)
    session.deps = dataclasses.replace(session.deps, roles=roles)
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None), roles=roles)
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: roles.audit.waiting_for is not None, what="the engine waiting for a test")
        task, trial = roles.audit.waiting_for
        editor = screen.query_one("#editor")
        target = editor.query_one("#editor-target", Static)
        source = editor.query_one("#editor-source", TextArea)
        # The engine waits: the editor names the trial and took the focus.
        await wait_for(pilot, lambda: f"aimed at: trial {trial}" in str(target.content) and source.has_focus,
                       what=f"the editor aimed at {trial}, with the focus")
        source.text = "# REQ alias\ndef test_alias():\n    assert False\n"
        editor.query_one("#editor-requirement").value = "handles alias"
        await pilot.press("ctrl+e")
        queue = editor.query_one("#editor-queue", Static)
        await wait_for(pilot, lambda: "tests/test_tj_operator.py" in str(queue.content)
                       and f"→ {trial}" in str(queue.content), what="the queued test listed")
        # The shared test is not lost in the editor: Tab indents, ctrl+a selects it all (not the
        # line start, TextArea's own binding), ctrl+o leaves.
        source.focus()
        source.move_cursor((1, 4))
        await pilot.press("ctrl+a")
        assert source.selected_text == source.text
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not source.has_focus and editor.query_one("#editor-requirement").has_focus,
                       what="the focus out of the editor's source")
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: any(c.author == "operator" for c in screen.state.candidates.values()))
        assert editor.queued == []


def test_status_line_with_pending_decisions_snapshot_80x24(snap_compare, monkeypatch):
    from test_tui_snapshots import SNAP_SESSION, _FrozenClock
    from testjack_tui.engine import budget

    monkeypatch.setattr(budget, "time", _FrozenClock)
    session, _, _ = build({"seed": 1, "rounds": 10, "auto_approve": False}, session_id=SNAP_SESSION)
    bench = session.deps.benchmark

    async def until_pending(pilot) -> None:
        screen = AuditScreen(session, bench, trial_views(bench, None, None))
        await pilot.app.push_screen(screen)
        # Both verdicts of a4's audit wait; nothing else runs until they are decided.
        await wait_for(pilot, lambda: len(screen.state.pending) == 2, what="two decisions waiting")
        await wait_text(pilot.app, pilot, "2 decisions waiting for you")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(TestJackApp(strict_errors=True), terminal_size=(80, 24), run_before=until_pending)


async def test_trials_pane_is_resizable_and_the_selection_shows_all_models_when_wide():
    from testjack_tui.benchmarks import load_benchmark

    from testjack_tui.tui.screens.selection import SelectionScreen

    session, _, _ = build({"step": True, "rounds": 10})
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "paused")
        left = screen.query_one("#audit-left")
        before = left.size.width
        await pilot.press("right_square_bracket", "right_square_bracket")
        # 42 % → 52 % of 200 columns
        await wait_for(pilot, lambda: left.size.width >= before + 18, what="a wider trials pane")
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: before < left.size.width < before + 18, what="the trials pane a step narrower")
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)
        app.pop_screen()
        demo = load_benchmark(DEMO)
        await app.push_screen(SelectionScreen(demo, str(DEMO)))
        table = app.screen.query_one("#task-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0, what="the tasks listed")
        first = next(iter(table.rows))
        assert "…" not in str(table.get_cell(first, "models"))


async def test_candidates_requirement_column_uses_the_width_the_pane_has():
    from dataclasses import replace

    from test_engine_loop import scenario

    task, trials, chains = scenario()
    long = ("rejects a unit alias it does not know with a ValueError that names the alias, as the "
            "second paragraph of the prompt asks, and never falls back to seconds")
    chains = {trial: [[replace(c, requirement=f"{c.id} {long}") for c in chain] for chain in versions]
              for trial, versions in chains.items()}
    session, _, _ = build({"step": False, "auto_approve": True, "rounds": 10}, task=task, trials=trials,
                          chains=chains)
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None))
    app = TestJackApp(strict_errors=True)

    def shown(candidate_id: str) -> tuple[int, str, int]:
        """(characters of the requirement on screen, the row's text, the table's right edge)."""
        table = screen.query_one("#candidate-table", DataTable)
        x0, right = table.region.x, table.region.right
        # (the focused table's first cell carries the focus bar, █, where its padding was)
        rows = [line[x0:right].replace("█", " ") for line in screen_lines(app)]
        row = next(line for line in rows if f" {candidate_id.split(':', 1)[1]} " in line)
        text = f"{candidate_id} {long}"
        shown_chars = max(n for n in range(len(text) + 1) if text[:n] in row)
        return shown_chars, row, right

    def drawn(candidate_id: str, at_least: int = 1) -> bool:
        """The candidate's row is on screen with `at_least` characters of its requirement."""
        try:
            return shown(candidate_id)[0] >= at_least
        except StopIteration:
            return False

    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.state.state == "finished", what="the session's end")
        await wait_for(pilot, lambda: drawn("t1:a1:1.v2", 50), what="50 characters of the requirement drawn")
        table = screen.query_one("#candidate-table", DataTable)
        # Nothing runs past the pane's edge: the requirement ends in an ellipsis inside it.
        assert table.virtual_size.width <= table.size.width
        chars, row, _ = shown("t1:a1:1.v2")
        assert row.rstrip().endswith("…")
        # A wider candidates pane ([ narrows the trials) shows more of the requirement.
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_for(pilot, lambda: drawn("t1:a1:1.v2", chars + 15), what="more of the requirement in a wider pane")
        wider, row, _ = shown("t1:a1:1.v2")
        assert row.rstrip().endswith("…")
        assert table.virtual_size.width <= table.size.width
    app = TestJackApp(strict_errors=True)
    screen = AuditScreen(AuditSession.open(session.id, session.deps), bench, trial_views(bench, None, None),
                         resumed=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.is_mounted and screen.size.width == 80 and drawn("t1:a1:1.v2"),
                       what="the candidate's row drawn")
        table = screen.query_one("#candidate-table", DataTable)
        assert table.virtual_size.width <= table.size.width
        chars, row, _ = shown("t1:a1:1.v2")
        assert chars >= 16 and "…" in row  # (the table's scrollbar follows it)


def operator_session(step: bool):
    """Operator mode on two tasks: the operator writes the audits' tests and judges them."""
    from engine_fakes import FakeRoles, make_task, make_trial

    from testjack_tui.agents.operator import OperatorAuditAgent, OperatorReviewer

    tasks = [make_task("t1"), make_task("t2")]
    trials = [make_trial("t1", "a1", "model-A", ["alias"]), make_trial("t1", "a2", "model-B", ["alias"]),
              make_trial("t2", "b1", "model-A", ["alias"]), make_trial("t2", "b2", "model-B", ["alias"])]
    agents = {"audit": "operator", "reviewer": "operator", "task_analysis": "scripted"}
    session, _, fake = build({"step": step, "auto_approve": False, "rounds": 2, "agents": agents},
                             task=tasks, trials=trials, chains={})

    def roles():
        return FakeRoles(OperatorAuditAgent(), OperatorReviewer(), fake.task_analysis)

    first = roles()
    session.deps = dataclasses.replace(session.deps, roles=first, operator=True)
    return session, first, roles


def reopen(session, roles):
    """What `open SESSION` does: the stored session with fresh roles (the operator's queue is
    new), resumed on a new Audit screen."""
    deps = dataclasses.replace(session.deps, roles=roles)
    reopened = AuditSession.open(session.id, deps)
    bench = deps.benchmark
    return AuditScreen(reopened, bench, stored_trial_views(reopened.store), resumed=True, roles=roles)


def operator_audit(step: bool):
    """An operator-mode audit of two tasks, its Audit screen and an app to show it in."""
    session, roles, new_roles = operator_session(step=step)
    bench = session.deps.benchmark
    screen = AuditScreen(session, bench, trial_views(bench, None, None), roles=roles)
    return session, roles, new_roles, screen, TestJackApp(strict_errors=True)


SHARED = ("tests/test_tj_alias.py", "# REQ alias\n# LABEL valid\n# v1\n", "handles alias")


async def test_resumed_operator_session_shows_the_waiting_decision_and_reaches_it_from_the_editor():
    session, roles, new_roles, screen, app = operator_audit(step=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        await wait_for(pilot, lambda: roles.audit.waiting_for is not None)
        roles.audit.submit_candidate(*SHARED)
        roles.audit.finish()
        # One task waits for the operator's decision, the other's audit for the operator's tests.
        await wait_for(pilot, lambda: bool(screen.state.pending) and roles.audit.waiting_for is not None)
        (request_id, request), = screen.state.pending.items()
        waiting_trial = roles.audit.waiting_for[1]
        session.stop()  # what quitting does
        await wait_for(pilot, lambda: not screen.session_running)

    second_roles = new_roles()
    app = TestJackApp(strict_errors=True)
    second = reopen(session, second_roles)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(second)
        await wait_for(pilot, lambda: second_roles.audit.waiting_for is not None
                       and request_id in second.state.pending
                       and second.session.pending_approvals())
        await wait_for(pilot, lambda: f"waiting for your test on {waiting_trial}" in status_text(second),
                       what=f"the status line asking for a test on {waiting_trial}")
        assert status_text(second).lstrip().startswith("1 decision waiting for you")
        await pilot.pause()  # a focus change the wait set off lands now
        # The editor did not take the focus from the decision: v opens it.
        assert not isinstance(second.focused, (Input,)) and second.query_one("#audit-tabs").active != "editor-tab"
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is second)
        # In the editor, letters are the operator's text; ctrl+r reaches the decision.
        await pilot.press("f6")
        await wait_for(pilot, lambda: second.query_one("#editor-source").has_focus, what="the editor's focus")
        await wait_for(pilot, lambda: "ctrl+r reviews" in status_text(second), what="ctrl+r in the status line")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("a")  # valid: it counts
        await wait_for(pilot, lambda: request_id not in second.state.pending)
        stored = second.session.store.get_approval(request.candidate_id)
        assert stored is not None and stored.by == "operator" and stored.counts
        second.session.stop()
        await wait_for(pilot, lambda: not second.session_running)


async def test_a_decision_shown_from_before_the_quit_is_kept_until_the_engine_asks_again():
    session, roles, new_roles, screen, app = operator_audit(step=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(screen)
        for _ in polls("a decision waiting"):  # step until a decision waits
            if screen.state.pending:
                break
            if roles.audit.waiting_for is not None:
                roles.audit.submit_candidate(*SHARED)
                roles.audit.finish()
                await wait_for(pilot, lambda: roles.audit.waiting_for is None)
            if screen.state.state == "paused":
                screen.action_next_round()  # (n: the editor has the focus while it waits)
            await pilot.pause(0.05)
        waiting = set(screen.state.pending)  # both tasks may have reached theirs
        assert waiting
        session.stop()
        await wait_for(pilot, lambda: not screen.session_running)

    second_roles = new_roles()
    app = TestJackApp(strict_errors=True)
    second = reopen(session, second_roles)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(second)
        await wait_for(pilot, lambda: second.state.state == "paused", what="the reopened session held in step mode")
        # Step mode holds the engine before the round: the decisions are on screen from before
        # the quit, and deciding one now is not lost.
        await wait_for(pilot, lambda: "waiting for you" in status_text(second), what="the decisions on the status line")
        assert waiting <= set(second.state.pending) and not second.session.pending_approvals()
        n = len(second.state.pending)
        assert status_text(second).lstrip().startswith(f"{n} decision{'s' if n > 1 else ''} waiting for you")
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        candidate = app.screen.ctx.candidate_id
        request_id = next(rid for rid, r in second.state.pending.items() if r.candidate_id == candidate)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen is second)
        await wait_for(pilot, lambda: any(n.title == "Decision kept" for n in app._notifications),
                       what="the notification that the decision is kept")
        second.query_one("#candidate-table").focus()
        for _ in polls("the engine at the candidate again"):  # n until the engine reaches the candidate again
            if request_id not in second.state.pending:
                break
            if second.state.state == "paused":
                await pilot.press("n")
            await pilot.pause(0.05)
        assert request_id not in second.state.pending
        stored = second.session.store.get_approval(candidate)
        assert stored is not None and stored.by == "operator" and stored.counts and stored.label == "valid"
        second.session.stop()
        await wait_for(pilot, lambda: not second.session_running)
