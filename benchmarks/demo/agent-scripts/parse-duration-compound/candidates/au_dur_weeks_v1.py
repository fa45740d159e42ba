from recordkit.durations import parse_duration


def test_week_unit():
    assert parse_duration("2w") == 1209600.0
    assert parse_duration("1w 12h") == 648000.0
