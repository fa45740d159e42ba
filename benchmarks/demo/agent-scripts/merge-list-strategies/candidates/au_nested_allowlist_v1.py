from recordkit.merge import deep_merge


def test_nested_allow_list_is_extended():
    defaults = {"security": {"cors": {"origins": ["https://a.example"]}}}
    site = {"security": {"cors": {"origins": ["https://b.example"]}}}
    merged = deep_merge(defaults, site, lists="append")
    assert merged["security"]["cors"]["origins"] == ["https://a.example", "https://b.example"]
