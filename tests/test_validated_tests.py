"""Validated tests do not vanish (issue 35.2, 35.4, 35.7): the task analyst learns which of its
candidates pass on the null world (with the run's output and T0's vacuous tests), the trial
auditor's request lists every validated test of the task (witnesses and the analysis's tests that
held on every trial) as received by the endpoint over HTTP, and the task's report says what became
of each analysis candidate. Fake sandbox (engine_fakes.py), fake OpenAI server over HTTP."""
from __future__ import annotations

import dataclasses
import json

from engine_fakes import (FakeAnalyst, FakeAudit, FakeReviewer, FakeRoles, FakeSandbox, cand, make_benchmark,
                          make_task, make_trial)
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.agents import LLMAuditAgent, LLMTaskAnalyst, OpenAIChatModel
from testjack_tui.agents.request_budget import validated_view
from testjack_tui.config import Profile
from testjack_tui.engine.records_agent import ValidatedTest
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import session_deps

T = "t1"
# T0's test patch adds test_p2p, which passes without any solution: a vacuous T0 test.
T0_PATCH = ("diff --git a/tests/test_t0.py b/tests/test_t0.py\n--- a/tests/test_t0.py\n+++ b/tests/test_t0.py\n"
            "@@ -1,2 +1,4 @@\n+def test_p2p():\n+    assert True\n")


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel(Profile(name="f", base_url=server.base_url, model="fake-model", timeout=5,
                                   retry_backoff=0.0))


def _user_texts(request: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"] if m["role"] in ("system", "user"))


def _session(task, trials, roles, tools):
    return AuditSession.create(SessionConfig(benchmark="fake", mode="lightweight", rounds=3),
                               session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                            sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                            tools_factory=tools))


def _file_worlds(env, task, trial, worlds, evidence):
    from agents_worlds import FileWorlds
    return FileWorlds(trial)


async def test_the_analyst_is_told_which_candidate_passes_on_the_null_world_and_which_t0_tests_are_vacuous():
    task = dataclasses.replace(make_task(T), tests=dataclasses.replace(make_task(T).tests, test_patch=T0_PATCH))
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B")]
    vacuous_src = "# REQ quoting\n# LABEL valid\n# NULLPASS\ndef test_q():\n    assert True\n"
    real_src = "# REQ alias\n# LABEL valid\ndef test_a():\n    assert alias()\n"
    with FakeOpenAIServer() as server:
        server.script(
            Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_quoting.py", "source": vacuous_src}),
                              ("write_test_file", {"path": "tests/test_tj_alias.py", "source": real_src})]),
            Reply(tool_calls=[("submit", {
                "notes": "n", "suspicious_features": [],
                "candidates": [{"path": "tests/test_tj_quoting.py", "requirement": "handles quoting"},
                               {"path": "tests/test_tj_alias.py", "requirement": "handles alias"}],
                "traceability": [{"requirement": "alias", "explicit": True, "t0_tests": [], "coverage": "none"}]})]),
            Reply(tool_calls=[("submit", {"give_up": True, "reason": "a regression check"})]))
        analyst = LLMTaskAnalyst(_model(server))
        roles = FakeRoles(FakeAudit({}), FakeReviewer(), analyst)  # type: ignore[arg-type]
        session = _session(task, trials, roles, _file_worlds)
        assert await session.run() == "finished"
        await analyst.aclose()
        requests = list(server.requests)
    assert len(requests) == 3  # analysis (2) and one repair: only the vacuous candidate went back
    repair = requests[2]["messages"][-1]["content"]
    assert "`tests/test_tj_quoting.py`" in repair and "passes on the null world" in repair
    assert "t1:analysis:1.v1" in repair and "test_tj_alias" not in repair
    assert "tests/test_tj_quoting.py::test_it: passed" in repair  # the run's per-test result there
    assert "vacuous (they pass on the null world too): tests/test_t0.py::test_p2p" in repair
    # Kept (the analyst gave up: a regression check), and said so in the report.
    from testjack_tui.engine.report import build_report
    rows = {r.path: r.fate for r in build_report(session.id).tasks[T].analysis_tests}
    assert rows["tests/test_tj_quoting.py"].startswith("passes on the null world too")


async def test_the_auditors_request_lists_every_validated_test_with_its_outcome_on_this_trial():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B")]
    analysis = [[cand(T, None, 1, "alias")], [cand(T, None, 2, "quoting")]]
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", {"candidates": [], "nothing_found": True, "notes": "n",
                                                    "checklist": [], "findings": []})]))
        auditor = LLMAuditAgent(_model(server))
        roles = FakeRoles(auditor, FakeReviewer(), FakeAnalyst({"analysis": analysis}))  # type: ignore[arg-type]
        session = _session(task, trials, roles, _file_worlds)
        await session.run()
        await auditor.aclose()
        first = _user_texts(server.requests[0])
    # a1 is refuted by the analysis's alias witness; a2 is audited and sees both tests.
    assert "Tests already validated for this task" in first
    assert "- tests/test_tj_alias.py (witness; on this trial: passed): handles alias" in first
    assert "- tests/test_tj_quoting.py (held on every trial; on this trial: passed): handles quoting" in first


def test_a_long_list_of_validated_tests_is_cut_last_first_and_says_so():
    tests = [ValidatedTest(f"tests/test_tj_{i}.py", "r" * 50, "witness", "passed", "") for i in range(400)]
    view = validated_view(tests, limit=2_000)
    assert len(view) < 2_300 and "tests/test_tj_0.py" in view and "tests/test_tj_399.py" not in view
    shown = sum(1 for ln in view.splitlines() if ln.startswith("- "))
    assert f"the last {400 - shown} of 400 validated tests" in view


async def test_the_report_says_what_became_of_each_analysis_candidate():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B")]
    analysis = [[cand(T, None, 1, "quoting")],  # holds on every trial
                [cand(T, None, 2, "spaces", broken=True), cand(T, None, 2, "spaces", version=2)],  # repaired
                [cand(T, None, 3, "tabs", broken=True)]]  # no repair offered: dropped
    roles = FakeRoles(FakeAudit({}), FakeReviewer(), FakeAnalyst({"analysis": analysis}))
    session = _session(task, trials, roles, lambda *a: object())
    assert await session.run() == "finished"
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    rows = {r["path"]: r for r in json.loads(json.dumps(report.to_json()))["tasks"][T]["analysis_tests"]}
    assert rows["tests/test_tj_quoting.py"]["fate"] == "held on every trial"
    assert rows["tests/test_tj_spaces.py"]["fate"] == ("held on every trial (repaired from t1:analysis:2.v1, "
                                                        "1 repair(s))")
    assert rows["tests/test_tj_spaces.py"]["versions"] == ["t1:analysis:2.v1", "t1:analysis:2.v2"]
    assert rows["tests/test_tj_tabs.py"]["fate"].startswith("dropped: fails on the reference")
    md = session_markdown(report)
    assert "Task analysis tests of t1" in md and "dropped: fails on the reference" in md
    # The clean trial counts the analysis's tests that held (two), not "0 validated candidate(s)".
    clean = next(t for t in report.trials if t.trial_id == "a2")
    assert "0 validated candidate(s)" not in json.dumps(clean.to_json())
    assert "2 validated candidate(s)" in json.dumps(clean.to_json())


async def test_a_suspicious_feature_disproved_by_a_held_test_is_withdrawn_from_the_auditors_request():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A"), make_trial(T, "a2", "model-B")]
    quoting = "# REQ quoting\n# LABEL valid\ndef test_q():\n    assert quote('a b') == '\"a b\"'\n"
    features = [{"id": "f-quote", "requirement": "handles quoting", "pattern": "quote(",
                 "why_suspicious": "hand-rolled quoting", "false_positives": "none"},
                {"id": "f-alias", "requirement": "handles alias", "pattern": "ALIASES = {",
                 "why_suspicious": "a fixed alias table", "false_positives": "none"}]
    nothing = {"candidates": [], "nothing_found": True, "notes": "n", "checklist": [], "findings": []}
    with FakeOpenAIServer() as server:
        server.script(
            Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_quoting.py", "source": quoting})]),
            Reply(tool_calls=[("submit", {
                "notes": "n", "suspicious_features": features,
                "candidates": [{"path": "tests/test_tj_quoting.py", "requirement": "handles quoting"}],
                "traceability": [{"requirement": "quoting", "explicit": True, "t0_tests": [], "coverage": "none"}]})]),
            Reply(tool_calls=[("submit", nothing)]), Reply(tool_calls=[("submit", nothing)]))
        analyst, auditor = LLMTaskAnalyst(_model(server)), LLMAuditAgent(_model(server))
        roles = FakeRoles(auditor, FakeReviewer(), analyst)  # type: ignore[arg-type]
        session = _session(task, trials, roles, _file_worlds)
        assert await session.run() == "finished"
        await analyst.aclose()
        await auditor.aclose()
        audits = [_user_texts(r) for r in server.requests[2:]]
    # The quoting test held on both trials: its feature is a lead already followed to nothing.
    assert audits and all("f-alias: look for ALIASES = {" in a for a in audits)
    assert not any("f-quote" in a for a in audits)
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    rows = {f["id"]: f for f in (x.to_json() for x in report.tasks[T].suspicious_features)}
    assert rows["f-quote"]["withdrawn"] == "disproved: t1:analysis:1.v1 held on every trial"
    assert "withdrawn" not in rows["f-alias"]
    assert "disproved: t1:analysis:1.v1 held on every trial" in session_markdown(report)


async def test_the_report_says_what_became_of_each_trial_auditors_test():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B")]
    chains = {"a1": [[cand(T, "a1", 1, "alias", broken=True), cand(T, "a1", 1, "alias", version=2)]],
              "a2": [[cand(T, "a2", 1, "tabs", broken=True)], [cand(T, "a2", 2, "quoting")]]}
    roles = FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst({"analysis": []}))
    session = AuditSession.create(SessionConfig(benchmark="fake", mode="per-trial"),
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                               tools_factory=lambda *a: object()))
    assert await session.run() == "finished"
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import session_markdown
    report = build_report(session.id, benchmark=make_benchmark([task], trials))
    rows = {r["id"]: r for r in json.loads(json.dumps(report.to_json()))["tasks"][T]["audit_tests"]}
    assert rows["t1:a1:1.v2"]["fate"] == ("witness: passes on the reference, fails on a1 "
                                          "(repaired from t1:a1:1.v1, 1 repair(s))")
    assert rows["t1:a1:1.v2"]["versions"] == ["t1:a1:1.v1", "t1:a1:1.v2"]
    assert rows["t1:a2:1.v1"]["fate"].startswith("dropped: fails on the reference")
    assert rows["t1:a2:2.v1"]["fate"] == "passed on both worlds of a2 (shows nothing about it)"
    assert "Audit tests of t1 (what became of each)" in session_markdown(report)


async def test_an_auditors_test_judged_invalid_is_listed_as_not_counting():
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"])]
    chains = {"a1": [[cand(T, "a1", 1, "alias", label="invalid")]]}
    roles = FakeRoles(FakeAudit(chains), FakeReviewer(), FakeAnalyst({"analysis": []}))
    session = AuditSession.create(SessionConfig(benchmark="fake", mode="per-trial", auto_approve=True),
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               sandbox_factory=FakeSandbox({task.id: task}, {t.id: t for t in trials}),
                                               tools_factory=lambda *a: object()))
    assert await session.run() == "finished"
    from testjack_tui.engine.report import build_report
    [row] = build_report(session.id, benchmark=make_benchmark([task], trials)).tasks[T].audit_tests
    assert row.fate.startswith("fails on a1; invalid (") and row.fate.endswith("): does not count")
