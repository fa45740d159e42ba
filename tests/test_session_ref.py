"""`report`, `export` and `resume` take the folder `audit --out` wrote as well as the session id:
on the real SWE-bench row (README, "Tried on a real SWE-bench row") `report OUT` was the first
thing tried and said "no session"."""
from __future__ import annotations

import json

from testjack_tui.engine.store import session_ref
from testjack_tui.paths import sessions_dir


def _session(name: str) -> None:
    folder = sessions_dir() / name
    folder.mkdir(parents=True)
    (folder / "session.db").write_bytes(b"")


def test_an_id_and_an_audit_out_folder_name_the_same_session(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path / "home"))
    _session("20261203-104723-05bcfc")
    out = tmp_path / "sess1"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"session_id": "20261203-104723-05bcfc"}))
    assert session_ref("20261203-104723-05bcfc") == "20261203-104723-05bcfc"
    assert session_ref(str(out)) == "20261203-104723-05bcfc"


def test_what_names_no_session_comes_back_as_given(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path / "home"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text("{not json")
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "summary.json").write_text(json.dumps({"session_id": "../../etc"}))
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "summary.json").write_text(json.dumps(["session_id"]))
    for ref in ("nope", str(bad), str(gone), str(listed), str(tmp_path / "missing")):
        assert session_ref(ref) == ref


def test_an_operator_reviewing_shows_no_placeholder_reviewer_label():
    """With the operator as reviewer (`--agent operator`), the reviewer's own label is a
    placeholder while it waits ("questionable"): the flask-5014 report said "the reviewer said
    questionable" of witnesses nobody else reviewed. An overrule still names what was overruled."""
    from testjack_tui.engine.records_cands import DecidedBy, DecisionKind
    from testjack_tui.engine.records_verdict import DecisionRecord
    from testjack_tui.engine.report_render import decision_line
    from testjack_tui.engine.roles import ReviewLabel

    judged = decision_line(DecisionRecord(DecidedBy.OPERATOR, DecisionKind.JUDGED, ReviewLabel.QUESTIONABLE,
                                          "P, line 2"))
    assert judged == "Decision: judged valid by the operator (as reviewer): P, line 2"
    overruled = decision_line(DecisionRecord(DecidedBy.OPERATOR, DecisionKind.OVERRULED, ReviewLabel.INVALID))
    assert overruled == "Decision: OVERRULED by the operator (the reviewer said invalid)."
