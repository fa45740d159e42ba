from recordkit.records import RecordSet

META = {"year": 2021, "ratio": 0.5, "tags": ["a", "b"], "public": True, "note": None, "units": {"t": "C"}}


def test_meta_types_survive_csv():
    back = RecordSet.from_csv(RecordSet([{"id": "1"}], meta=META).to_csv())
    assert back.meta == META
    assert type(back.meta["year"]) is int


def test_meta_types_survive_json():
    back = RecordSet.from_json(RecordSet([{"id": "1"}], meta=META).to_json())
    assert back.meta == META
