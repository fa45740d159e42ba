from recordkit.merge import deep_merge


def test_result_lists_do_not_alias_override():
    override = {"allow": ["10.0.0.0/8"], "limits": {"rps": 10}}
    merged = deep_merge({"allow": ["127.0.0.1"]}, override)
    merged["allow"].append("0.0.0.0/0")
    merged["limits"]["rps"] = 1000
    assert override == {"allow": ["10.0.0.0/8"], "limits": {"rps": 10}}
