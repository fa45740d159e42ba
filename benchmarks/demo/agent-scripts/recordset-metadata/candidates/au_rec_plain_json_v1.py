import json

from recordkit.records import RecordSet


def test_meta_key_in_json():
    doc = json.loads(RecordSet([{"a": "1"}], meta={"s": 1}).to_json())
    assert doc["metadata"] == {"s": 1}


def test_no_meta_json_document_unchanged():
    assert json.loads(RecordSet([{"a": "1"}]).to_json()) == {"fields": ["a"], "rows": [{"a": "1"}]}
