import json

from recordkit.records import RecordSet


def test_meta_round_trips_through_json():
    rs = RecordSet([{"a": "1"}], meta={"s": 1})
    assert RecordSet.from_json(rs.to_json()).meta == {"s": 1}


def test_no_meta_json_document_unchanged():
    assert json.loads(RecordSet([{"a": "1"}]).to_json()) == {"fields": ["a"], "rows": [{"a": "1"}]}
