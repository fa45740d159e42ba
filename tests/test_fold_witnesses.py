"""Witnesses appended to a T0 file (official exports) keep every test's meaning."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from testjack_tui.engine.fold_witnesses import fold_into, renamed_id

HOST = textwrap.dedent('''\
    import json

    ROWS = [{"id": "1", "city": "Lyon"}]


    def test_host_rows():
        assert ROWS[0]["city"] == "Lyon"
''')

W1 = textwrap.dedent('''\
    from __future__ import annotations

    import json

    ROWS = [{"id": "1", "v": "a"}]


    def _shape(rows=ROWS):
        return sorted(rows[0])


    def test_host_rows():
        assert _shape() == ["id", "v"]


    def test_w1():
        assert json.loads(json.dumps(ROWS)) == ROWS and dict(rows=1)["rows"] == 1
''')

W2 = textwrap.dedent('''\
    import os.path
    from json import loads as json

    ROWS = [{"id": "2", "team": "core"}]


    def _shape(rows):
        return len(rows)


    class TestW2:
        def test_team(self):
            assert ROWS[0]["team"] == "core" and _shape(ROWS) == 1 and json("[1]") == [1]
            assert os.path.basename("/a/b") == "b"
''')


def test_clashing_top_level_names_are_renamed_per_witness_and_every_test_keeps_its_meaning(tmp_path):
    folded = fold_into(HOST, [("w1", "keeps v", W1), ("w/2", "teams", W2)])
    assert folded.renamed["w1"] == {"ROWS": "ROWS_tj_w1", "test_host_rows": "test_host_rows_tj_w1"}
    assert folded.renamed["w/2"] == {"ROWS": "ROWS_tj_w_2", "_shape": "_shape_tj_w_2", "json": "json_tj_w_2"}
    assert folded.text.startswith(HOST)  # T0's own lines are untouched
    assert "# --- TestJack witness w1: keeps v" in folded.text
    assert "from __future__" not in folded.text  # it may only open a module
    assert "dict(rows=1)" in folded.text  # keyword arguments keep their names
    path = tmp_path / "test_host.py"
    path.write_text(folded.text)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and "4 passed" in proc.stdout, proc.stdout


def test_pasted_as_they_are_the_same_witnesses_break_t0():
    # What the fold prevents: the last ROWS wins for every test in the module.
    ns: dict = {}
    exec(compile(HOST + W2, "m", "exec"), ns)
    try:
        ns["test_host_rows"]()
    except KeyError:
        pass
    else:
        raise AssertionError("a pasted witness no longer rebinds the host's names")


def test_ids_follow_their_witness_renames():
    renames = {"test_host_rows": "test_host_rows_tj_w1", "TestW2": "TestW2_tj_w"}
    assert renamed_id("tests/t.py::test_host_rows[1-2]", renames) == "tests/t.py::test_host_rows_tj_w1[1-2]"
    assert renamed_id("tests/t.py::TestW2::test_team", renames) == "tests/t.py::TestW2_tj_w::test_team"
    assert renamed_id("tests/t.py::test_other", renames) == "tests/t.py::test_other"


def test_identical_bindings_are_shared_and_a_broken_witness_is_appended_as_it_is():
    folded = fold_into(HOST, [("w3", "", "import json\n\ndef test_x():\n    assert json\n"),
                              ("w4", "", "def broken(:\n")])
    assert "w3" not in folded.renamed and folded.text.count("import json") == 2
    assert folded.text.endswith("def broken(:\n")
