from recordkit.records import RecordSet


def test_where_keeps_meta():
    rs = RecordSet([{"id": "1", "ok": "y"}, {"id": "2", "ok": "n"}], meta={"source": "audit-log"})
    assert rs.where(lambda row: row["ok"] == "y").meta == {"source": "audit-log"}
