"""What the engine concludes about a trial, as records: each reads back what it wrote (JSON ->
record -> JSON equal, keys in the same order), a decision stored by an older session reads
unchanged, and a word no TestJack writes is one line naming the field."""
from __future__ import annotations

import json

import pytest

from testjack_tui.engine.approval import decision_record
from testjack_tui.engine.detectors import Evidence, Signal
from testjack_tui.engine.detectors.ghost import GhostLine, GhostReport
from testjack_tui.engine.detectors.mutation import MutationReport, Survivor
from testjack_tui.engine.records_cands import ApprovalRecord, DecidedBy, DecisionKind
from testjack_tui.engine.records_finding import Finding
from testjack_tui.engine.records_verdict import (AmbiguousFinding, Awaiting, AwaitingRow, DecisionRecord, Explanation,
                                                 QuestionRef, ReplayProof, TrialDecision, VerdictProof, WitnessRun)
from testjack_tui.engine.roles import OperatorJudgement, ReviewLabel
from testjack_tui.engine.standing import TrialReport
from testjack_tui.engine.summary import SessionSummary, Usage
from testjack_tui.engine.verdicts import FindingInput, environment_proofs, judge_trial
from testjack_tui.errors import InputError
from testjack_tui.model import Trial
from testjack_tui.sandbox.channels import ENV_DEPENDENT
from testjack_tui.sandbox.own_run import VARIED_MARK

TRIAL = Trial(id="t1", task_id="slug", agent="agentx", model="m1", patch="", official_pass=True)


def same(data: dict, record_type) -> None:
    """JSON -> record -> JSON: equal, and the keys in the same order (the files' bytes)."""
    back = record_type.from_json(json.loads(json.dumps(data))).to_json()
    assert json.dumps(back) == json.dumps(data)


def test_each_record_reads_back_what_it_wrote():
    same({"status": "failed", "message": "E   assert 1 == 2", "run_key": "k" * 16}, WitnessRun)
    same({"kind": "harness_effect", "message": "its conftest made T0 pass", "files": ["conftest.py"],
          "tests": {"tests/test_a.py::test_x": "failed"}}, VerdictProof)
    same({"witness_id": "w1", "requirement": "weeks", "rho": 0.75, "path": "tests/test_w.py",
          "model_status": "failed"}, AmbiguousFinding)
    same({"candidate_id": "c1", "task_id": "slug", "trial_id": "t1", "reviewer_label": "questionable",
          "requirement": "weeks", "case": "tests/test_w.py::test_a", "label": "questionable", "why": "unsure"},
         AwaitingRow)
    same({"candidate_id": "c1", "requirement": "aliases", "said": ["reviewer (m): questionable: \"?\""],
          "reference": "passed", "clarification": "Say whether aliases resolve.", "path": "tests/test_q.py"},
         QuestionRef)
    same({"text": "It drops the week unit.", "by": "explainer-model", "trials": ["t1", "t2"], "witness": "w1",
          "failing": "assert 'w' in units"}, Explanation)


def test_the_varied_replays_proof_keeps_its_own_key_order():
    message = f"{VARIED_MARK}: {ENV_DEPENDENT}: HOME differs"
    f = FindingInput("w1", "tests/test_w.py", "", "weeks", True, WitnessRun("passed"), WitnessRun("failed", message))
    [proof] = environment_proofs([f])
    assert isinstance(proof, ReplayProof) and list(proof.to_json()) == ["kind", "files", "tests", "message"]
    back = VerdictProof.from_json(json.loads(json.dumps(proof.to_json())))
    assert back == proof and list(back.to_json()) == list(proof.to_json())


def test_decisions_keep_everything_the_operator_and_the_reviewer_said():
    said = {"by": "operator", "decision": "overruled", "reviewer_label": "valid", "note": "reads P too broadly",
            "at": 12.5, "operator": {"requirement": "handles aliases", "explicit": False}}
    same(said, DecisionRecord)
    assert DecisionRecord.from_json(said).operator == OperatorJudgement("handles aliases", False, "")
    # Nothing stored: counted automatically, and said so.
    assert decision_record(None).to_json() == {"by": "auto", "decision": "auto", "reviewer_label": "", "note": "",
                                              "at": None}
    same(decision_record(None).to_json(), DecisionRecord)
    row = {"candidate_id": "c1", "case": "", "reviewer": "model-r", "reviewer_label": "valid",
           "reviewer_reason": "checks P's words", "decision": "judged", "label": "invalid", "counts": False,
           "by": "operator", "note": "not in P", "operator": {"quote": "It must..."}, "at": "2026-12-03 20:00:00Z"}
    same(row, TrialDecision)
    waiting = dict(row, decision="questionable-awaiting", by="queued", reviewer="", operator={}, at="",
                   label="questionable", note="waits for the operator")
    same(waiting, TrialDecision)
    assert TrialDecision.from_json(waiting).decision is Awaiting.QUESTIONABLE


def test_a_decision_stored_by_an_older_session_reads_unchanged():
    # Before the operator's own judgement was stored (no "operator"), and an approval row from
    # before the reviewer's label and the decision's kind were columns.
    older = {"by": "operator", "decision": "approved", "reviewer_label": "", "note": "fine by me", "at": 1700000000.0}
    same(older, DecisionRecord)
    row = ApprovalRecord("c1", "approval:c1", "slug", True, ReviewLabel.VALID, DecidedBy.OPERATOR, "fine by me",
                         at=1700000000.0)
    assert decision_record(row).to_json() == older
    stored_finding_decision = decision_record(row).to_json()
    assert DecisionRecord.from_json(stored_finding_decision).decision == DecisionKind.APPROVED


def test_an_unknown_word_is_one_line_naming_the_field():
    with pytest.raises(InputError, match="decision.by"):
        DecisionRecord.from_json({"by": "someone", "decision": "auto", "reviewer_label": "", "note": "", "at": None})
    with pytest.raises(InputError, match="proofs.kind"):
        VerdictProof.from_json({"kind": "hunch", "message": "", "files": [], "tests": {}})


def _verdict_with_everything() -> TrialReport:
    """A refuted trial's standing with a finding, proofs, signals, a ghost report, an ambiguous
    witness, decisions, an open question and mutation evidence."""
    tied = Signal("env_sniffing", "pytest_env_var", "slug.py", 3, "if 'PYTEST_CURRENT_TEST' in os.environ:",
                  "checks whether it runs under pytest", "high", True, value="PYTEST_CURRENT_TEST")
    ghost = GhostReport("slug", "t1", "coverage run", 10, 3, 4, 1, [GhostLine("slug.py", 7, "return 1")])
    evidence = Evidence("slug", "t1", [tied], ghost=ghost.to_dict(),
                        proofs=[{"kind": "canary", "message": "the junit report was forged"}])
    source = "from slug import f\n\ndef test_w():\n    assert f() == 2\n"
    f = FindingInput("w1", "tests/test_w.py", source, "weeks", True, WitnessRun("passed", "", "r" * 16),
                     WitnessRun("failed", "E   assert 1 == 2", "m" * 16), test_ids=("tests/test_w.py::test_w",),
                     approved_by=DecidedBy.OPERATOR, explained=Explanation("It returns 1.", "x", ("t1",), "w1"))
    amb = FindingInput("w2", "tests/test_a.py", "", "alias", False, WitnessRun("passed"), WitnessRun("failed"),
                       klass="ambiguous", rho=0.75)
    judged = judge_trial(TRIAL, findings=[f], ambiguous=[amb], evidence=evidence, audited=True)
    judged.findings = [Finding.from_json(dict(judged.findings[0].to_json(), decision=DecisionRecord(
        DecidedBy.OPERATOR, DecisionKind.APPROVED, ReviewLabel.VALID, "ok", 12.5).to_json()))]
    decision = TrialDecision("w1", "", "model-r", ReviewLabel.VALID, "fine", DecisionKind.APPROVED, ReviewLabel.VALID,
                             True, DecidedBy.OPERATOR, "ok", OperatorJudgement(explicit=True), "2026-12-03 20:00:00Z")
    return TrialReport.of(judged, state="refuted", decisions=[decision],
                          open_questions=[QuestionRef("c9", "aliases", ("operator: questionable",), "passed",
                                                      "Say it.", "tests/test_q.py")],
                          mutation=MutationReport(3, 3, 2, [Survivor("slug.py", 7, "const", "1", "2", False)]))


def test_a_trials_standing_reads_back_byte_for_byte():
    report = _verdict_with_everything()
    data = report.to_json()
    assert data["proofs"] and data["signals"] and data["ghost"]["ghost_lines"] and data["ambiguous"]
    assert data["findings"][0]["decision"]["decision"] == "approved"
    text = json.dumps(data, default=str)
    back = TrialReport.from_json(json.loads(text))
    assert json.dumps(back.to_json(), default=str) == text
    assert back.findings[0].tied_signals[0].value == "PYTEST_CURRENT_TEST"
    assert back.ghost is not None and back.ghost.ghost_lines == [GhostLine("slug.py", 7, "return 1")]
    assert back.decisions[0].operator == OperatorJudgement(explicit=True)
    # The keys every trial's report.json has always had, in their order.
    assert list(data) == ["task_id", "trial_id", "model", "agent", "label", "confidence", "justification",
                          "findings", "ambiguous", "detectors", "signals", "proofs", "evidence", "ghost", "audited",
                          "reproduced", "state", "mutation", "reference", "agent_audit", "reviews", "decisions",
                          "open_questions", "audit_failed", "refuted"]


def test_the_summary_keeps_every_judgement_awaiting_the_operator():
    waiting = AwaitingRow("c1", "slug", "t1", None, "weeks", "", ReviewLabel.QUESTIONABLE, "unsure")
    summary = SessionSummary("s", "finished", "b", "lightweight", 1, "random", 1, {}, Usage(0.0, 0, 0, False, 0, 0.0),
                             {}, {}, {}, [waiting])
    data = json.loads(json.dumps(summary.to_json()))
    assert data["awaiting_operator"] == [waiting.to_json()]
    assert SessionSummary.from_json(data).awaiting_operator == [waiting]
