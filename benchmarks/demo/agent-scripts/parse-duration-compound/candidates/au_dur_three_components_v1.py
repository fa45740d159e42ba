import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("1h30m15s", 5415.0), ("2h5s", 7205.0), ("1d2h3m", 93780.0), ("3m 2s 1ms", 182.001)])
def test_any_combination_of_components(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)
