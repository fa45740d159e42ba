from recordkit.records import RecordSet


def test_from_json_restores_meta():
    rs = RecordSet([{"k": "1"}, {"k": "2"}], meta={"licence": "CC-BY-4.0", "rows": 2})
    assert RecordSet.from_json(rs.to_json()).meta == {"licence": "CC-BY-4.0", "rows": 2}
