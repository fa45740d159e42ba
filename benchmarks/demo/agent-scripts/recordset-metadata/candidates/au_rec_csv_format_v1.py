from recordkit.records import RecordSet


def test_meta_comment_format():
    text = RecordSet([{"id": "1"}], meta={"source": "x"}).to_csv()
    assert text.splitlines()[0] == '#source="x"'
