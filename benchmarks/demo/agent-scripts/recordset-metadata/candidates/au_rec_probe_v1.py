from recordkit.records import RecordSet

ROWS = [{"id": "1", "team": "core"}, {"id": "2", "team": "web"}]
META = {"source": "hr", "count": 2, "teams": ["core", "web"]}


def test_every_path_keeps_meta():
    rs = RecordSet(ROWS, meta=META)
    assert rs.select("id").meta == META
    assert rs.where(lambda r: r["team"] == "core").meta == META
    assert RecordSet.from_csv(rs.to_csv()).meta == META
    assert RecordSet.from_json(rs.to_json()).meta == META


def test_equality_uses_meta():
    assert RecordSet(ROWS, meta={"a": 1}) != RecordSet(ROWS, meta={"a": 2})
    assert RecordSet(ROWS, meta={"a": 1}) == RecordSet(ROWS, meta={"a": 1})


def test_without_meta_output_unchanged():
    assert RecordSet(ROWS).to_csv() == "id,team\n1,core\n2,web\n"
