from recordkit.records import RecordSet


def test_csv_meta_number_stays_number():
    rs = RecordSet([{"id": "1"}], meta={"version": 3, "verified": False, "columns": ["id"]})
    back = RecordSet.from_csv(rs.to_csv())
    assert back.meta == {"version": 3, "verified": False, "columns": ["id"]}
