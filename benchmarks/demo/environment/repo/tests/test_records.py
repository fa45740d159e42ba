import io

import pytest

from recordkit.records import RecordSet

ROWS = [
    {"id": "1", "name": "ada", "team": "core"},
    {"id": "2", "name": "linus", "team": "kernel"},
    {"id": "3", "name": "grace", "team": "core"},
]


def test_fields_follow_first_appearance():
    rs = RecordSet([{"b": 1}, {"a": 2, "b": 3}])
    assert rs.fields == ["b", "a"]
    assert rs.rows == [{"b": 1, "a": None}, {"b": 3, "a": 2}]


def test_select_keeps_order_of_arguments():
    rs = RecordSet(ROWS).select("name", "id")
    assert rs.fields == ["name", "id"]
    assert rs.rows[0] == {"name": "ada", "id": "1"}


def test_select_unknown_field():
    with pytest.raises(KeyError):
        RecordSet(ROWS).select("age")


def test_where_filters_rows():
    rs = RecordSet(ROWS).where(lambda row: row["team"] == "core")
    assert [row["name"] for row in rs] == ["ada", "grace"]
    assert rs.fields == ["id", "name", "team"]


def test_to_csv_text():
    text = RecordSet(ROWS[:2]).to_csv()
    assert text == "id,name,team\n1,ada,core\n2,linus,kernel\n"


def test_to_csv_file_object():
    buf = io.StringIO()
    assert RecordSet(ROWS[:1]).to_csv(buf) is None
    assert buf.getvalue() == "id,name,team\n1,ada,core\n"


def test_csv_round_trip():
    rs = RecordSet(ROWS)
    assert RecordSet.from_csv(rs.to_csv()) == rs


def test_csv_empty_cells_are_none():
    rs = RecordSet.from_csv("a,b\n1,\n")
    assert rs.rows == [{"a": "1", "b": None}]


def test_json_round_trip():
    rs = RecordSet(ROWS)
    assert RecordSet.from_json(rs.to_json()) == rs


def test_json_document_shape():
    import json

    data = json.loads(RecordSet(ROWS[:1]).to_json())
    assert data == {"fields": ["id", "name", "team"], "rows": [ROWS[0]]}


def test_from_json_rejects_other_documents():
    with pytest.raises(ValueError):
        RecordSet.from_json('{"data": []}')
