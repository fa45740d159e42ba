from recordkit.merge import deep_merge, merge_all


def test_append_applies_to_nested_lists():
    base = {"server": {"tls": {"ciphers": ["a"]}}}
    override = {"server": {"tls": {"ciphers": ["b"]}}}
    assert deep_merge(base, override, lists="append") == {"server": {"tls": {"ciphers": ["a", "b"]}}}


def test_unique_applies_to_nested_lists():
    base = {"auth": {"allow": ["x", "y"]}}
    override = {"auth": {"allow": ["y", "z"]}}
    assert deep_merge(base, override, lists="unique") == {"auth": {"allow": ["x", "y", "z"]}}
