from recordkit.records import RecordSet


def test_handwritten_meta_comment_is_read():
    rs = RecordSet.from_csv("# source: census\nid\n1\n")
    assert rs.meta == {"source": "census"}


def test_meta_types_survive_csv():
    meta = {"year": 2021, "ratio": 0.5, "tags": ["a", "b"], "public": True, "note": None}
    back = RecordSet.from_csv(RecordSet([{"id": "1"}], meta=meta).to_csv())
    assert back.meta == meta
