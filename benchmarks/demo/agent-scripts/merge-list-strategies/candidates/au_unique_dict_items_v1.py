from recordkit.merge import deep_merge


def test_unique_with_dict_items():
    base = {"routes": [{"path": "/a"}]}
    override = {"routes": [{"path": "/a"}, {"path": "/b"}]}
    assert deep_merge(base, override, lists="unique") == {"routes": [{"path": "/a"}, {"path": "/b"}]}
