"""The reviewer's structured verdict in the engine: it sees each case's outcome per trial, a
KEEP_SOME verdict makes the kept cases alone the witness, and QUESTIONABLE / HUMAN_REVIEW
verdicts wait for the operator even under --auto-approve (simulated sandbox, no containers)."""
from __future__ import annotations

import dataclasses

from engine_fakes import (FakeAnalyst, FakeAudit, FakeRoles, FakeSandbox, cand, make_benchmark,
                          make_task, make_trial, tools_factory)
from testjack_tui.sandbox.api import TestOutcome as Outcome
from testjack_tui.sandbox.api import TestRun as Run
from testjack_tui.engine.hooks import default_classifier
from testjack_tui.engine.report import build_report
from testjack_tui.engine.report_render import trial_markdown
from testjack_tui.engine.records_agent import ReviewCase
from testjack_tui.engine.roles import ReviewVerdict
from testjack_tui.engine.session import AuditSession, SessionConfig
from testjack_tui.compose import app_hooks, session_deps

T = "t1"


class CaseSandbox(FakeSandbox):
    """A candidate marked CASES holds two cases: test_required follows the usual rule (fails where
    the trial misses the requirement); test_incidental fails on every trial (an incidental choice
    of the reference that no trial shares)."""

    async def run_tests(self, world, test_ids, files=None, timeout=300, isolate_harness=False):
        run = await super().run_tests(world, test_ids, files, timeout, isolate_harness)
        outcomes = dict(run.outcomes)
        for path, source in (files or {}).items():
            if "CASES" not in source:
                continue
            mine = [outcomes.pop(node) for node in list(outcomes) if node.startswith(path)]
            status = mine[0].status if mine else "passed"
            wanted = [t for t in test_ids if t.startswith(path)]
            cases = {f"{path}::test_required": status,
                     f"{path}::test_incidental": "failed" if world.kind == "model" else "passed"}
            for node, st in cases.items():
                if any(w == path or w == node for w in wanted):
                    outcomes[node] = Outcome(node, st, "E   assert 'x' == 'y'" if st == "failed" else "")
        return Run(world=run.world, test_ids=run.test_ids, outcomes=outcomes, exec=run.exec, files=run.files)


class StructuredReviewer:
    label = "structured reviewer"

    def __init__(self, overall: str, label: str = "valid", others: str = "INVALID"):
        self.overall, self.label_given, self.others = overall, label, others
        self.seen: dict[str, dict] = {}

    async def review(self, ctx, candidate) -> ReviewVerdict:
        runs = ctx.case_runs.get(candidate.id, {})
        self.seen[candidate.id] = runs
        cases = tuple(ReviewCase.from_json(
            {"test_id": node, "label": "VALID" if node.endswith("test_required") else self.others,
             "scope": "in_scope", "overfitting": "none" if node.endswith("test_required") else "to_reference",
             "reason": "r"}) for node in sorted(runs.get("reference", {})))
        keep = tuple(c.test_id for c in cases if c.label == "VALID") if self.overall == "KEEP_SOME" else ()
        return ReviewVerdict(candidate.id, self.label_given, candidate.requirement, explicit=False,
                             reason="per case", overall=self.overall, cases=cases, keep=keep)


def build(reviewer, session_id):
    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B", ["alias"]),
              make_trial(T, "a3", "model-C")]
    source = cand(T, "a1", 1, "alias")
    chains = {"a1": [[dataclasses.replace(source, source=source.source + "# CASES\n")]]}
    sandbox = CaseSandbox({task.id: task}, {t.id: t for t in trials})
    roles = FakeRoles(FakeAudit(chains), reviewer, FakeAnalyst({}))
    cfg = SessionConfig(benchmark="fake", rounds=1, auto_approve=True, audit_first=["a1"], task_analysis=False)
    session = AuditSession.create(cfg,
                                  session_deps(benchmark=make_benchmark([task], trials), roles=roles,
                                               sandbox_factory=sandbox, tools_factory=tools_factory,
                                               hooks=app_hooks(classifier=default_classifier)), session_id=session_id)
    return session


def states(session):
    return {tid: t.state for tid, t in session.summary().tasks[T].trials.items()}


async def test_keep_some_makes_the_kept_cases_the_witness(testjack_home):
    reviewer = StructuredReviewer("KEEP_SOME")
    session = build(reviewer, "keep-some")
    assert await session.run() == "finished"
    [(cid, runs)] = reviewer.seen.items()
    # The reviewer was told which case failed on the trial, and with what assertion.
    path = cid and next(iter(runs["reference"])).split("::")[0]
    assert runs["a1"][f"{path}::test_incidental"]["status"] == "failed"
    assert "assert 'x' == 'y'" in runs["a1"][f"{path}::test_required"]["message"]
    # Only test_required is the witness: a2 (misses alias) is refuted; a3 (has it) is not,
    # although it fails the incidental case the reviewer dropped.
    assert states(session) == {"a1": "refuted", "a2": "refuted", "a3": "unaudited"}
    [witness] = session.summary().tasks[T].witnesses
    report = build_report("keep-some")
    [a1] = [t for t in report.trials if t.trial_id == "a1"]
    [review] = a1.reviews
    assert review.overall == "KEEP_SOME" and review.keep == [f"{path}::test_required"]
    assert "kept: " + f"{path}::test_required" in trial_markdown(a1)
    assert witness.id == cid


async def test_a_questionable_case_of_keep_some_waits_and_is_an_open_question(testjack_home):
    from testjack_tui.engine import open_questions

    session = build(StructuredReviewer("KEEP_SOME", others="QUESTIONABLE"), "keep-some-q")
    assert await session.run() == "finished"
    # The kept case counts; the questionable one waits for a person, and is an open question.
    assert states(session) == {"a1": "refuted", "a2": "refuted", "a3": "unaudited"}
    [waiting] = session.summary().awaiting_operator
    assert waiting.case.endswith("::test_incidental") and waiting.label == "questionable"
    [question] = open_questions.stored(session.store, T)
    assert question.fails_on == ["a1", "a2", "a3"] and question.test_ids == [waiting.case]
    report = build_report("keep-some-q")
    assert report.awaiting_operator[0].case == waiting.case
    [a3] = [t for t in report.trials if t.trial_id == "a3"]
    assert not a3.refuted and a3.open_questions and any(
        d.decision == "questionable-awaiting" for d in [t for t in report.trials if t.trial_id == "a1"][0].decisions)


async def test_with_an_operator_present_a_questionable_case_goes_to_the_queue(testjack_home):
    from testjack_tui.engine.events import ApprovalRequested
    from testjack_tui.engine.roles import ApprovalDecision

    session = build(StructuredReviewer("KEEP_SOME", others="QUESTIONABLE"), "keep-some-asks")
    session.operator_present = True
    asked = []

    def answer(event):
        if isinstance(event, ApprovalRequested):
            asked.append(event.candidate_id)
            session.answer(event.request_id, ApprovalDecision(True, "valid", "operator", "kept cases are fine"))

    session.subscribe(answer)
    assert await session.run() == "finished"
    assert len(asked) == 1 and session.summary().awaiting_operator == []


async def test_questionable_waits_for_the_operator_even_under_auto_approve(testjack_home):
    session = build(StructuredReviewer("HUMAN_REVIEW", label="questionable"), "queued")
    assert await session.run() == "finished"
    assert states(session)["a1"] == "clean"  # not counted
    report = build_report("queued")
    [queued] = report.awaiting_operator
    assert queued.label == "questionable" and queued.candidate_id.startswith(f"{T}:a1:")


async def test_with_an_operator_present_the_queue_asks(testjack_home):
    from testjack_tui.engine.events import ApprovalRequested
    from testjack_tui.engine.roles import ApprovalDecision

    session = build(StructuredReviewer("HUMAN_REVIEW", label="questionable"), "asks")
    session.operator_present = True

    def answer(event):
        if isinstance(event, ApprovalRequested):
            session.answer(event.request_id, ApprovalDecision(True, "valid", "operator", "checked by hand"))

    session.subscribe(answer)
    assert await session.run() == "finished"
    assert states(session)["a1"] == "refuted"


async def test_without_keep_some_the_incidental_case_refutes_a_correct_trial(testjack_home):
    # The contrast that makes KEEP_SOME matter: kept whole, the candidate refutes a3 too.
    session = build(StructuredReviewer("KEEP_ALL"), "keep-all")
    assert await session.run() == "finished"
    assert states(session) == {"a1": "refuted", "a2": "refuted", "a3": "refuted"}


async def test_the_next_audit_hears_of_candidates_that_did_not_count(testjack_home):
    reviewer = StructuredReviewer("HUMAN_REVIEW", label="questionable")
    session = build(reviewer, "judged")
    session.config.rounds = 2
    seen = []
    original = FakeAudit.audit

    async def spy(self, ctx):
        seen.append(list(ctx.judged))
        return await original(self, ctx)

    FakeAudit.audit = spy
    try:
        assert await session.run() == "finished"
    finally:
        FakeAudit.audit = original
    assert seen[0] == [] and seen[1][0].label == "questionable" and seen[1][0].by == "queued"
