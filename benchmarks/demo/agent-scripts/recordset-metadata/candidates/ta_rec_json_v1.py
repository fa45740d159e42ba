import json

from recordkit.records import RecordSet

ROWS = [{"id": "1", "v": "a"}]


def test_json_round_trip_keeps_meta():
    rs = RecordSet(ROWS, meta={"source": "sensor-7", "unit": "C"})
    back = RecordSet.from_json(rs.to_json())
    assert back.meta == {"source": "sensor-7", "unit": "C"}
    assert back == rs


def test_json_without_meta_unchanged():
    assert json.loads(RecordSet(ROWS).to_json()) == {"fields": ["id", "v"], "rows": ROWS}
