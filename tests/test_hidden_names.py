"""Candidate tests run under unpredictable names and come back under their own (no containers)."""
from __future__ import annotations

import ast

from testjack_tui.sandbox.api import TestOutcome as Outcome
from testjack_tui.sandbox.hidden_names import hide

SOURCE = '''import pytest


def helper():
    return 1


@pytest.mark.parametrize("n", [1, 2])
def test_parse_value(n):
    assert n


class TestMerge:
    def test_parse_value(self):
        assert helper()

    def not_a_test(self):
        pass
'''


def test_files_functions_and_classes_are_renamed_and_mapped_back():
    files = {"tests/test_witness.py": SOURCE, "tests/conftest.py": "X = 1\n", "tests/util.py": "Y = 2\n"}
    hidden, run_files = hide(files)
    run_path = hidden.paths["tests/test_witness.py"]
    assert run_path.startswith("tests/test_") and "witness" not in run_path
    # Helpers and conftest keep their names (they are imported by name).
    assert run_files["tests/conftest.py"] == "X = 1\n" and run_files["tests/util.py"] == "Y = 2\n"
    renamed = run_files[run_path]
    defined = {n.name for n in ast.walk(ast.parse(renamed)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert "test_parse_value" not in defined and "TestMerge" not in defined
    assert {"helper", "not_a_test"} <= defined
    ids = ["tests/test_witness.py::test_parse_value[1]", "tests/test_witness.py::TestMerge::test_parse_value",
           "tests/test_witness.py"]
    run_ids = [hidden.run_id(i) for i in ids]
    assert all("test_parse_value" not in r and "TestMerge" not in r for r in run_ids)
    assert run_ids[0].endswith("[1]")
    # What ran comes back under the author's names, messages included.
    new_fn = run_ids[0].split("::")[1].split("[")[0]
    outcomes = {r: Outcome(r, "failed", f"{run_path}:9: in {new_fn}\nassert 0") for r in run_ids}
    back = hidden.restore(outcomes)
    assert list(back) == ids
    assert back[ids[0]].message == "tests/test_witness.py:9: in test_parse_value\nassert 0"
    # Fresh names on every run.
    again, _ = hide(files)
    assert again.paths["tests/test_witness.py"] != run_path
    assert again.run_id(ids[1]) != run_ids[1]


def test_unparsable_file_is_renamed_but_left_as_written():
    hidden, run_files = hide({"test_broken.py": "def test_x(:\n"})
    assert list(run_files.values()) == ["def test_x(:\n"] and hidden.names == {}
