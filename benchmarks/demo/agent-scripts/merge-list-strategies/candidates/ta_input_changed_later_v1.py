from recordkit.merge import deep_merge, merge_all


def test_changing_inputs_later_does_not_change_result():
    base = {"db": {"pool": {"size": 5}}, "hosts": ["a"]}
    override = {"db": {"pool": {"timeout": 3}}, "extra": {"k": [1]}}
    merged = deep_merge(base, override)
    base["db"]["pool"]["size"] = 99
    base["hosts"].append("z")
    override["extra"]["k"].append(2)
    assert merged == {"db": {"pool": {"size": 5, "timeout": 3}}, "hosts": ["a"], "extra": {"k": [1]}}


def test_merge_all_result_is_independent():
    defaults = {"db": {"pool": {"size": 5}}}
    cfg = merge_all(defaults, {"debug": True})
    cfg["db"]["pool"]["size"] = 50
    assert defaults == {"db": {"pool": {"size": 5}}}
