import pytest

from recordkit.merge import deep_merge, flatten, merge_all, unflatten


def test_override_wins_for_scalars():
    assert deep_merge({"a": 1, "b": 2}, {"b": 3}) == {"a": 1, "b": 3}


def test_nested_mappings_are_merged():
    base = {"db": {"host": "localhost", "port": 5432}}
    override = {"db": {"port": 6543}}
    assert deep_merge(base, override) == {"db": {"host": "localhost", "port": 6543}}


def test_non_mapping_replaces_mapping():
    assert deep_merge({"a": {"b": 1}}, {"a": None}) == {"a": None}


def test_lists_are_replaced():
    assert deep_merge({"tags": ["a", "b"]}, {"tags": ["c"]}) == {"tags": ["c"]}


def test_inputs_are_not_modified():
    base = {"db": {"host": "localhost"}}
    override = {"db": {"port": 1}}
    deep_merge(base, override)
    assert base == {"db": {"host": "localhost"}}
    assert override == {"db": {"port": 1}}


def test_merge_all_layers_in_order():
    assert merge_all({"a": 1}, {"a": 2, "b": {"c": 1}}, {"b": {"d": 2}}) == {
        "a": 2,
        "b": {"c": 1, "d": 2},
    }


def test_merge_all_of_nothing_is_empty():
    assert merge_all() == {}


def test_flatten_and_unflatten_round_trip():
    config = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
    flat = flatten(config)
    assert flat == {"a.b": 1, "a.c.d": 2, "e": 3}
    assert unflatten(flat) == config


def test_flatten_custom_separator():
    assert flatten({"a": {"b": 1}}, sep="/") == {"a/b": 1}


def test_unflatten_conflict():
    with pytest.raises(ValueError):
        unflatten({"a": 1, "a.b": 2})
