import pytest

from recordkit.merge import deep_merge, merge_all


@pytest.mark.parametrize("lists, expected", [("replace", ["y"]), ("append", ["x", "y"]), ("unique", ["x", "y"])])
def test_strategies_in_nested_sections(lists, expected):
    assert deep_merge({"s": {"l": ["x"]}}, {"s": {"l": ["y"]}}, lists=lists) == {"s": {"l": expected}}


def test_merge_all_passes_strategy_through_layers():
    assert merge_all({"l": [1]}, {"l": [2]}, {"l": [3]}, lists="append") == {"l": [1, 2, 3]}


def test_no_sharing_at_depth():
    base = {"a": {"b": {"c": [1]}}}
    override = {"d": {"e": [2]}}
    merged = deep_merge(base, override, lists="append")
    merged["a"]["b"]["c"].append(9)
    merged["d"]["e"].append(9)
    assert base == {"a": {"b": {"c": [1]}}} and override == {"d": {"e": [2]}}
