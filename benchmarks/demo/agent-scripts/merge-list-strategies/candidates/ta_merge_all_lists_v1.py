import pytest

from recordkit.merge import merge_all


def test_merge_all_append():
    assert merge_all({"p": ["a"]}, {"p": ["b"]}, {"p": ["c"]}, lists="append") == {"p": ["a", "b", "c"]}


def test_merge_all_unique():
    assert merge_all({"p": ["a", "a"]}, {"p": ["b"]}, {"p": ["a"]}, lists="unique") == {"p": ["a", "b"]}


def test_merge_all_rejects_unknown_strategy():
    with pytest.raises(ValueError):
        merge_all({"p": ["a"]}, {"p": ["b"]}, lists="merge")
