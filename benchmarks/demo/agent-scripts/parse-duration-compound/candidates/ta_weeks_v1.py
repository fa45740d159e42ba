import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("1w", 604800.0), ("2w 1d", 1296000.0), ("0.5w", 302400.0)])
def test_weeks(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_milliseconds_in_compound():
    assert parse_duration("1s 500ms") == pytest.approx(1.5)
