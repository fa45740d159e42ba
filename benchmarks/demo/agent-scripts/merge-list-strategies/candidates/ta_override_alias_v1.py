from recordkit.merge import deep_merge


def test_sections_taken_from_override_are_copies():
    override = {"cache": {"ttl": 30, "hosts": ["a"]}}
    merged = deep_merge({"debug": False}, override)
    merged["cache"]["ttl"] = 0
    merged["cache"]["hosts"].append("b")
    assert override == {"cache": {"ttl": 30, "hosts": ["a"]}}


def test_replaced_list_is_a_copy():
    override = {"plugins": ["metrics"]}
    merged = deep_merge({"plugins": ["auth"]}, override, lists="replace")
    merged["plugins"].append("tracing")
    assert override == {"plugins": ["metrics"]}
