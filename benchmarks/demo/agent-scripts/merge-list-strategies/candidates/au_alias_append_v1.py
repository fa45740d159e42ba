import pytest

from recordkit.merge import deep_merge


def test_append_requires_lists_on_both_sides():
    with pytest.raises(TypeError):
        deep_merge({"p": ["a"]}, {"p": "b"}, lists="append")


def test_replaced_list_not_shared():
    override = {"p": ["b"]}
    merged = deep_merge({"p": ["a"]}, override)
    merged["p"].append("c")
    assert override == {"p": ["b"]}
