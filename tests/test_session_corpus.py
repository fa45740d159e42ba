"""The session meta's corpus and the labels file are read once, into records; bad input is one
line naming the file and the field."""
import pytest

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
