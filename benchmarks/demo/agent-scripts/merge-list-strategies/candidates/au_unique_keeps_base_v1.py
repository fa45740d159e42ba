from recordkit.merge import deep_merge


def test_unique_only_skips_override_items_already_present():
    base = {"hosts": ["a", "a", "b"]}
    override = {"hosts": ["b", "c"]}
    assert deep_merge(base, override, lists="unique") == {"hosts": ["a", "a", "b", "c"]}
