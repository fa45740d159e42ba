from recordkit.records import RecordSet


def test_filtered_set_keeps_meta_and_fields():
    rs = RecordSet([{"t": "21"}, {"t": "35"}], meta={"units": {"t": "C"}})
    hot = rs.where(lambda r: int(r["t"]) > 30)
    assert hot.rows == [{"t": "35"}]
    assert hot.meta == {"units": {"t": "C"}}
