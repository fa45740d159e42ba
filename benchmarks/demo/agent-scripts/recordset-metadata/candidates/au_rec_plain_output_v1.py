import io
import json

from recordkit.records import RecordSet

ROWS = [{"id": "1", "name": "ada", "team": "core"}, {"id": "2", "name": "linus", "team": "kernel"}]


def test_csv_without_meta_is_byte_identical():
    assert RecordSet(ROWS).to_csv() == "id,name,team\n1,ada,core\n2,linus,kernel\n"
    buf = io.StringIO()
    RecordSet(ROWS[:1]).to_csv(buf)
    assert buf.getvalue() == "id,name,team\n1,ada,core\n"


def test_json_without_meta_has_same_document():
    assert json.loads(RecordSet(ROWS[:1]).to_json()) == {"fields": ["id", "name", "team"], "rows": ROWS[:1]}
