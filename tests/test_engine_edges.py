"""What crosses the engine's edges is read once into a record (docs/architecture.md, "Records
and JSON edges"): the session meta's corpus and config. Bad input is one line naming the file
and the field. (The labels file: tests/test_report.py.)"""
import json

import pytest

from testjack_tui.engine.config import Mode, SessionConfig
from testjack_tui.engine.corpus import CorpusTrial, corpus_meta, read_corpus
from testjack_tui.errors import InputError
from testjack_tui.model import Trial


def test_the_corpus_written_reads_back_as_records():
    trials = [Trial("t1", "task", "ag", "m1", "", True, 1.0), Trial("t2", "task", "ag", "m2", "", False, 0.0)]
    meta = {"corpus": corpus_meta({"task": trials})}
    assert meta["corpus"]["task"][0] == {"id": "t1", "model": "m1", "agent": "ag", "official_pass": True,
                                         "reward": 1.0}
    corpus = read_corpus(meta, "db")
    assert corpus.tasks == {"task": [CorpusTrial("t1", "m1", "ag", True, 1.0), CorpusTrial("t2", "m2", "ag", False, 0.0)]}
    # rho's population falls back on the corpus's passing trials when none was recorded
    assert corpus.passing_models("task") == {"t1": "m1"}
    meta["population"] = {"task": {"t1": "m1", "t9": "m9"}}
    assert read_corpus(meta, "db").passing_models("task") == {"t1": "m1", "t9": "m9"}
    assert read_corpus({}, "db").tasks == {}


@pytest.mark.parametrize("meta, field", [
    ({"corpus": ["t1"]}, "corpus"),
    ({"corpus": {"task": {"id": "t1"}}}, "corpus.task"),
    ({"corpus": {"task": [{"model": "m"}]}}, "corpus.task[0].id"),
    ({"corpus": {"task": [{"id": "t1", "model": 3}]}}, "corpus.task[0].model"),
    ({"corpus": {"task": [{"id": "t1", "reward": "high"}]}}, "corpus.task[0].reward"),
    ({"population": {"task": ["t1"]}}, "population.task"),
])
def test_a_bad_corpus_is_one_line_naming_the_database_and_field(meta, field):
    with pytest.raises(InputError) as err:
        read_corpus(meta, "/s/session.db")
    assert str(err.value).startswith(f"/s/session.db: {field}: ") and "\n" not in str(err.value)


def test_the_mode_is_a_strenum_of_the_words_files_hold():
    cfg = SessionConfig(benchmark="b", mode="per-trial")  # as the TUI's form gives it
    assert cfg.mode is Mode.PER_TRIAL and cfg.mode == "per-trial"
    assert json.dumps(cfg.to_dict()["mode"]) == '"per-trial"'
    assert [m.value for m in Mode] == ["lightweight", "per-trial"]
    with pytest.raises(InputError, match="session config: mode: must be one of lightweight, per-trial, got 'fast'"):
        SessionConfig(benchmark="b", mode="fast")


def test_a_stored_config_reads_back_as_written():
    """The summary shows the session's config as stored: the agents in the order given."""
    cfg = SessionConfig(benchmark="b", agents={"audit": "x", "task_analysis": "x", "reviewer": "y"})
    again = SessionConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg and json.dumps(again.to_dict()) == json.dumps(cfg.to_dict())
    assert SessionConfig.from_dict({"benchmark": "b", "agents": {"audit": "x"}}).agents == \
        {"audit": "x", "reviewer": "scripted", "task_analysis": "scripted"}


def test_what_no_reference_mode_recorded_reads_as_a_record():
    from testjack_tui.engine.no_reference import IndependentReference

    read = IndependentReference.from_meta
    assert read(None, "db", "k") is None
    assert read({"ok": True, "patch": "diff", "notes": "n", "attempts": 1}, "db", "k") == IndependentReference(True, "diff")
    assert read({"ok": False, "problem": "no", "attempts": 3, "patch": ""}, "db", "k") == \
        IndependentReference(False, "", "no")
    with pytest.raises(InputError) as err:
        read({"ok": True, "patch": 3}, "/s/session.db", "independent_reference:t")
    assert str(err.value).startswith("/s/session.db: independent_reference:t.patch: ")
