from recordkit.merge import deep_merge


def test_scalar_override_replaces_list_under_append():
    assert deep_merge({"p": ["a"]}, {"p": "b"}, lists="append") == {"p": "b"}


def test_replaced_list_not_shared():
    override = {"p": ["b"]}
    merged = deep_merge({"p": ["a"]}, override)
    merged["p"].append("c")
    assert override == {"p": ["b"]}


def test_new_section_from_override_not_shared():
    override = {"new": {"k": 1}}
    merged = deep_merge({}, override, lists="unique")
    merged["new"]["k"] = 2
    assert override == {"new": {"k": 1}}
