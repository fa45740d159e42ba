from recordkit.merge import deep_merge


def test_unique_leaves_existing_base_items_alone():
    assert deep_merge({"p": [1, 1]}, {"p": [2]}, lists="unique") == {"p": [1, 1, 2]}
