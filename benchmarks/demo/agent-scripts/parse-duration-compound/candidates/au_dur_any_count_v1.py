import pytest

from recordkit.durations import parse_duration


def test_all_units_in_one_duration():
    assert parse_duration("1w 2d 3h 4m 5s 6ms") == pytest.approx(604800 + 172800 + 10800 + 240 + 5 + 0.006)


def test_compact_three_components():
    assert parse_duration("1h30m15s") == 5415.0
