from recordkit.durations import parse_duration


def test_three_and_more_components():
    assert parse_duration("1h30m15s") == 5415.0
    assert parse_duration("1d 2h 3m 4s") == 93784.0
