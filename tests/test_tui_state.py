"""The TUI's pure parts: folding engine events into what the Audit screen shows, the event
inbox, the recent-benchmarks store and the Selection form. No Textual needed."""
from __future__ import annotations

import json
import threading

import pytest

from testjack_tui.engine import events as ev
from testjack_tui.tui import live_state as ls
from testjack_tui.tui import live_views as lv
from testjack_tui.tui.choices import SessionForm
from testjack_tui.tui.inbox import EventInbox
from testjack_tui.tui.recent import RecentBenchmark, display_path, forget, load_recent, recent_file, remember
from testjack_tui.tui.screens.dialogs import parse_limit
from testjack_tui.tui.widgets.editor import check_candidate

S = "sess"


def test_trials_move_through_the_loop_and_refutations_name_their_witness():
    state = ls.LiveSession(S, [lv.TrialView("t", "a", model="m1"), lv.TrialView("t", "b", model="m2")])
    state.apply_all([
        ev.SessionStarted(S, benchmark="demo", mode="lightweight", tasks=("t",), agent="scripted"),
        ev.TrialState(S, task_id="t", trial_id="a", state="active"),
        ev.TrialState(S, task_id="t", trial_id="b", state="active"),
        ev.RoundStarted(S, task_id="t", round=1, trial_id="a", active=2),
        ev.TrialRefuted(S, task_id="t", trial_id="b", witness_id="w1", status="failed"),
    ])
    assert state.state == "running" and state.round == 1 and state.round_trial == "a"
    assert state.trials[("t", "b")].state == "refuted" and state.trials[("t", "b")].by == "w1"
    assert state.trials[("t", "a")].model == "m1"
    assert state.counts("t") == {"active": 1, "refuted": 1}
    state.apply(ev.RefutationWithdrawn(S, task_id="t", trial_id="b", witness_id="w1", rho=0.75))
    assert state.trials[("t", "b")].state == "ambiguous" and not state.refutations
    assert ls.TRIALS in state.take_dirty() and not state.dirty


def test_world_output_is_split_into_lines_and_bounded():
    state = ls.LiveSession(S)
    state.apply(ev.WorldState(S, world="t/null", container="c1", state="running", command="pytest", image="img"))
    state.apply(ev.WorldState(S, world="t/null", container="c1", state="output", text="one\ntw"))
    state.apply(ev.WorldState(S, world="t/null", container="c1", state="output", text="o\nthree"))
    world = state.worlds["t/null"]
    assert list(world.lines) == ["one", "two"] and world.partial == "three"
    # Output alone does not ask for the worlds table to be redrawn, only the output view.
    state.take_dirty()
    state.apply(ev.WorldState(S, world="t/null", container="c1", state="output", text="x\n"))
    assert state.take_dirty() == {ls.OUTPUT}
    state.apply(ev.WorldState(S, world="t/null", container="c1", state="exited", exit_code=1))
    assert world.exit_code == 1 and world.state == "exited" and world.partial == ""
    assert list(world.lines) == ["one", "two", "threex"]  # the partial line completed, then flushed
    for i in range(lv.WORLD_LINES + 500):
        state.apply(ev.WorldState(S, world="t/null", container="c1", state="output", text=f"l{i}\n"))
    assert len(world.lines) == lv.WORLD_LINES and world.lines[-1] == f"l{lv.WORLD_LINES + 499}"
    assert world.total > lv.WORLD_LINES
    assert state.last_active_world == "t/null"


def test_agent_text_chunks_join_and_tool_results_attach_to_their_call():
    state = ls.LiveSession(S)
    state.apply(ev.AgentOutput(S, role="audit", task_id="t", trial_id="a", text="Reading "))
    state.apply(ev.AgentOutput(S, role="audit", task_id="t", trial_id="a", text="the diff."))
    state.apply(ev.ToolCall(S, role="audit", task_id="t", trial_id="a", call_id="c1", name="run",
                            arguments='{"cmd": "ls"}'))
    state.apply(ev.ToolCall(S, role="audit", task_id="t", trial_id="a", call_id="c1", name="run",
                            arguments='{"cmd": "ls"}', result="README\nsrc", finished=True))
    entries = list(state.agent_stream)
    assert [e.kind for e in entries] == ["text", "tool"]
    assert entries[0].text == "Reading the diff."
    assert entries[1].result == "README\nsrc" and entries[1].finished
    assert state.agent_total == 2


def test_candidate_lifecycle_with_operator_decisions():
    state = ls.LiveSession(S)
    state.apply_all([
        ev.CandidateProposed(S, task_id="t", trial_id="a", candidate_id="c1", path="tests/test_tj.py",
                             source="def test_x(): pass", requirement="handles aliases", author="audit",
                             attempt=1),
        ev.CandidateValidated(S, task_id="t", trial_id="a", candidate_id="c1", reference="passed",
                              model="failed", outcome="discriminates"),
        ev.ReviewerVerdictEvent(S, task_id="t", trial_id="a", candidate_id="c1", label="valid",
                                requirement="handles aliases", explicit=True, reason="P says so"),
        ev.ApprovalRequested(S, request_id="r1", task_id="t", trial_id="a", candidate_id="c1",
                             label="valid", reason="P says so"),
    ])
    c = state.candidates["c1"]
    assert c.status == "awaiting you" and list(state.pending) == ["r1"]
    state.apply(ev.ApprovalAnswered(S, request_id="r1", candidate_id="c1", counts=False, label="invalid",
                                    by="operator"))
    assert c.decision == "overruled" and c.counts is False and c.status == "rejected"
    assert not state.pending
    state.apply(ev.CandidateProposed(S, task_id="t", trial_id="a", candidate_id="c2", path="p", source="",
                                     requirement="r", author="audit", attempt=1))
    state.apply(ev.ReviewerVerdictEvent(S, task_id="t", trial_id="a", candidate_id="c2", label="valid",
                                        requirement="r", explicit=False, reason=""))
    state.apply(ev.ApprovalRequested(S, request_id="r2", task_id="t", trial_id="a", candidate_id="c2",
                                     label="valid", reason=""))
    state.apply(ev.ApprovalAnswered(S, request_id="r2", candidate_id="c2", counts=True, label="valid",
                                    by="operator"))
    state.apply(ev.WitnessConfirmed(S, task_id="t", witness_id="c2", requirement="r", explicit=False,
                                    source_trial="a"))
    assert state.candidates["c2"].decision == "approved" and state.candidates["c2"].status == "witness"


def test_session_pause_and_finish_and_unknown_kinds_are_ignored():
    state = ls.LiveSession(S)
    state.apply(ev.Paused(S, reason="budget: usd", waiting_for="raised limit"))
    assert state.state == "paused" and state.waiting_for == "raised limit"

    class Strange:
        kind = "from_the_future"
    state.apply(Strange())
    state.apply(ev.SessionFinished(S, state="finished"))
    assert state.state == "finished" and not state.running


def test_stored_events_rebuild_into_event_objects():
    original = ev.RoundFinished(S, task_id="t", round=2, trial_id="a", witnesses=("w",), refuted=("b",))
    rebuilt = ls.event_from_dict(json.loads(json.dumps(original.to_dict())))
    assert rebuilt == original
    assert ls.event_from_dict({"kind": "nope"}) is None


def test_budget_gauges_turn_red_near_the_limit():
    assert ls.gauge_level(ls.gauge_fraction(5, None)) == "unlimited"
    assert ls.gauge_level(ls.gauge_fraction(1, 10)) == "ok"
    assert ls.gauge_level(ls.gauge_fraction(7, 10)) == "warning"
    assert ls.gauge_level(ls.gauge_fraction(9.5, 10)) == "danger"


def test_inbox_collects_from_many_threads_and_drops_only_output_when_full():
    inbox = EventInbox(max_pending=100)
    out = ev.WorldState(S, world="w", container="c", state="output", text="x\n")

    def produce():
        for _ in range(100):
            inbox.put(out)
    threads = [threading.Thread(target=produce) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    inbox.put(ev.Log(S, level="info", message="kept"))
    drained = inbox.drain()
    assert len(drained) == 101 and inbox.dropped == 300
    assert drained[-1].kind == "log" and len(inbox) == 0


def test_recent_benchmarks_are_remembered_newest_first(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    remember(RecentBenchmark(str(a), "A", "harbor", 2, 5, 3))
    remember(RecentBenchmark(str(b), "B", "swebench", 1, 2, 1))
    remember(RecentBenchmark(str(a), "A", "harbor", 2, 6, 4))
    rows = load_recent()
    assert [r.name for r in rows] == ["A", "B"] and rows[0].trials == 6
    forget(rows[0].path)
    assert [r.name for r in load_recent()] == ["B"]
    recent_file().write_text("{not json")
    assert load_recent() == []


def test_display_path_is_relative_inside_the_working_folder(tmp_path, monkeypatch):
    (tmp_path / "x" / "y").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "x" / "y") == "x/y"


def test_session_form_turns_text_into_config_and_names_bad_fields():
    form = SessionForm(rounds="2", seed="7", usd="1.5", tokens="20000")
    kwargs = form.config_kwargs("bench", ["t1"], None)
    assert kwargs["rounds"] == 2 and kwargs["seed"] == 7
    assert kwargs["budget"] == {"usd": 1.5, "tokens": 20000, "seconds": None, "test_runs": None}
    with pytest.raises(ValueError, match="rounds per task"):
        SessionForm(rounds="two").config_kwargs("bench", None, None)
    with pytest.raises(ValueError, match="usd: must be positive"):
        SessionForm(usd="-1").config_kwargs("bench", None, None)
    assert parse_limit("", "usd") is None and parse_limit("1_000", "tokens") == 1000


def test_operator_candidates_are_checked_before_sharing():
    assert check_candidate("tests/test_tj_x.py", "def test_x():\n    assert 1\n") == []
    problems = check_candidate("src/x.txt", "def test_x(:\n")
    assert any(p.startswith("path:") for p in problems) and any("line 1" in p for p in problems)
    assert check_candidate("tests/test_a.py", "x = 1\n") == ["source: no test function (def test_...)"]


def test_world_names_are_shortened_for_the_table():
    assert lv.short_world("merge/model/merge__orca__1") == "model orca__1"
    assert lv.short_world("merge/reference") == "reference"
    assert lv.short_world("odd") == "odd"
    assert lv.short_id("merge:merge__orca__1:1.v2", "merge") == "orca__1:1.v2"
    assert lv.short_id("merge__orca__1", "merge") == "orca__1"


def test_verification_cells_read_the_real_verify_result():
    from testjack_tui.sandbox.verify import TaskVerification, TrialVerification
    from testjack_tui.tui.screens.selection import trial_reproduction, verification_summary

    result = TaskVerification(task_id="t", well_formed=True, vacuous=["tests/test_a.py::test_x"], trials=[
        TrialVerification("t__a__1", "m", True, True, True),
        TrialVerification("t__a__2", "m", True, None, False, reason="trial patch does not apply"),
    ])
    assert verification_summary(None) == "—"
    assert verification_summary(result) == "ok 1/2, 1 vacuous"
    assert trial_reproduction(result, "t__a__1") == "yes"
    assert trial_reproduction(result, "t__a__2") == "NO: trial patch does not apply"
    assert trial_reproduction(result, "unknown") == "—"


def test_worlds_remember_the_cluster_node_that_runs_them():
    state = ls.LiveSession(S)
    state.apply(ev.WorldState(S, world="t/model/a", container="c1", state="created", node="10.0.0.7/aaaaaa"))
    state.apply(ev.WorldState(S, world="t/model/a", container="c1", state="exited", exit_code=0))
    state.apply(ev.WorldState(S, world="t/null", container="c2", state="running"))
    assert state.worlds["t/model/a"].node == "10.0.0.7/aaaaaa"  # kept when later events omit it
    assert state.worlds["t/null"].node == ""  # the local backend names no node


def test_model_waits_show_while_they_last_and_retries_reach_the_log():
    s = ls.LiveSession("s")
    base = dict(role="reviewer", task_id="t", trial_id="t1", model="m @ p")
    s.apply(ev.AgentProgress("s", state="waiting", elapsed=45.0, **base))
    assert list(s.model_waits.values()) == ["reviewer: waiting on m @ p (45s)"]
    s.apply(ev.AgentProgress("s", state="retrying", attempt=1, max_attempts=3, delay=2.0,
                             reason="no reply within the profile's timeout (120s)", **base))
    assert s.model_waits == {}
    assert s.log[-1] == ("warning", "reviewer t/t1: attempt 1 of 3 failed: no reply within the profile's "
                                    "timeout (120s); retrying in 2s")


def test_log_entries_keep_the_time_of_their_event_when_history_is_replayed():
    s = ls.LiveSession("s")
    then = 1_700_000_000.0  # a session reopened later shows when things happened, not "now"
    stored = ev.Log("s", level="info", message="round 1 done", at=then).to_dict()
    s.apply(ls.event_from_dict(stored))
    assert s.log[-1] == ("info", "round 1 done") and s.log_times[-1] == then


def test_operator_candidates_are_checked_in_the_tasks_runner_language():
    go = 'package textkit\n\nimport "testing"\n\nfunc TestTJX(t *testing.T) {}\n'
    assert check_candidate("slug/x_tj_test.go", go, "go test") == []
    assert check_candidate("test/x.tj.test.ts", "it('a', () => {});\n", "vitest") == []
    assert check_candidate("tests/tj_x.rs", "#[test]\nfn a() {}\n", "cargo test") == []
    [problem] = check_candidate("tests/test_tj_x.py", "def test_x():\n    assert 1\n", "jest")
    assert problem.startswith("path: the task's runner jest takes")
    assert check_candidate("test/x.tj.test.ts", "export const a = 1;\n", "vitest") == \
        ["source: no test (it(...) or test(...))"]


async def test_the_editor_speaks_the_waiting_tasks_runner_language():
    from textual.app import App
    from textual.widgets import Input, TextArea

    from testjack_tui.tui.widgets.editor import OperatorEditor

    class Host(App):
        def compose(self):
            yield OperatorEditor(id="editor")

    async with Host().run_test() as pilot:
        editor = pilot.app.query_one(OperatorEditor)
        editor.set_framework("go test")
        await pilot.pause()
        assert editor.query_one("#editor-path", Input).value == "operator_tj_test.go"
        from textual._tree_sitter import get_language  # highlighting only where its grammar is installed
        assert editor.query_one("#editor-source", TextArea).language == ("go" if get_language("go") else None)
        assert "func TestTJRequirement(t *testing.T)" in editor.query_one("#editor-source", TextArea).text
        editor.set_framework("vitest-junit-to-ctrf")  # untouched: becomes the next task's language
        assert editor.query_one("#editor-path", Input).value.endswith(".tj.test.ts")
        editor.query_one("#editor-source", TextArea).text = "it('x', () => {});\n"
        editor.set_framework("pytest")  # the operator's own text is never replaced
        assert editor.query_one("#editor-source", TextArea).text == "it('x', () => {});\n"


def test_task_lines_say_queued_checking_and_which_gate_n_releases_while_others_work():
    state = ls.LiveSession(S, [lv.TrialView("p3", "c", model="m")])
    state.apply_all([
        ev.SessionStarted(S, benchmark="demo", mode="lightweight", tasks=("p1", "p2", "p3", "p4"), agent="x"),
        ev.TaskState(S, task_id="p1", state="checking"),
        ev.TaskState(S, task_id="p2", state="checking"),
        ev.TaskState(S, task_id="p3", state="queued", ahead=0),
        ev.TaskState(S, task_id="p4", state="queued", ahead=1),
        ev.Paused(S, reason="step", waiting_for="round 1 of p1", task_id="p1"),
    ])
    # One task held at a step gate does not stop the others: their lines stay.
    assert state.state == "paused"
    assert state.task_line("p1") == "waits: round 1 of p1 — n releases it"
    assert state.task_line("p2") == "checking the task (T0)"
    assert state.task_line("p3") == "queued (next)" and state.task_line("p4") == "queued (1 ahead)"
    assert state.trials[("p3", "c")].state == "queued"
    state.apply_all([ev.Paused(S, reason="step", waiting_for="round 1 of p2", task_id="p2"),
                     ev.TaskState(S, task_id="p3", state="checking")])
    assert state.task_line("p2") == "waits: round 1 of p2 (n releases p1 first)"
    assert state.trials[("p3", "c")].state == "checking"
    state.apply(ev.Released(S, waiting_for="round 1 of p1", task_id="p1"))
    assert state.task_line("p2") == "waits: round 1 of p2 — n releases it"
    state.apply(ev.TaskState(S, task_id="p3", state="excluded", reason="G fails T0"))
    assert state.trials[("p3", "c")].state == "excluded"
